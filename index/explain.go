package index

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// Explain answers the query s over the store by a scan and says, term by
// term, how many episodes were still matching after it and what the term
// was read as (the q/<query>/explain file). Terms are shown in the order
// the query is answered: the lives first (life:), then the row terms as
// written, then in:mine (through cites), then last:. A term that leaves
// nothing gets a hint from the episodes it was given: the nearest one for
// near:, the range of y or steps, the commonest tags, action kinds or
// event words. A malformed query is an error (query.Error), and so is an
// agent: term: other agents' rows are explained by a shared mount
// (ExplainSources).
func Explain(ctx context.Context, s *episodes.Store, text string, cites CiteFunc) ([]byte, error) {
	q, _, err := query.ParseTerms(text)
	if err != nil {
		return nil, err
	}
	if q.Agent != "" || q.AllAgents {
		return nil, &query.Error{Term: "agent:", Msg: "other agents' episodes are explained on a shared mount (mfmd mount --shared …); this explains your own store"}
	}
	src, err := StoreSource(s, "")
	if err != nil {
		return nil, err
	}
	return ExplainSources(ctx, text, []ExplainSource{src}, cites)
}

// ExplainSource is one agent's rows to explain a query over: its lives,
// oldest first (the last is its current life).
type ExplainSource struct {
	Agent string // "" for the store's own agent
	Lives []ExplainLife
}

// ExplainLife is one life of an ExplainSource.
type ExplainLife struct {
	N      int
	Index  string // its index.jsonl
	Prefix string // the directory its episodes/ is in, relative to the mount ("" for the store root)
}

// StoreSource is the ExplainSource of a store's own rows.
func StoreSource(s *episodes.Store, agent string) (ExplainSource, error) {
	lives, err := s.Lives()
	if err != nil {
		return ExplainSource{}, fmt.Errorf("explain: %w", err)
	}
	src := ExplainSource{Agent: agent}
	for _, l := range lives {
		prefix, err := LifePrefix(s, l)
		if err != nil {
			return ExplainSource{}, err
		}
		src.Lives = append(src.Lives, ExplainLife{N: l.N, Index: l.IndexPath(), Prefix: prefix})
	}
	return src, nil
}

// ExplainSources is Explain over the rows of several agents (a shared
// mount's agent:NAME or agent:all): each agent's lives are chosen by the
// query's life: terms against that agent's own current life.
func ExplainSources(ctx context.Context, text string, sources []ExplainSource, cites CiteFunc) ([]byte, error) {
	q, terms, err := query.ParseTerms(text)
	if err != nil {
		return nil, err
	}
	e := newExplainer(q, terms)
	for _, src := range sources {
		if len(src.Lives) == 0 {
			continue
		}
		current := src.Lives[len(src.Lives)-1].N
		for _, l := range src.Lives {
			wanted := q.WantsLife(l.N, current)
			_, err = episodes.ReadRows(l.Index, 0, func(r episodes.Row, _ episodes.Line) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				e.row(&r, wanted, l.Prefix)
				return nil
			}, nil)
			if err != nil {
				return nil, fmt.Errorf("explain: %slife %d: %w", agentLabel(src.Agent), l.N, err)
			}
		}
	}
	var cs []Cite
	if q.InMine {
		if cites == nil {
			return nil, fmt.Errorf("explain: in:mine is not available here (no citation source)")
		}
		if cs, err = cites(ctx); err != nil {
			return nil, fmt.Errorf("explain: in:mine: %w", err)
		}
	}
	return e.render(text, sources, cs), nil
}

func agentLabel(agent string) string {
	if agent == "" {
		return ""
	}
	return agent + "'s "
}

// explainer counts, for one query, the rows each stage lets through.
type explainer struct {
	q     *query.Query
	terms []query.Term
	rowAt []int // indices into terms of the row terms, in written order

	all, lives int          // rows in every life, rows of the wanted lives
	passed     []int        // passed[k]: rows of the wanted lives through row term k
	hints      []*stageHint // hints[k]: what reached row term k
	survivors  []string     // episode dirs through every row term (for in:mine)
}

func newExplainer(q *query.Query, terms []query.Term) *explainer {
	e := &explainer{q: q, terms: terms}
	for i, t := range terms {
		if q.RowTerm(t) {
			e.rowAt = append(e.rowAt, i)
			e.hints = append(e.hints, newStageHint(q, t))
		}
	}
	e.passed = make([]int, len(e.rowAt))
	return e
}

