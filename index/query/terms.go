package query

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// Term is one term of a query as it was written, in order (ParseTerms).
type Term struct {
	// Text is the term as written: tag:stuck, near:-69,185, "fall damage".
	Text string
	// Key is the term's key without the colon (tag, -tag, near, r, …),
	// "" for a free word or a "phrase".
	Key string
	// i indexes the Query slice the term added to (Words, Tags, NotTags,
	// Events); 0 for the other keys.
	i int
}

// written is the Term that t, just added to p.q, became.
func (p *parser) written(t term) Term {
	q := p.q
	if t.quoted {
		return Term{Text: `"` + t.text + `"`, i: len(q.Words) - 1}
	}
	key, _, hasKey := strings.Cut(t.text, ":")
	if !hasKey {
		return Term{Text: t.text, i: len(q.Words) - 1}
	}
	w := Term{Text: t.text, Key: key}
	switch key {
	case "tag":
		w.i = len(q.Tags) - 1
	case "-tag":
		w.i = len(q.NotTags) - 1
	case "event":
		w.i = len(q.Events) - 1
	}
	return w
}

// RowTerm reports whether t is decided on each index row on its own (a
// word, tag:, -tag:, action:, event:, steps:, near:, y:, since:, until:);
// life:, r:, last:, in:mine and agent: act on the whole answer, and under
// in:mine a word is matched in the citing paragraph, not the row.
func (q *Query) RowTerm(t Term) bool {
	switch t.Key {
	case "":
		return !q.InMine
	case "tag", "-tag", "action", "event", "steps", "near", "y", "since", "until":
		return true
	}
	return false
}

// MatchTerm reports whether row r satisfies the one term t of q (true for
// a term that is not a RowTerm). Action terms are one filter: each
// action: term matches a row whose action kind is any of q's actions. A
// row matches q (Match) exactly when it matches every term of q.
func (q *Query) MatchTerm(t Term, r *episodes.Row) bool {
	if !q.RowTerm(t) {
		return true
	}
	var one Query
	switch t.Key {
	case "":
		one.Words = q.Words[t.i : t.i+1]
	case "tag":
		one.Tags = q.Tags[t.i : t.i+1]
	case "-tag":
		one.NotTags = q.NotTags[t.i : t.i+1]
	case "action":
		one.Actions = q.Actions
	case "event":
		one.Events = q.Events[t.i : t.i+1]
	case "steps":
		one.Steps = q.Steps
	case "near":
		one.Near = q.Near
	case "y":
		one.Y = q.Y
	case "since":
		one.Since = q.Since
	case "until":
		one.Until = q.Until
	}
	return one.Match(r)
}

// Describe says what term t of q was read as, on one line:
// "near: x=-69 y=185 z=22 r=6 (3D distance)".
func (q *Query) Describe(t Term) string {
	switch t.Key {
	case "":
		where := "summary, tags, action kind, note or events"
		if q.InMine {
			where = "the citing paragraph or list item in mine/ (in:mine)"
		}
		w := q.Words[t.i]
		if len(w) == 1 {
			return fmt.Sprintf("word %q, a whole word of %s", w[0], where)
		}
		return fmt.Sprintf("phrase %q, these words in a row in %s", strings.Join(w, " "), where)
	case "tag":
		return fmt.Sprintf("tag: has the tag %q", q.Tags[t.i])
	case "-tag":
		return fmt.Sprintf("-tag: does not have the tag %q", q.NotTags[t.i])
	case "action":
		if len(q.Actions) == 1 {
			return fmt.Sprintf("action: the action kind is %q", q.Actions[0])
		}
		return fmt.Sprintf("action: the action kind is one of %s (all action: terms together)", strings.Join(quoteAll(q.Actions), ", "))
	case "event":
		return fmt.Sprintf("event: an event line has the words %q", strings.Join(q.Events[t.i], " "))
	case "steps":
		return fmt.Sprintf("steps: the episode's steps overlap %d..%d", q.Steps.A, q.Steps.B)
	case "near":
		n := q.Near
		if n.ThreeD {
			return fmt.Sprintf("near: x=%s y=%s z=%s r=%s, 3D distance: the second number is the height y", num(n.X), num(n.Y), num(n.Z), num(n.R))
		}
		return fmt.Sprintf("near: x=%s z=%s r=%s, x/z distance at any y", num(n.X), num(n.Z), num(n.R))
	case "r":
		if q.Near == nil {
			return "r: the radius of near:"
		}
		return fmt.Sprintf("r: the radius of near: is %s, applied with near:", num(q.Near.R))
	case "y":
		return "y: " + describeY(q.Y)
	case "life":
		if q.AllLives {
			return "life: every life"
		}
		return fmt.Sprintf("life: life %d only", q.Life)
	case "since":
		return "since: recorded at or after " + q.Since.Format(time.RFC3339Nano)
	case "until":
		return "until: recorded at or before " + q.Until.Format(time.RFC3339Nano)
	case "last":
		return fmt.Sprintf("last: the most recent %d of the matches", q.Last)
	case "in":
		return "in:mine: cited in mine/ by a paragraph or list item holding all the words"
	case "agent":
		if q.AllAgents {
			return "agent: every agent's episodes (a shared mount answers it)"
		}
		return fmt.Sprintf("agent: agent %q's episodes (a shared mount answers it)", q.Agent)
	}
	return t.Key + ":"
}

func describeY(r *FloatRange) string {
	switch {
	case math.IsInf(r.Min, -1):
		return "y < " + num(r.Max)
	case math.IsInf(r.Max, 1):
		return "y > " + num(r.Min)
	}
	return fmt.Sprintf("%s <= y <= %s", num(r.Min), num(r.Max))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}
