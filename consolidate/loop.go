package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// Loop is consolidation inside the play loop (MineEvolve's Algorithm 1):
// a pass every few turns and at the end of a run updates K in mine/,
// and when a call fails the Adaptor offers the entries of K that match
// the failure and the state (eq. 7) and, with an LLM, a repaired plan
// suffix (eq. 8).
type Loop struct {
	Store  *episodes.Store
	Config Config
	// Budget is B of eq. 7: the tokens of the memory section (1 token ≈
	// 4 bytes of the lines shown); 0: DefaultOfferBudget.
	Budget int
	// LLM proposes the repaired suffix (eq. 8); nil: no suffix.
	LLM *LLM
	// Now gives times (default time.Now).
	Now func() time.Time
}

// DefaultOfferBudget is the memory section's budget B in tokens.
const DefaultOfferBudget = 120

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Loop) budget() int {
	if l.Budget > 0 {
		return l.Budget
	}
	return DefaultOfferBudget
}

// PassSummary is what one consolidation pass did.
type PassSummary struct {
	Episodes   int      `json:"episodes"`
	Accepted   int      `json:"accepted"`
	Rejected   int      `json:"rejected"`
	Active     int      `json:"k_active"`
	KChanges   []string `json:"k_changes,omitempty"`
	Procedures []string `json:"procedures,omitempty"` // mine/procedures files written or rewritten
	StaticK    bool     `json:"static_k,omitempty"`
}

// Pass runs Monitor, Inducer and Curator over the store, writes the
// derived files, K (unless Config.StaticK) and the skill procedures of
// K's skills (SkillProcedures).
func (l *Loop) Pass() (PassSummary, error) {
	res, err := compute(l.Store, l.Config, nil)
	if err != nil {
		return PassSummary{}, err
	}
	if err := Write(l.Store, res); err != nil {
		return PassSummary{}, err
	}
	sum := PassSummary{Episodes: len(res.Feedback), Accepted: len(res.Accepted), Rejected: len(res.Rejected), KChanges: res.KChanges, StaticK: l.Config.StaticK}
	if !l.Config.StaticK {
		if err := WriteK(l.Store, res.K); err != nil {
			return sum, err
		}
		procs, err := WriteSkillProcedures(l.Store, res.K, res.Feedback)
		if err != nil {
			return sum, err
		}
		sum.Procedures = procs
	}
	sum.Active, _, _ = res.K.Count()
	return sum, nil
}

// OfferInput is what the Adaptor knows of a turn whose call failed.
type OfferInput struct {
	Turn     string     // the turn's id
	Episodes []string   // the turn's episodes (current life), in order
	Failed   string     // the failed call's last episode
	Goal     string     // the task's goal
	Subgoal  string     // the next milestone, when known
	State    string     // the current state, one line
	Plan     []PlanItem // the turn's plan entries and what became of them
}

// PlanItem is a plan entry and its status: done, failed, dropped.
type PlanItem struct {
	Entry  string `json:"entry"`
	Status string `json:"status"`
}

// Offered is one entry of K offered in a turn block.
type Offered struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Name      string   `json:"name"`
	Calls     []string `json:"calls"`               // a skill's steps, a remedy's repair
	Procedure string   `json:"procedure,omitempty"` // the skill's procedure in mine/procedures
	Relevance float64  `json:"relevance"`
	Tokens    int      `json:"tokens"`
	Line      string   `json:"line"`
}

// Offer is the Adaptor's answer to a failure: the retrieval K^R_i under
// the budget (eq. 7), the temporary remedy built from the failure, and
// with an LLM the repaired suffix (eq. 8).
type Offer struct {
	Context   string    `json:"context"`
	Budget    int       `json:"budget"`
	Tokens    int       `json:"tokens"`
	Entries   []Offered `json:"entries"`
	Temporary string    `json:"temporary_remedy"`
	Feedback  string    `json:"feedback"` // the failed episode's typed feedback, one line
	// Suffix is the repaired suffix the LLM proposed (plan entries);
	// Sources the entries it says it used; LLMError why there is none.
	Suffix   []string `json:"suffix,omitempty"`
	Sources  []string `json:"suffix_sources,omitempty"`
	LLMError string   `json:"llm_error,omitempty"`
	// Prompt is the eq. 8 prompt sent (not kept in the record).
	Prompt string `json:"-"`
}

// notEnough finds the item a failure note says is missing ("not enough
// stick", "missing 2 stick": the craft atoms give the count).
var notEnough = regexp.MustCompile(`(?i)\b(?:not enough|no|need(?:s)?|missing|without(?: a| an)?)\s+(?:\d+\s+)?([a-z][a-z0-9_:]*)`)

