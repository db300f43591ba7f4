package consolidate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kinds of candidate.
const (
	KindSkill  = "skill"
	KindRemedy = "remedy"
)

// Ref names a supporting episode.
type Ref struct {
	Life     int    `json:"life"`
	ID       string `json:"id"`
	Previous bool   `json:"previous,omitempty"` // a frozen previous life
}

// Candidate is a proposed skill or remedy with its evidence and, after
// curation, its status.
type Candidate struct {
	ID            string            `json:"id"`
	Kind          string            `json:"kind"`
	Name          string            `json:"name"`
	Trigger       map[string]string `json:"trigger"`
	Preconditions []string          `json:"preconditions,omitempty"`
	Steps         []string          `json:"steps,omitempty"`  // skill: calls in order
	Verify        string            `json:"verify,omitempty"` // skill: inv_ge ITEM N | milestone NAME
	Effects       []string          `json:"effects,omitempty"`
	FailureType   string            `json:"failure_type,omitempty"` // remedy
	Risk          string            `json:"risk,omitempty"`         // remedy: the risk pattern seen
	Repair        []string          `json:"repair,omitempty"`       // remedy: calls that followed and worked
	Scope         string            `json:"scope,omitempty"`
	Evidence      *Evidence         `json:"evidence,omitempty"` // remedy: the repair against what happens anyway
	Support       []Ref             `json:"support"`
	SupportCount  int               `json:"support_count"`
	Confidence    float64           `json:"confidence"`
	Usage         []string          `json:"usage,omitempty"`     // history: merges, then the last retrievals
	Retrieved     int               `json:"retrieved,omitempty"` // how often a retrieval returned it (usage.jsonl)
	Used          int               `json:"used,omitempty"`      // how often the plan after an offer used it (usage.jsonl, via "used")
	Source        string            `json:"source"`              // "inducer" or "llm"
	Status        string            `json:"status,omitempty"`
	Reason        string            `json:"reason,omitempty"`
}

// key identifies duplicates: same kind, trigger and actions.
func (c *Candidate) key() string {
	var b strings.Builder
	b.WriteString(c.Kind)
	for _, k := range sortedTrig(c.Trigger) {
		fmt.Fprintf(&b, "|%s=%s", k, c.Trigger[k])
	}
	fmt.Fprintf(&b, "|%s|%s|%s", strings.Join(c.Steps, ";"), verifyKey(c.Verify), strings.Join(c.Repair, ";"))
	return b.String()
}

// verifyKey is a verification rule without the count of "inv_ge ITEM N":
// skills that differ only in how many items a run gained are duplicates.
func verifyKey(v string) string {
	if item, _, ok := invGe(v); ok {
		return "inv_ge " + item
	}
	return v
}

// invGe splits "inv_ge ITEM N".
func invGe(v string) (item string, n int, ok bool) {
	f := strings.Fields(v)
	if len(f) != 3 || f[0] != "inv_ge" {
		return "", 0, false
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return "", 0, false
	}
	return f[1], n, true
}

// triggerKey identifies entries competing for the same situation.
func (c *Candidate) triggerKey() string {
	var b strings.Builder
	b.WriteString(c.Kind)
	for _, k := range sortedTrig(c.Trigger) {
		fmt.Fprintf(&b, "|%s=%s", k, c.Trigger[k])
	}
	if c.Kind == KindSkill {
		b.WriteString("|" + verifyKey(c.Verify))
	}
	return b.String()
}

func sortedTrig(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func (c *Candidate) setID() {
	h := sha256.Sum256([]byte(c.key()))
	name := c.Name
	if name == "" {
		name = "unnamed"
	}
	c.ID = c.Kind + "-" + sanitize(name) + "-" + hex.EncodeToString(h[:3])
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 32)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}