// row counts one index row through the stages.
func (e *explainer) row(r *episodes.Row, wanted bool, prefix string) {
	e.all++
	if !wanted {
		return
	}
	e.lives++
	for k, i := range e.rowAt {
		e.hints[k].add(r)
		if !e.q.MatchTerm(e.terms[i], r) {
			return
		}
		e.passed[k]++
	}
	if e.q.InMine {
		e.survivors = append(e.survivors, EpisodeDir(prefix, r))
	}
}

// render writes the explanation.
func (e *explainer) render(text string, sources []ExplainSource, cs []Cite) []byte {
	q := e.q
	var b bytes.Buffer
	fmt.Fprintf(&b, "explain: %s\n", text)
	b.WriteString("Each term in the order the query is answered (lives first, then the row terms as\n")
	b.WriteString("written, then in:mine, then last:), the episodes still matching after it (→ N), and\n")
	b.WriteString("what the term was read as.\n\n")

	fmt.Fprintf(&b, "start → %d  (index rows %s)\n", e.all, sourcesText(sources))
	many := false // an agent with more than one life
	for _, src := range sources {
		many = many || len(src.Lives) > 1
	}
	n := e.lives
	lifeTerm := false
	for _, t := range e.terms {
		if t.Key == "life" {
			fmt.Fprintf(&b, "%s → %d  (%s)\n", t.Text, n, q.Describe(t))
			lifeTerm = true
		}
	}
	if !lifeTerm && many {
		fmt.Fprintf(&b, "(no life: term) → %d  (%s only; life:N or life:all for earlier lives)\n", n, currentText(sources))
	}

	k := 0
	for _, t := range e.terms {
		switch {
		case q.RowTerm(t):
			before := n
			n = e.passed[k]
			fmt.Fprintf(&b, "%s → %d  (%s)\n", t.Text, n, q.Describe(t))
			if h := e.hints[k].text(before, n); h != "" {
				fmt.Fprintf(&b, "    %s\n", h)
			}
			k++
		case t.Key == "" && q.InMine:
			// the words filter nothing here: they apply to the citing notes
			fmt.Fprintf(&b, "%s → %d  (with in:mine, words match your notes: applied at in:mine below; %s)\n", t.Text, n, q.Describe(t))
		case t.Key == "" || t.Key == "r":
			fmt.Fprintf(&b, "%s → %d  (%s)\n", t.Text, n, q.Describe(t))
		case t.Key == "agent":
			fmt.Fprintf(&b, "%s → %d  (%s: start counts those rows only)\n", t.Text, n, q.Describe(t))
		}
	}
	if q.InMine {
		cited := map[string]bool{}
		for _, c := range cs {
			if query.ContainsWords(q.Words, []string{c.Line}) {
				cited[path.Clean(c.Dir)] = true
			}
		}
		n = 0
		for _, d := range e.survivors {
			if cited[path.Clean(d)] {
				n++
			}
		}
		words := "none: every citation counts"
		if len(q.Words) > 0 {
			var ws []string
			for _, w := range q.Words {
				ws = append(ws, strconv.Quote(strings.Join(w, " ")))
			}
			words = "the words " + strings.Join(ws, " ")
		}
		fmt.Fprintf(&b, "in:mine → %d  (%s, here %s; %d citation(s) of existing episodes in mine/, %d episode(s) cited with the words)\n",
			n, q.Describe(query.Term{Key: "in"}), words, len(cs), len(cited))
	}
	for _, t := range e.terms {
		if t.Key == "last" {
			n = min(n, q.Last)
			fmt.Fprintf(&b, "%s → %d  (%s)\n", t.Text, n, q.Describe(t))
		}
	}
	fmt.Fprintf(&b, "\ncount: %d\n", n)
	return b.Bytes()
}