// missingItem is the item a note says is missing ("" when none).
func missingItem(note string) string {
	for _, m := range notEnough.FindAllStringSubmatch(note, -1) {
		switch w := strings.ToLower(m[1]); w {
		case "tool", "recipe", "trunk", "still", "progress", "visible", "a", "an", "the", "more", "one", "item", "items":
		default:
			return w
		}
	}
	return ""
}

// FailureContext is c_i for a failed episode: its call and failure type,
// the state's GUI and subgoal, and the item it lacked or aimed at.
func FailureContext(f Feedback, subgoal string, budget int) Context {
	c := Context{Fields: map[string]string{"call": f.Call, "gui_open": strconv.FormatBool(f.GUIOpen)}, Budget: budget}
	if f.Failure != "" {
		c.Fields["failure"] = f.Failure
	}
	if subgoal == "" {
		subgoal = f.Subgoal
	}
	if subgoal != "" {
		c.Fields["subgoal"] = subgoal
	}
	if it := missingItem(f.Note); it != "" {
		c.Fields["item"] = it
	} else if len(f.Aimed) > 0 {
		c.Fields["item"] = f.Aimed[0]
	}
	return c
}

// OfferLine is how an offered entry shows in the memory section.
func OfferLine(c Candidate, proc string) string {
	switch c.Kind {
	case KindSkill:
		s := fmt.Sprintf("skill %s: %s", c.Name, strings.Join(c.Steps, " → "))
		if proc != "" {
			s += "; call " + proc
		}
		return fmt.Sprintf("%s; verify %s (%.2f, %s) [%s]", s, c.Verify, c.Confidence, cite1(c.Support), c.ID)
	default:
		return fmt.Sprintf("remedy %s: when %s ends in %s, %s (%.2f, %s) [%s]", c.Name, c.Trigger["call"], c.FailureType, strings.Join(c.Repair, " → "), c.Confidence, cite1(c.Support), c.ID)
	}
}

// cite1 cites an entry's evidence: its first episodes.
func cite1(rs []Ref) string {
	var out []string
	for i, r := range rs {
		if i == 3 {
			out = append(out, fmt.Sprintf("+%d", len(rs)-3))
			break
		}
		out = append(out, RefString(r))
	}
	return strings.Join(out, " ")
}

// inLife is rs as cited from life cur: an episode of an earlier life is
// in previous/ (K keeps refs as they were when the entry last changed).
func inLife(rs []Ref, cur int) []Ref {
	out := make([]Ref, len(rs))
	for i, r := range rs {
		r.Previous = r.Previous || r.Life < cur
		out[i] = r
	}
	return out
}

// lineTokens is tokens(k) of eq. 7: the offered line's tokens (4 bytes a token).
func lineTokens(line string) int { return max((len(line)+3)/4, 1) }

// Offer answers a failure: it monitors the store, builds c_i from the
// failed episode's feedback and retrieves from K's active entries the
// ones of greatest total relevance whose lines fit the budget (eq. 7);
// it builds the temporary remedy of the failure and, with an LLM, asks
// for a repaired suffix (eq. 8). The offer is logged in usage.jsonl.
func (l *Loop) Offer(ctx context.Context, in OfferInput, known []string) (Offer, error) {
	fb, err := Monitor(l.Store, l.Config)
	if err != nil {
		return Offer{}, err
	}
	k, err := ReadK(l.Store)
	if err != nil {
		return Offer{}, err
	}
	life, err := l.Store.CurrentLife()
	if err != nil {
		return Offer{}, err
	}
	byID := map[string]Feedback{}
	for _, f := range fb {
		if f.Life == life.N && !f.Previous {
			byID[f.Episode] = f
		}
	}
	f, ok := byID[in.Failed]
	if !ok {
		return Offer{}, fmt.Errorf("adaptor: no feedback for the failed episode %s", in.Failed)
	}
	cctx := FailureContext(f, in.Subgoal, l.budget())
	procs := skillProcedureNames(l.Store)
	line := func(c Candidate) string {
		c.Support = inLife(c.Support, life.N)
		return OfferLine(c, procs[c.ID])
	}
	got := RetrieveBy(k.Active(), cctx, func(c Candidate) int { return lineTokens(line(c)) })
	o := Offer{Context: cctx.String(), Budget: cctx.Budget, Entries: []Offered{}, Feedback: feedbackLine(f)}
	for _, c := range got {
		ln := line(c)
		calls := c.Steps
		if c.Kind == KindRemedy {
			calls = c.Repair
		}
		o.Entries = append(o.Entries, Offered{ID: c.ID, Kind: c.Kind, Name: c.Name, Calls: calls, Procedure: procs[c.ID], Relevance: round3(Relevance(c, cctx)), Tokens: lineTokens(ln), Line: ln})
		o.Tokens += lineTokens(ln)
	}
	o.Temporary = temporaryRemedy(f)
	if err := LogUsage(l.Store, cctx, got, ViaAdaptor, l.now()); err != nil {
		return o, err
	}
	if err := l.syncCounts(); err != nil {
		return o, err
	}
	if l.LLM != nil {
		var turnFB []Feedback
		for _, id := range in.Episodes {
			if g, ok := byID[id]; ok {
				turnFB = append(turnFB, g)
			}
		}
		o.Prompt = AdaptPrompt(in, turnFB, got, o.Temporary, known)
		ans, err := l.LLM.Run(ctx, o.Prompt)
		if err == nil {
			o.Suffix, o.Sources, err = ParseRepair(ans)
		}
		if err != nil {
			o.LLMError = err.Error()
		}
	}
	return o, nil
}