// Induce proposes skills from runs of at least cfg.MinRun consecutive
// verified successes and remedies (eq. 5) at failed episodes where the
// share of failed episodes, of any type, over the last cfg.H reaches
// cfg.Eta, or the episode is stagnant.
// Duplicates are not merged here (the Curator does).
func Induce(fb []Feedback, cfg Config) []Candidate {
	var out []Candidate
	// Skills.
	flush := func(run []Feedback) {
		if len(run) < max(cfg.MinRun, 1) {
			return
		}
		out = append(out, skillOf(run, true))
	}
	var run []Feedback
	for i, f := range fb {
		if i > 0 && fb[i-1].Life != f.Life {
			flush(run)
			run = nil
		}
		if f.Success && f.Verified {
			run = append(run, f)
			continue
		}
		flush(run)
		run = nil
	}
	flush(run)
	out = append(out, aimFailedRuns(fb, cfg)...)

	// Remedies: eq. 5 at every failed episode i.
	h := max(cfg.H, 1)
	for i, f := range fb {
		if f.Success || f.Failure == FailNone {
			continue
		}
		failed, rate := FailureRate(fb, i, h)
		if rate < cfg.Eta && !f.Stagnant {
			continue
		}
		c := Candidate{Kind: KindRemedy, Source: "inducer", FailureType: f.Failure,
			Trigger: map[string]string{"call": f.Call, "failure": f.Failure}, Support: []Ref{f.ref()}, SupportCount: 1}
		c.Name = strings.ToLower(f.Failure) + "_after_" + f.Call
		why := fmt.Sprintf("rate %.2f ≥ η %.2f", rate, cfg.Eta)
		if rate < cfg.Eta {
			why = fmt.Sprintf("stagnant: progress %.3f < εp %.2f", f.Progress, cfg.EpsP)
		}
		c.Risk = fmt.Sprintf("%s failed with %s; %d of the last %d episodes failed (%s)", f.Call, f.Failure, failed, h, why)
		if f.Note != "" {
			c.Risk += fmt.Sprintf("; %s: %q", f.Episode, clip(f.Note, 120))
		}
		var refs []Ref
		c.Repair, refs, c.Scope = repairOf(fb, i, h)
		c.Support = append(c.Support, refs...)
		c.setID()
		out = append(out, c)
	}
	Annotate(out, fb, cfg)
	return out
}

// FailureRate is eq. 5's left side at episode i: (1/h)·Σ I[y_j = 0] over
// j = i-h+1..i, the episodes of i's life in that window (fewer than h at
// the start of a life count as they are, still over h). It returns the
// number of failed episodes and the rate.
func FailureRate(fb []Feedback, i, h int) (int, float64) {
	h = max(h, 1)
	failed := 0
	for j := max(0, i-h+1); j <= i; j++ {
		if fb[j].Life == fb[i].Life && !fb[j].Success {
			failed++
		}
	}
	return failed, float64(failed) / float64(h)
}

