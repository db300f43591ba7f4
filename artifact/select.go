package artifact

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Query selects episodes for episodes:QUERY. It is a small documented
// filter over the index rows of every life (docs/ARTIFACTS.md), its own:
// tag:, action:, steps:, life: and last: are named as in the cue query
// language (index/query, docs/QUERY.md), but it is not a subset of it (a
// word is a substring of the raw row, not a whole word; every life is
// searched without life:; kind: and id: are its own). Space-separated
// terms that must all hold —
//
//	all or *            every episode
//	tag:T               rows tagged T (repeated: every tag)
//	action:A            rows whose action_kind is A (repeated: any of them)
//	kind:K              initial | episode
//	steps:A..B          step interval overlapping [A, B]
//	life:N or life:A..B the life (1-based; the current life is the highest)
//	ep_NNNNNN, id:ID    that episode in every life (repeated: any of them)
//	last:N              the last N matches (over all lives, in order)
//	WORD                case-insensitive substring of the raw row
type Query struct {
	Src    string
	all    bool
	tags   []string
	action []string
	kind   string
	steps  *[2]int64
	life   *[2]int
	ids    []string
	words  [][]byte
	last   int
}

// ParseQuery parses an episodes: query.
func ParseQuery(s string) (*Query, error) {
	q := &Query{Src: s}
	terms := strings.Fields(s)
	if len(terms) == 0 {
		return nil, fmt.Errorf("episodes query is empty (want all, tag:T, action:A, steps:A..B, life:N, ep_NNNNNN, last:N or words)")
	}
	for _, t := range terms {
		key, val, has := strings.Cut(t, ":")
		if !has {
			switch {
			case t == "all" || t == "*":
				q.all = true
			case strings.HasPrefix(t, "ep_"):
				if _, ok := episodes.ParseEpisodeID(t); !ok {
					return nil, fmt.Errorf("episodes query: %q is not an episode id (ep_NNNNNN)", t)
				}
				q.ids = append(q.ids, t)
			default:
				q.words = append(q.words, bytes.ToLower([]byte(t)))
			}
			continue
		}
		bad := func(want string) error {
			return fmt.Errorf("episodes query: %q: want %s", t, want)
		}
		switch key {
		case "tag":
			q.tags = append(q.tags, val)
		case "action":
			q.action = append(q.action, val)
		case "kind":
			q.kind = val
		case "id":
			if _, ok := episodes.ParseEpisodeID(val); !ok {
				return nil, bad("id:ep_NNNNNN")
			}
			q.ids = append(q.ids, val)
		case "steps":
			a, b, ok := strings.Cut(val, "..")
			x, e1 := strconv.ParseInt(a, 10, 64)
			y, e2 := strconv.ParseInt(b, 10, 64)
			if !ok || e1 != nil || e2 != nil {
				return nil, bad("steps:A..B with integers")
			}
			q.steps = &[2]int64{min(x, y), max(x, y)}
		case "life":
			a, b, rng := strings.Cut(val, "..")
			x, e1 := strconv.Atoi(a)
			y := x
			var e2 error
			if rng {
				y, e2 = strconv.Atoi(b)
			}
			if e1 != nil || e2 != nil || x < 1 || y < 1 {
				return nil, bad("life:N or life:A..B (lives count from 1)")
			}
			q.life = &[2]int{min(x, y), max(x, y)}
		case "last":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return nil, bad("last:N with N ≥ 1")
			}
			q.last = n
		default:
			return nil, fmt.Errorf("episodes query: unknown filter %q (want tag, action, kind, id, steps, life, last)", key+":")
		}
	}
	return q, nil
}

// Match reports whether row of life holds every term but last:.
func (q *Query) Match(r *episodes.Row, life int) bool {
	if q.life != nil && (life < q.life[0] || life > q.life[1]) {
		return false
	}
	for _, t := range q.tags {
		if !r.HasTag(t) {
			return false
		}
	}
	if len(q.action) > 0 {
		found := false
		for _, a := range q.action {
			found = found || r.Action() == a
		}
		if !found {
			return false
		}
	}
	if q.kind != "" && r.Kind != q.kind {
		return false
	}
	if q.steps != nil && (r.LastStep < q.steps[0] || r.FirstStep > q.steps[1]) {
		return false
	}
	if len(q.ids) > 0 {
		found := false
		for _, id := range q.ids {
			found = found || r.ID == id
		}
		if !found {
			return false
		}
	}
	if len(q.words) > 0 {
		low := bytes.ToLower(r.Raw)
		for _, w := range q.words {
			if !bytes.Contains(low, w) {
				return false
			}
		}
	}
	return true
}

// Pick is one selected row and its life.
type Pick struct {
	Life int
	Row  episodes.Row
}

// Select applies the query to the rows of every life (in life order) and
// then last:.
func (q *Query) Select(lives []episodes.Life) ([]Pick, error) {
	var out []Pick
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if q.Match(&rows[i], l.N) {
				out = append(out, Pick{Life: l.N, Row: rows[i]})
			}
		}
	}
	if q.last > 0 && len(out) > q.last {
		out = out[len(out)-q.last:]
	}
	return out, nil
}