// temporaryRemedy is k_temp of Algorithm 3: the current failure as a
// remedy not yet in K.
func temporaryRemedy(f Feedback) string {
	s := fmt.Sprintf("%s ended in %s", f.Call, orNone(f.Failure))
	if f.Note != "" {
		s += fmt.Sprintf(" (%q)", clip(f.Note, 120))
	}
	if f.Stagnant {
		s += fmt.Sprintf(", stagnant (progress %.2f)", f.Progress)
	}
	return s + ": do not send it again unchanged; first change what its note names"
}

func orNone(s string) string {
	if s == "" {
		return "NONE"
	}
	return s
}

// feedbackLine is a feedback record in the appendix prompts' form.
func feedbackLine(f Feedback) string {
	y := 0
	if f.Success {
		y = 1
	}
	d, _ := json.Marshal(f.InvDelta)
	if f.InvDelta == nil {
		d = []byte("{}")
	}
	s := fmt.Sprintf("%s: z=%q, y=%d, delta_inv=%s, f=%q, p=%.2f, stagnant=%t", RefString(f.ref()), f.Call, y, d, orNone(f.Failure), f.Progress, f.Stagnant)
	if f.Note != "" {
		s += fmt.Sprintf(", note=%q", clip(f.Note, 120))
	}
	return s
}

// PromptAdapt opens the eq. 8 prompt (after the appendix's Adaptor local
// repair prompt; quoted in docs/CONSOLIDATE.md).
const PromptAdapt = `You are the Adaptor of an embodied agent's memory. Repair only the unfinished suffix of
the current plan. Preserve the completed prefix. Use retrieved skills as positive guidance and
active remedies as repair constraints. Each suffix entry is one plan entry: NAME key=value ...,
naming a known call. Output JSON only:
{"kept_prefix": ["ENTRY", ...], "repaired_suffix": [{"entry": "ENTRY", "repair_source": "ID"}], "active_remedies_used": ["ID", ...]}
`

// AdaptPrompt is the eq. 8 prompt: Repair(g, s_i, z_1:i, K^R_i, A_i).
func AdaptPrompt(in OfferInput, turnFB []Feedback, got []Candidate, temp string, known []string) string {
	var b strings.Builder
	b.WriteString(PromptAdapt)
	fmt.Fprintf(&b, "\nTask goal: %s\n", in.Goal)
	if in.Subgoal != "" {
		fmt.Fprintf(&b, "Current subgoal: %s\n", in.Subgoal)
	}
	fmt.Fprintf(&b, "Current state: %s\n", in.State)
	b.WriteString("Current plan:\n")
	var prefix []string
	for _, p := range in.Plan {
		fmt.Fprintf(&b, "- %s [%s]\n", p.Entry, p.Status)
		if p.Status == "done" {
			prefix = append(prefix, p.Entry)
		}
	}
	j, _ := json.Marshal(append([]string{}, prefix...))
	fmt.Fprintf(&b, "Frozen prefix: %s\n", j)
	b.WriteString("Recent typed feedback:\n")
	for _, f := range turnFB {
		fmt.Fprintf(&b, "- %s\n", feedbackLine(f))
	}
	b.WriteString("Retrieved skills:\n")
	for _, c := range got {
		if c.Kind == KindSkill {
			fmt.Fprintf(&b, "- %s: %s; verify %s\n", c.ID, strings.Join(c.Steps, " → "), c.Verify)
		}
	}
	b.WriteString("Active remedies:\n")
	for _, c := range got {
		if c.Kind == KindRemedy {
			fmt.Fprintf(&b, "- %s: if %s ends in %s: %s\n", c.ID, c.Trigger["call"], c.FailureType, strings.Join(c.Repair, " → "))
		}
	}
	fmt.Fprintf(&b, "- temporary: %s\n", temp)
	calls := append([]string(nil), known...)
	sort.Strings(calls)
	fmt.Fprintf(&b, "KNOWN CALLS: %s\n", strings.Join(calls, ", "))
	return b.String()
}

