package consolidate

import (
	"fmt"
	"strconv"
	"strings"
)

// Context is a retrieval context: state fields to match and a token budget.
//
// Syntax (a single path element, so usable as /consolidate/retrieve/<context>):
//
//	key=value[,key=value]...   keys: subgoal, call, failure, item, gui_open, budget
//
// e.g. "call=go_to,failure=NAV_STUCK,budget=300". budget defaults to 400
// tokens (1 token ≈ 4 bytes) and is at most 100000.
type Context struct {
	Fields map[string]string
	Budget int
}

// DefaultBudget is the retrieval budget in tokens when none is given.
const DefaultBudget = 400

// ParseContext parses a retrieval context.
func ParseContext(s string) (Context, error) {
	c := Context{Fields: map[string]string{}, Budget: DefaultBudget}
	if strings.TrimSpace(s) == "" {
		return c, fmt.Errorf("retrieve context is empty: want key=value[,key=value] with keys subgoal, call, failure, item, gui_open, budget")
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return c, fmt.Errorf("retrieve context %q: %q is not key=value", s, part)
		}
		if k == "budget" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100000 {
				return c, fmt.Errorf("retrieve context %q: budget %q: want an integer 1..100000", s, v)
			}
			c.Budget = n
			continue
		}
		if !TriggerFields[k] {
			return c, fmt.Errorf("retrieve context %q: unknown key %q (want subgoal, call, failure, item, gui_open, budget)", s, k)
		}
		if _, dup := c.Fields[k]; dup {
			return c, fmt.Errorf("retrieve context %q: key %q given twice", s, k)
		}
		c.Fields[k] = v
	}
	return c, nil
}

// Tokens estimates the tokens of an entry's markdown (4 bytes a token).
func Tokens(c Candidate) int { return (len(Markdown(c)) + 3) / 4 }

// Relevance is the share of c's trigger fields the context matches times
// c's confidence; a trigger field the context contradicts makes it 0.
func Relevance(c Candidate, ctx Context) float64 {
	if len(c.Trigger) == 0 {
		return 0
	}
	match := 0
	for k, v := range c.Trigger {
		cv, ok := ctx.Fields[k]
		if !ok {
			continue
		}
		if !strings.EqualFold(cv, v) {
			return 0
		}
		match++
	}
	return float64(match) / float64(len(c.Trigger)) * c.Confidence
}

// Retrieve picks the accepted entries of greatest total relevance whose
// tokens fit ctx.Budget (0/1 knapsack, dynamic programming over tokens).
func Retrieve(accepted []Candidate, ctx Context) []Candidate {
	type item struct {
		c   Candidate
		w   int
		val float64
	}
	var items []item
	for _, c := range accepted {
		if r := Relevance(c, ctx); r > 0 {
			items = append(items, item{c, max(Tokens(c), 1), r})
		}
	}
	W := ctx.Budget
	best := make([]float64, W+1)
	take := make([][]bool, len(items))
	for i, it := range items {
		take[i] = make([]bool, W+1)
		for w := W; w >= it.w; w-- {
			if v := best[w-it.w] + it.val; v > best[w]+1e-12 {
				best[w] = v
				take[i][w] = true
			}
		}
	}
	var out []Candidate
	w := W
	for i := len(items) - 1; i >= 0; i-- {
		if take[i][w] {
			out = append(out, items[i].c)
			w -= items[i].w
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// RenderRetrieval is the text served for a retrieval.
func RenderRetrieval(ctx Context, got []Candidate) []byte {
	var b strings.Builder
	tok := 0
	for _, c := range got {
		tok += Tokens(c)
	}
	fmt.Fprintf(&b, "# retrieval: %d entr(ies), %d of %d tokens\n\n", len(got), tok, ctx.Budget)
	for _, c := range got {
		fmt.Fprintf(&b, "relevance %.3f\n", Relevance(c, ctx))
		b.WriteString(Markdown(c))
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// RefString cites an episode: "ep_000012" for the current life, else
// "previous/life_N/episodes/ep_000012".
func RefString(r Ref) string {
	if !r.Previous {
		return r.ID
	}
	return fmt.Sprintf("previous/life_%d/episodes/%s", r.Life, r.ID)
}

// Markdown renders a candidate readably, citing its episodes.
func Markdown(c Candidate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s %s (%s)\n", c.Kind, c.Name, c.ID)
	trig := []string{}
	for _, k := range sortedTrig(c.Trigger) {
		trig = append(trig, k+"="+c.Trigger[k])
	}
	fmt.Fprintf(&b, "- trigger: %s\n", strings.Join(trig, ", "))
	if len(c.Preconditions) > 0 {
		fmt.Fprintf(&b, "- preconditions: %s\n", strings.Join(c.Preconditions, "; "))
	}
	if len(c.Steps) > 0 {
		fmt.Fprintf(&b, "- steps: %s\n", strings.Join(c.Steps, " → "))
	}
	if c.Verify != "" {
		fmt.Fprintf(&b, "- verify: `%s`\n", c.Verify)
	}
	if len(c.Effects) > 0 {
		fmt.Fprintf(&b, "- effects: %s\n", strings.Join(c.Effects, ", "))
	}
	if c.FailureType != "" {
		fmt.Fprintf(&b, "- failure: %s; risk: %s\n", c.FailureType, c.Risk)
	}
	if len(c.Repair) > 0 {
		fmt.Fprintf(&b, "- repair: %s\n", strings.Join(c.Repair, " → "))
	}
	if c.Scope != "" {
		fmt.Fprintf(&b, "- scope: %s\n", c.Scope)
	}
	refs := []string{}
	for _, r := range c.Support {
		refs = append(refs, RefString(r))
	}
	fmt.Fprintf(&b, "- support (%d): %s\n", c.SupportCount, strings.Join(refs, ", "))
	fmt.Fprintf(&b, "- confidence: %.3f\n", c.Confidence)
	if c.Status != "" {
		fmt.Fprintf(&b, "- status: %s", c.Status)
		if c.Reason != "" {
			fmt.Fprintf(&b, " — %s", c.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}