// skillOf builds the skill candidate of run. Its verification is the
// last milestone, else `inv_ge ITEM N` for the item gained most among
// those a step aimed at or its notes name as collected (Feedback.Aimed);
// when no gained item qualifies (and aimed is true, and some step's
// arguments or notes are recorded) the candidate comes back rejected with
// the reason, the gain being incidental.
func skillOf(run []Feedback, aimed bool) Candidate {
	c := Candidate{Kind: KindSkill, Source: "inducer", Trigger: map[string]string{}}
	gain := map[string]int{}
	var ms []string
	for _, f := range run {
		if n := len(c.Steps); n == 0 || c.Steps[n-1] != f.Call {
			c.Steps = append(c.Steps, f.Call)
		}
		for k, v := range f.InvDelta {
			gain[k] += v
		}
		ms = append(ms, f.Milestones...)
		c.Support = append(c.Support, f.ref())
	}
	first := run[0]
	if first.Subgoal != "" {
		c.Trigger["subgoal"] = first.Subgoal
	}
	c.Trigger["gui_open"] = fmt.Sprint(first.GUIOpen)
	var aimedAt []string
	known := false
	for _, f := range run {
		aimedAt = append(aimedAt, f.Aimed...)
		known = known || f.AimKnown
	}
	// A record that says nothing of any step's aim (no arguments, no notes
	// of its own) cannot tell an aimed gain from an incidental one: the
	// item gained most, as before aims were checked.
	aimed = aimed && known
	// best: the item gained most (the verification before aims were
	// checked); qual: the one gained most that a step aimed at or collected.
	best, bestN, qual, qualN := "", 0, "", 0
	for _, k := range sortedKeys(gain) {
		if gain[k] > bestN {
			best, bestN = k, gain[k]
		}
		if gain[k] > qualN && itemAimed(k, aimedAt) {
			qual, qualN = k, gain[k]
		}
		if gain[k] != 0 {
			c.Effects = append(c.Effects, fmt.Sprintf("inventory %s %+d", k, gain[k]))
		}
	}
	for _, m := range ms {
		c.Effects = append(c.Effects, "milestone "+m)
	}
	switch {
	case len(ms) > 0:
		c.Verify = "milestone " + ms[len(ms)-1]
		c.Name = ms[len(ms)-1]
	case qual != "" || !aimed && best != "":
		if aimed {
			best, bestN = qual, qualN
		}
		c.Verify = fmt.Sprintf("inv_ge %s %d", best, bestN)
		c.Name = "get_" + best
		c.Trigger["item"] = best
	case best != "":
		// Nothing gained was what the steps were for: keep the candidate,
		// rejected, so the reason stays on record.
		c.Verify = fmt.Sprintf("inv_ge %s %d", best, bestN)
		c.Name = "get_" + best
		c.Trigger["item"] = best
		what := "nothing"
		if len(aimedAt) > 0 {
			what = strings.Join(uniqSorted(aimedAt), ", ")
		}
		c.Status = StatusRejected
		c.Reason = fmt.Sprintf("not a skill: the run gained %s, but its steps aimed at or collected %s (incidental gain, no item to verify)",
			gainList(gain), what)
	}
	c.Preconditions = []string{"gui_open=" + fmt.Sprint(first.GUIOpen)}
	for _, k := range sortedKeys(gain) {
		if gain[k] < 0 {
			c.Preconditions = append(c.Preconditions, fmt.Sprintf("inv_ge %s %d", k, -gain[k]))
		}
	}
	c.Scope = fmt.Sprintf("life %d, steps %d-%d", first.Life, first.FirstStep, run[len(run)-1].LastStep)
	c.Confidence = round3(float64(len(run)) / float64(len(run)+1))
	c.SupportCount = 1
	c.setID()
	return c
}

// aimFailedRuns are the runs of at least cfg.MinRun consecutive successes
// that each gained an item or reached a milestone — the runs before
// verification took notes into account — in which some episode gained an
// item only while its own notes say it failed its aim. They come back
// rejected, with the episode and its note as the reason: the paper run's
// harvest_tree that dug 7 dirt "0 log(s) collected" is not a way to get dirt.
func aimFailedRuns(fb []Feedback, cfg Config) []Candidate {
	var out []Candidate
	flush := func(run []Feedback) {
		if len(run) < max(cfg.MinRun, 1) {
			return
		}
		for _, f := range run {
			if f.AimFailed == "" || len(f.Milestones) > 0 {
				continue
			}
			c := skillOf(run, false)
			c.Status = StatusRejected
			c.Reason = fmt.Sprintf("not verified: %s's own note says %s failed its aim (%q); its gain (%s) is incidental",
				f.Episode, f.Call, clip(f.AimFailed, 60), gainList(f.InvDelta))
			out = append(out, c)
			return
		}
	}
	var run []Feedback
	for i, f := range fb {
		if i > 0 && fb[i-1].Life != f.Life {
			flush(run)
			run = nil
		}
		gained := len(f.Milestones) > 0
		for _, v := range f.InvDelta {
			gained = gained || v > 0
		}
		if f.Success && gained {
			run = append(run, f)
			continue
		}
		flush(run)
		run = nil
	}
	flush(run)
	return out
}