// sourcesText says whose rows and which lives start counts.
func sourcesText(sources []ExplainSource) string {
	var parts []string
	for _, src := range sources {
		if len(src.Lives) == 0 {
			continue
		}
		cur := src.Lives[len(src.Lives)-1].N
		t := fmt.Sprintf("life %d, the current life", cur)
		if len(src.Lives) > 1 {
			t = fmt.Sprintf("%d lives, life %d the current one", len(src.Lives), cur)
		}
		if src.Agent != "" {
			t = src.Agent + ": " + t
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "of no agent"
	}
	return "in " + strings.Join(parts, "; ")
}

// currentText names the current life of each source.
func currentText(sources []ExplainSource) string {
	var parts []string
	for _, src := range sources {
		if len(src.Lives) == 0 {
			continue
		}
		cur := src.Lives[len(src.Lives)-1].N
		if src.Agent == "" {
			parts = append(parts, fmt.Sprintf("the current life, life %d,", cur))
		} else {
			parts = append(parts, fmt.Sprintf("%s's current life, life %d,", src.Agent, cur))
		}
	}
	return strings.Join(parts, " and ")
}

// stageHint gathers, from the rows a row term was given, what helps when
// it leaves few or none: the nearest row (near:), the range of y or steps
// or times, the commonest tags, action kinds or event words.
type stageHint struct {
	q   *query.Query
	key string

	seen           int
	swapped        int // rows near: keeps when its y and z are swapped
	nearest        *episodes.Row
	nearestD       float64
	lo, hi         float64
	loStep, hiStep int64
	loTime, hiTime string
	counts         map[string]int
}

func newStageHint(q *query.Query, t query.Term) *stageHint {
	return &stageHint{q: q, key: t.Key, counts: map[string]int{}, nearestD: math.Inf(1), lo: math.Inf(1), hi: math.Inf(-1), loStep: math.MaxInt64, hiStep: math.MinInt64}
}

func (h *stageHint) add(r *episodes.Row) {
	h.seen++
	switch h.key {
	case "near":
		n := h.q.Near
		dx, dy, dz := r.X-n.X, r.Y-n.Y, r.Z-n.Z
		d := dx*dx + dz*dz
		if n.ThreeD {
			d += dy * dy
			sx, sy, sz := r.X-n.X, r.Y-n.Z, r.Z-n.Y
			if sx*sx+sy*sy+sz*sz <= n.R*n.R {
				h.swapped++
			}
		}
		if d = math.Sqrt(d); d < h.nearestD {
			h.nearestD = d
			c := *r
			c.Raw = nil
			h.nearest = &c
		}
	case "y":
		h.lo, h.hi = min(h.lo, r.Y), max(h.hi, r.Y)
	case "steps":
		h.loStep, h.hiStep = min(h.loStep, r.FirstStep), max(h.hiStep, r.LastStep)
	case "since", "until":
		if r.Time != "" {
			if h.loTime == "" || r.Time < h.loTime {
				h.loTime = r.Time
			}
			if r.Time > h.hiTime {
				h.hiTime = r.Time
			}
		}
	case "tag":
		for _, t := range r.Tags {
			h.counts[t]++
		}
	case "action":
		if a := r.Action(); a != "" {
			h.counts[a]++
		}
	case "event":
		for _, ev := range r.Events {
			if f := query.Tokens(ev); len(f) > 0 {
				h.counts[f[0]]++
			}
		}
	}
}

// text is the hint for a stage that was given before rows and kept
// after: always the nearest row for near:, otherwise only when it kept
// none of them.
func (h *stageHint) text(before, after int) string {
	if h.seen == 0 {
		return ""
	}
	if h.key == "near" && h.nearest != nil {
		r, n := h.nearest, h.q.Near
		s := fmt.Sprintf("the nearest of the %d before it: %s, %.1f away, at x=%s y=%s z=%s", before, r.ID, h.nearestD, coord(r.X), coord(r.Y), coord(r.Z))
		if after == 0 && n.ThreeD && h.swapped > 0 {
			s += fmt.Sprintf("\n    written near:%s,%s,%s (y second) it would keep %d", num(n.X), num(n.Z), num(n.Y), h.swapped)
		}
		return s
	}
	if after > 0 {
		return ""
	}
	switch h.key {
	case "y":
		return fmt.Sprintf("the %d before it have y from %s to %s", before, coord(h.lo), coord(h.hi))
	case "steps":
		return fmt.Sprintf("the %d before it cover steps %d..%d", before, h.loStep, h.hiStep)
	case "since", "until":
		if h.loTime == "" {
			return fmt.Sprintf("none of the %d before it has a time", before)
		}
		return fmt.Sprintf("the %d before it were recorded from %s to %s", before, h.loTime, h.hiTime)
	case "tag":
		return "tags of the ones before it: " + topCounts(h.counts, 10)
	case "action":
		return "action kinds of the ones before it: " + topCounts(h.counts, 10)
	case "event":
		if len(h.counts) == 0 {
			return fmt.Sprintf("none of the %d before it has an event line", before)
		}
		return "first words of their event lines: " + topCounts(h.counts, 10)
	}
	return ""
}

func coord(f float64) string { return fmt.Sprintf("%.1f", f) }

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// topCounts lists the n commonest keys with their counts ("placed 12, note 3").
func topCounts(m map[string]int, n int) string {
	if len(m) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for i, k := range keys {
		if i == n {
			parts = append(parts, fmt.Sprintf("… %d more", len(keys)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