// repairAnswer is the eq. 8 answer.
type repairAnswer struct {
	KeptPrefix []string `json:"kept_prefix"`
	Suffix     *[]struct {
		Entry     string `json:"entry"`
		Condition string `json:"condition"` // the appendix's name for it
		Source    string `json:"repair_source"`
	} `json:"repaired_suffix"`
	Used []string `json:"active_remedies_used"`
}

// MaxSuffix bounds a repaired suffix's entries.
const MaxSuffix = 16

// ParseRepair reads the eq. 8 answer: the repaired suffix's plan entries
// and the entries it says it used. Entries are not checked here: the
// session checks the suffix like any plan.
func ParseRepair(ans []byte) (suffix, sources []string, err error) {
	var a repairAnswer
	if err := json.Unmarshal(ans, &a); err != nil {
		return nil, nil, fmt.Errorf("adaptor: the answer is not the repair JSON: %w", err)
	}
	if a.Suffix == nil {
		return nil, nil, errors.New(`adaptor: the answer has no "repaired_suffix" array`)
	}
	if len(*a.Suffix) == 0 {
		return nil, nil, errors.New("adaptor: the repaired suffix is empty")
	}
	if len(*a.Suffix) > MaxSuffix {
		return nil, nil, fmt.Errorf("adaptor: the repaired suffix has %d entries, more than %d", len(*a.Suffix), MaxSuffix)
	}
	seen := map[string]bool{}
	for i, e := range *a.Suffix {
		entry := strings.TrimSpace(e.Entry)
		if entry == "" {
			entry = strings.TrimSpace(e.Condition)
		}
		if entry == "" || strings.ContainsAny(entry, ";\n") {
			return nil, nil, fmt.Errorf("adaptor: repaired_suffix[%d]: want one plan entry, got %q", i, entry)
		}
		suffix = append(suffix, entry)
		if s := strings.TrimSpace(e.Source); s != "" && !seen[s] {
			seen[s] = true
			sources = append(sources, s)
		}
	}
	for _, s := range a.Used {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			sources = append(sources, s)
		}
	}
	return suffix, sources, nil
}

// UsedBy reports whether a plan (its entries' call names, in order) used
// an offered entry: it calls the entry's procedure, or it holds the
// entry's calls in their order (not necessarily adjacent).
func UsedBy(o Offered, calls []string) bool {
	if o.Procedure != "" && contains(calls, o.Procedure) {
		return true
	}
	if len(o.Calls) == 0 {
		return false
	}
	i := 0
	for _, c := range calls {
		if i < len(o.Calls) && c == o.Calls[i] {
			i++
		}
	}
	return i == len(o.Calls)
}

// RecordUse logs that the plan of turn `by` used the entries ids offered
// in turn `offered` (usage.jsonl, via ViaUsed) and, unless K is static,
// brings K's retrieval and use counts up to date with usage.jsonl.
func (l *Loop) RecordUse(offered, by string, ids []string) error {
	if len(ids) > 0 {
		rec := UsageRecord{Time: l.now().UTC().Format(time.RFC3339), Context: fmt.Sprintf("offered in %s, used by %s", offered, by), IDs: ids, Via: ViaUsed}
		if err := appendUsage(l.Store, rec); err != nil {
			return err
		}
	}
	return l.syncCounts()
}

// syncCounts sets K's retrieved and used counts from usage.jsonl and
// writes K when they changed (never with Config.StaticK).
func (l *Loop) syncCounts() error {
	if l.Config.StaticK {
		return nil
	}
	k, err := ReadK(l.Store)
	if err != nil {
		return err
	}
	recs, err := ReadUsage(l.Store)
	if err != nil {
		return err
	}
	retrieved, used := usageCounts(recs)
	changed := false
	for _, e := range k.Entries {
		if e.Retrieved != retrieved[e.ID] || e.Used != used[e.ID] {
			e.Retrieved, e.Used = retrieved[e.ID], used[e.ID]
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return WriteK(l.Store, k)
}

// appendUsage appends one record to usage.jsonl.
func appendUsage(s *episodes.Store, rec UsageRecord) error {
	j, _ := json.Marshal(rec)
	if err := os.MkdirAll(s.Path(Dir), 0o755); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	f, err := os.OpenFile(s.Path(filepath.FromSlash(UsageFile)), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	_, err = f.Write(append(j, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	return nil
}