// gainList is "dirt +7, bucket +1" for the positive entries of d, sorted.
func gainList(d map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(d) {
		if d[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %+d", k, d[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func uniqSorted(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// repairOf finds what followed fb[i]'s failure, within h episodes of the
// same life. If the same call later succeeded, the repair is what
// succeeded in between (each call that changed something, repeats
// collapsed) and then the call again; if it succeeded with nothing in
// between there is no specific repair. Otherwise it is the first later
// call of another kind with a verified success. It returns the repair,
// the episodes showing it and the remedy's scope.
func repairOf(fb []Feedback, i, h int) ([]string, []Ref, string) {
	f := fb[i]
	scope := fmt.Sprintf("when %s ends in %s", f.Call, f.Failure)
	for j := i + 1; j < len(fb) && j <= i+h && fb[j].Life == f.Life; j++ {
		if fb[j].Call != f.Call || !fb[j].Success {
			continue
		}
		var steps []string
		var refs []Ref
		for k := i + 1; k < j; k++ {
			g := fb[k]
			if g.Success && g.Call != f.Call && len(g.Changed) > 0 {
				if n := len(steps); n == 0 || steps[n-1] != g.Call {
					steps = append(steps, g.Call)
				}
				refs = append(refs, g.ref())
			}
		}
		if len(steps) == 0 {
			return nil, nil, scope + fmt.Sprintf("; %s succeeded again in %s with nothing done in between", f.Call, fb[j].Episode)
		}
		return append(steps, f.Call), append(refs, fb[j].ref()), scope + ", then " + f.Call + " again"
	}
	for j := i + 1; j < len(fb) && j <= i+h && fb[j].Life == f.Life; j++ {
		if fb[j].Success && fb[j].Verified && fb[j].Call != f.Call {
			return []string{fb[j].Call}, []Ref{fb[j].ref()}, scope
		}
	}
	return nil, nil, scope
}

// Evidence weighs a remedy's repair against what happens anyway: how often
// its key call (the last repair step before the failing call is retried,
// else the only one) succeeds within h episodes after the failure, and
// after the same call succeeded.
type Evidence struct {
	Call         string `json:"call"`
	AfterFailure [2]int `json:"after_failure"` // [followed, of] episodes of the call failing with the remedy's failure type
	AfterSuccess [2]int `json:"after_success"` // [followed, of] episodes of the call succeeding
	AfterAny     [2]int `json:"after_any"`     // [followed, of] all episodes
	CallFailing  [2]int `json:"call_failing"`  // [with the failure type, of] all episodes of the call
}

// NoEffectShare is the share of a call's episodes with no effect from
// which no effect counts as what the call does (a wait, a look-around),
// not a failure to repair.
const NoEffectShare = 2.0 / 3

// MinLift is how many times more often than after any episode a remedy's
// key call must follow the failure to count as specific to it.
const MinLift = 2.0

// rate is a/n (0 for n = 0).
func rate(x [2]int) float64 {
	if x[1] == 0 {
		return 0
	}
	return float64(x[0]) / float64(x[1])
}

// keyCall is the repair step the evidence is about.
func keyCall(c *Candidate) string {
	r := c.Repair
	if n := len(r); n >= 2 && r[n-1] == c.Trigger["call"] {
		return r[n-2]
	}
	if len(r) > 0 {
		return r[0]
	}
	return ""
}

// Annotate sets each remedy's Evidence from fb and its confidence to the
// share of failures the key call followed, (a+1)/(n+2) (Laplace), so a
// remedy seen once has 2/3 and one that followed 9 of 10 failures 0.833.
// Remedies without a repair or a call trigger are left alone.
func Annotate(cands []Candidate, fb []Feedback, cfg Config) {
	h := max(cfg.H, 1)
	follows := func(i int, call string) bool {
		for j := i + 1; j < len(fb) && j <= i+h && fb[j].Life == fb[i].Life; j++ {
			if fb[j].Call == call && fb[j].Success {
				return true
			}
		}
		return false
	}
	for ci := range cands {
		c := &cands[ci]
		call := c.Trigger["call"]
		key := keyCall(c)
		if c.Kind != KindRemedy || call == "" || key == "" {
			continue
		}
		ev := Evidence{Call: key}
		for i, f := range fb {
			ev.AfterAny[1]++
			if follows(i, key) {
				ev.AfterAny[0]++
			}
			if f.Call != call {
				continue
			}
			ev.CallFailing[1]++
			if f.Failure == c.FailureType {
				ev.CallFailing[0]++
			}
			switch {
			case f.Failure == c.FailureType && f.Failure != FailNone:
				ev.AfterFailure[1]++
				if follows(i, key) {
					ev.AfterFailure[0]++
				}
			case f.Success:
				ev.AfterSuccess[1]++
				if follows(i, key) {
					ev.AfterSuccess[0]++
				}
			}
		}
		c.Evidence = &ev
		c.Confidence = round3(float64(ev.AfterFailure[0]+1) / float64(ev.AfterFailure[1]+2))
	}
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
