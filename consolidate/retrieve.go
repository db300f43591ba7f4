package consolidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
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
// tokens fit ctx.Budget: a 0/1 knapsack, value the relevance and weight
// the tokens, solved exactly (dynamic programming over tokens), so it
// never does worse than taking entries greedily by relevance per token.
// The entries come out by relevance per token, highest first.
func Retrieve(accepted []Candidate, ctx Context) []Candidate {
	return RetrieveBy(accepted, ctx, Tokens)
}

// RetrieveBy is Retrieve with tokens(k) measured by tokens: the size of
// the form the entries are shown in (eq. 7's tokens(k)).
func RetrieveBy(accepted []Candidate, ctx Context, tokens func(Candidate) int) []Candidate {
	var cs []Candidate
	var ws []int
	var vs []float64
	for _, c := range accepted {
		if r := Relevance(c, ctx); r > 0 {
			cs = append(cs, c)
			ws = append(ws, max(tokens(c), 1))
			vs = append(vs, r)
		}
	}
	pick := Knapsack(ws, vs, ctx.Budget)
	sort.SliceStable(pick, func(a, b int) bool {
		i, j := pick[a], pick[b]
		return vs[i]/float64(ws[i]) > vs[j]/float64(ws[j])
	})
	out := make([]Candidate, 0, len(pick))
	for _, i := range pick {
		out = append(out, cs[i])
	}
	return out
}

// Knapsack returns the indices (ascending) of the items of greatest total
// value whose weights sum to at most budget (0/1; weights ≥ 1).
func Knapsack(weights []int, values []float64, budget int) []int {
	W := 0
	for _, w := range weights {
		W += w
	}
	W = min(W, budget)
	if W <= 0 {
		return nil
	}
	best := make([]float64, W+1)
	take := make([][]bool, len(weights))
	for i, w := range weights {
		take[i] = make([]bool, W+1)
		for c := W; c >= w; c-- {
			if v := best[c-w] + values[i]; v > best[c]+1e-12 {
				best[c] = v
				take[i][c] = true
			}
		}
	}
	var out []int
	c := W
	for i := len(weights) - 1; i >= 0; i-- {
		if take[i][c] {
			out = append(out, i)
			c -= weights[i]
		}
	}
	sort.Ints(out)
	return out
}

// String is the canonical form of a context: its fields by name, then the budget.
func (c Context) String() string {
	var parts []string
	for _, k := range sortedTrig(c.Fields) {
		parts = append(parts, k+"="+c.Fields[k])
	}
	return strings.Join(append(parts, fmt.Sprintf("budget=%d", c.Budget)), ",")
}

// UsageRecord is one retrieval: a line of .mfm/consolidate/usage.jsonl.
type UsageRecord struct {
	Time    string   `json:"time"`
	Context string   `json:"context"`
	IDs     []string `json:"ids"`
	Via     string   `json:"via"` // "mount", "cli", ViaAdaptor or ViaUsed
}

// Via values of a usage record besides "mount" and "cli": ViaAdaptor is
// an offer in a turn block (the Adaptor's retrieval), ViaUsed the plan
// after it using offered entries (not a retrieval: it counts as Used).
const (
	ViaAdaptor = "adaptor"
	ViaUsed    = "used"
)

// UsageFile is the retrieval history, relative to the store root (derived data).
const UsageFile = Dir + "/usage.jsonl"

// LogUsage appends a retrieval of got for ctx to usage.jsonl (one write
// of one line on an O_APPEND file).
func LogUsage(s *episodes.Store, ctx Context, got []Candidate, via string, now time.Time) error {
	rec := UsageRecord{Time: now.UTC().Format(time.RFC3339), Context: ctx.String(), IDs: []string{}, Via: via}
	for _, c := range got {
		rec.IDs = append(rec.IDs, c.ID)
	}
	return appendUsage(s, rec)
}

// ReadUsage reads usage.jsonl (none if absent; a torn or foreign line is skipped).
func ReadUsage(s *episodes.Store) ([]UsageRecord, error) {
	b, err := os.ReadFile(s.Path(filepath.FromSlash(UsageFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	var out []UsageRecord
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r UsageRecord
		if len(line) > 0 && json.Unmarshal(line, &r) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// MaxUsageLines is how many of an entry's latest retrievals its usage history shows.
const MaxUsageLines = 5

// WithUsage returns cs with each entry's retrieval count and its latest
// retrievals (at most MaxUsageLines) appended to its usage history.
func WithUsage(cs []Candidate, recs []UsageRecord) []Candidate {
	by := map[string][]UsageRecord{}
	used := map[string]int{}
	for _, r := range recs {
		for _, id := range r.IDs {
			if r.Via == ViaUsed {
				used[id]++
				continue
			}
			by[id] = append(by[id], r)
		}
	}
	out := make([]Candidate, len(cs))
	for i, c := range cs {
		rs := by[c.ID]
		c.Retrieved, c.Used = len(rs), used[c.ID]
		c.Usage = append([]string(nil), c.Usage...)
		for _, r := range rs[max(0, len(rs)-MaxUsageLines):] {
			c.Usage = append(c.Usage, fmt.Sprintf("retrieved %s for %s (%s)", r.Time, r.Context, r.Via))
		}
		out[i] = c
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
	if ev := c.Evidence; ev != nil {
		fmt.Fprintf(&b, "- evidence: %s succeeded within the next episodes after %d of %d %s %s, after %d of %d successful %s, after %d of %d episodes of any call\n",
			ev.Call, ev.AfterFailure[0], ev.AfterFailure[1], c.FailureType, c.Trigger["call"], ev.AfterSuccess[0], ev.AfterSuccess[1], c.Trigger["call"], ev.AfterAny[0], ev.AfterAny[1])
	}
	refs := []string{}
	for _, r := range c.Support {
		refs = append(refs, RefString(r))
	}
	fmt.Fprintf(&b, "- support: %d occurrence(s), %d episode(s): %s\n", c.SupportCount, len(c.Support), strings.Join(refs, ", "))
	fmt.Fprintf(&b, "- confidence: %.3f\n", c.Confidence)
	if c.Retrieved > 0 || c.Used > 0 || len(c.Usage) > 0 {
		merged := 0
		var rest []string
		for _, u := range c.Usage {
			if strings.HasPrefix(u, "merged ") {
				merged++
			} else {
				rest = append(rest, u)
			}
		}
		fmt.Fprintf(&b, "- usage: %d duplicate(s) merged, retrieved %d time(s)", merged, c.Retrieved)
		if c.Used > 0 {
			fmt.Fprintf(&b, ", used by the next plan %d time(s)", c.Used)
		}
		for _, u := range rest {
			b.WriteString("; " + u)
		}
		b.WriteString("\n")
	}
	if c.Status != "" {
		fmt.Fprintf(&b, "- status: %s", c.Status)
		if c.Reason != "" {
			fmt.Fprintf(&b, " — %s", c.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}
