package consolidate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Status values a curated candidate carries.
const (
	StatusAccepted = "accepted"
	StatusRejected = "rejected"
)

// TriggerFields are the state fields a trigger may test.
var TriggerFields = map[string]bool{"subgoal": true, "call": true, "failure": true, "item": true, "gui_open": true}

// vague phrases make a step unspecific.
var vague = []string{"try again", "be careful", "retry", "do better", "be more careful", "keep trying", "think", "figure out", "something"}

// Curate merges duplicates (adding support, counts and usage) and
// validates every candidate against known, the names of executable atoms
// and procedures. It returns the accepted entries (by confidence, highest
// first) and the rejected ones with their reason.
func Curate(cands []Candidate, known map[string]bool) (accepted, rejected []Candidate) {
	return CurateWith(cands, Knowledge{Steps: known})
}

// Knowledge is what the Curator checks candidates against.
type Knowledge struct {
	Steps    map[string]bool // atoms and procedures a step may name
	Episodes map[string]bool // "LIFE/ep_NNNNNN" of every recorded episode; nil: not checked
	// States are the trigger-field values of each recorded episode's
	// state (EpisodeStates), by EpisodeKey: ContextMatch checks a
	// candidate's trigger against the state it would be used in. nil: not checked.
	States map[string]StateFields
	// K are the active entries of the persistent knowledge store: a
	// candidate for the trigger of one of at least its confidence, with
	// other content, conflicts with it (eq. 6's C_conflict(k, K)).
	K []Candidate
}

// StateFields are a state's values of the trigger fields (TriggerFields);
// "item" holds every item the state names, space-separated in Items.
type StateFields struct {
	Subgoal string   `json:"subgoal,omitempty"`
	Call    string   `json:"call"`
	Failure string   `json:"failure,omitempty"`
	GUIOpen bool     `json:"gui_open"`
	Items   []string `json:"items,omitempty"`
}

// EpisodeStates are the trigger-field values of each episode of fb (by
// EpisodeKey): its subgoal (goals.next), its call, its failure, whether a
// GUI was open, and the items its inventory change and aim name.
func EpisodeStates(fb []Feedback) map[string]StateFields {
	m := map[string]StateFields{}
	for _, f := range fb {
		st := StateFields{Subgoal: f.Subgoal, Call: f.Call, Failure: f.Failure, GUIOpen: f.GUIOpen}
		for _, it := range sortedKeys(f.InvDelta) {
			st.Items = append(st.Items, it)
		}
		st.Items = append(st.Items, f.Aimed...)
		m[EpisodeKey(f.Life, f.Episode)] = st
	}
	return m
}

// ContextMatch is eq. 6's V_match against a state: every trigger field of
// c has the value st has (item: one of st's items). It returns the first
// field that does not match, or "".
func ContextMatch(c *Candidate, st StateFields) string {
	for _, k := range sortedTrig(c.Trigger) {
		v := c.Trigger[k]
		ok := true
		switch k {
		case "subgoal":
			ok = v == st.Subgoal
		case "call":
			ok = v == st.Call
		case "failure":
			ok = v == st.Failure
		case "gui_open":
			ok = v == fmt.Sprint(st.GUIOpen)
		case "item":
			ok = false
			for _, it := range st.Items {
				ok = ok || itemAimed(it, []string{v})
			}
		}
		if !ok {
			return k
		}
	}
	return ""
}

// usedIn is the state a candidate would be used in: that of its first
// supporting episode (a remedy's failure, a skill's first step). A
// skill's item is what its run yields, which the first step seldom names
// (mine_ahead → craft wood: the first step names tree), so a skill's
// state names the items of every supporting episode.
func usedIn(c *Candidate, states map[string]StateFields) (StateFields, Ref, bool) {
	for i, r := range c.Support {
		st, ok := states[EpisodeKey(r.Life, r.ID)]
		if !ok {
			continue
		}
		if c.Kind == KindSkill {
			st.Items = append([]string(nil), st.Items...)
			for _, r2 := range c.Support[i+1:] {
				st.Items = append(st.Items, states[EpisodeKey(r2.Life, r2.ID)].Items...)
			}
		}
		return st, r, true
	}
	return StateFields{}, Ref{}, false
}

// EpisodeKey is a supporting episode's key in Knowledge.Episodes.
func EpisodeKey(life int, id string) string { return fmt.Sprintf("%d/%s", life, id) }

// CurateWith is Curate that also rejects a candidate citing an episode
// that was not recorded (when k.Episodes is set).
func CurateWith(cands []Candidate, k Knowledge) (accepted, rejected []Candidate) {
	known := k.Steps
	merged := map[string]*Candidate{}
	var order []string
	var pre []Candidate // rejected by the Inducer already, with the reason
	for _, c := range cands {
		c := c
		if c.Status == StatusRejected && c.Reason != "" {
			if c.ID == "" {
				c.setID()
			}
			if c.SupportCount == 0 {
				c.SupportCount = 1
			}
			pre = append(pre, c)
			continue
		}
		k := c.key()
		if m, ok := merged[k]; ok {
			seen := map[Ref]bool{}
			for _, r := range m.Support {
				seen[r] = true
			}
			for _, r := range c.Support {
				if !seen[r] {
					m.Support = append(m.Support, r)
				}
			}
			m.SupportCount += max(c.SupportCount, 1)
			// Confidence: the higher of the two; a skill's also at least
			// N/(N+1) for the N episodes now supporting it. (A remedy's comes
			// from its evidence, the same for its duplicates.)
			m.Confidence = math.Max(m.Confidence, c.Confidence)
			if m.Kind == KindSkill {
				n := float64(len(m.Support))
				m.Confidence = round3(math.Max(m.Confidence, n/(n+1)))
			}
			line := "merged duplicate from " + c.Scope
			// inv_ge ITEM N and inv_ge ITEM M: keep the smaller count, which
			// every supporting run reached.
			if item, n, ok := invGe(m.Verify); ok {
				if _, n2, ok := invGe(c.Verify); ok && n2 != n {
					line += " (" + c.Verify + ")"
					if n2 < n {
						m.Verify = fmt.Sprintf("inv_ge %s %d", item, n2)
					}
				}
			}
			m.Usage = append(m.Usage, line)
			continue
		}
		if c.SupportCount == 0 {
			c.SupportCount = 1
		}
		merged[k] = &c
		order = append(order, k)
	}
	list := make([]*Candidate, 0, len(order))
	for _, k := range order {
		list = append(list, merged[k])
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Confidence > list[j].Confidence })
	byTrigger := map[string]*Candidate{}
	for _, c := range list {
		if c.ID == "" {
			c.setID()
		}
		reason := validate(c, known)
		if reason == "" && k.Episodes != nil {
			for _, r := range c.Support {
				if !k.Episodes[EpisodeKey(r.Life, r.ID)] {
					reason = fmt.Sprintf("cites episode %s of life %d, which was not recorded", r.ID, r.Life)
					break
				}
			}
		}
		if reason == "" && k.States != nil {
			if st, r, ok := usedIn(c, k.States); ok {
				if field := ContextMatch(c, st); field != "" {
					reason = fmt.Sprintf("trigger does not match the state it would be used in: %s=%q, but %s's state has %s",
						field, c.Trigger[field], RefString(r), stateValue(st, field))
				}
			}
		}
		if reason == "" {
			if o, ok := byTrigger[c.triggerKey()]; ok {
				reason = fmt.Sprintf("conflicts with %s (confidence %.3f ≥ %.3f) for the same trigger", o.ID, o.Confidence, c.Confidence)
			}
		}
		if reason == "" {
			for _, o := range k.K {
				if o.triggerKey() == c.triggerKey() && o.key() != c.key() && o.Confidence >= c.Confidence {
					reason = fmt.Sprintf("conflicts with %s of the knowledge store (confidence %.3f ≥ %.3f) for the same trigger", o.ID, o.Confidence, c.Confidence)
					break
				}
			}
		}
		if reason != "" {
			c.Status, c.Reason = StatusRejected, reason
			rejected = append(rejected, *c)
			continue
		}
		c.Status = StatusAccepted
		byTrigger[c.triggerKey()] = c
		accepted = append(accepted, *c)
	}
	rejected = append(rejected, pre...)
	uniqueIDs(accepted, rejected)
	return accepted, rejected
}

// uniqueIDs gives every rejected candidate an id (its file name) no
// accepted one and no other rejected one has: a rejected candidate with
// the key of an accepted one (a run the Inducer rejected beside one it
// kept) gets "-rejected-" and a hash of its reason and support.
func uniqueIDs(accepted, rejected []Candidate) {
	used := map[string]bool{}
	for _, c := range accepted {
		used[c.ID] = true
	}
	for i := range rejected {
		c := &rejected[i]
		if !used[c.ID] {
			used[c.ID] = true
			continue
		}
		h := sha256.New()
		fmt.Fprintf(h, "%s|%v", c.Reason, c.Support)
		base := c.ID + "-rejected-" + hex.EncodeToString(h.Sum(nil)[:3])
		id := base
		for n := 2; used[id]; n++ {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		c.ID = id
		used[id] = true
	}
}

// stateValue is st's value of a trigger field, quoted.
func stateValue(st StateFields, field string) string {
	switch field {
	case "subgoal":
		return fmt.Sprintf("%q", st.Subgoal)
	case "call":
		return fmt.Sprintf("%q", st.Call)
	case "failure":
		return fmt.Sprintf("%q", st.Failure)
	case "gui_open":
		return fmt.Sprintf("%q", fmt.Sprint(st.GUIOpen))
	case "item":
		return fmt.Sprintf("items %q", st.Items)
	}
	return "no such field"
}

// validate returns why c is not acceptable, or "".
func validate(c *Candidate, known map[string]bool) string {
	var acts []string
	switch c.Kind {
	case KindSkill:
		if len(c.Steps) == 0 {
			return "schema incomplete: a skill needs steps"
		}
		if c.Verify == "" {
			return "schema incomplete: a skill needs a verification rule"
		}
		if err := checkVerify(c.Verify); err != "" {
			return err
		}
		acts = c.Steps
	case KindRemedy:
		if c.FailureType == "" {
			return "schema incomplete: a remedy needs a failure type"
		}
		if len(c.Repair) == 0 {
			return "schema incomplete: no repair action (" + c.Scope + "; nothing else succeeded after it)"
		}
		acts = c.Repair
	default:
		return fmt.Sprintf("schema incomplete: kind %q is neither skill nor remedy", c.Kind)
	}
	if c.Name == "" || len(c.Support) == 0 || c.Confidence <= 0 || c.Confidence > 1 {
		return "schema incomplete: needs name, supporting episodes and a confidence in (0,1]"
	}
	if len(c.Trigger) == 0 {
		return "trigger is empty"
	}
	for _, k := range sortedTrig(c.Trigger) {
		if !TriggerFields[k] {
			return fmt.Sprintf("trigger field %q is not a state field (want subgoal, call, failure, item, gui_open)", k)
		}
		if strings.TrimSpace(c.Trigger[k]) == "" {
			return fmt.Sprintf("trigger field %q is empty", k)
		}
	}
	for _, a := range acts {
		low := strings.ToLower(a)
		for _, v := range vague {
			if strings.Contains(low, v) {
				return fmt.Sprintf("not specific: step %q (%q)", a, v)
			}
		}
		name := a
		if i := strings.IndexByte(name, '('); i >= 0 {
			name = name[:i]
		}
		if !known[strings.TrimSpace(name)] {
			return fmt.Sprintf("step %q is not a known atom or procedure", a)
		}
	}
	if ev := c.Evidence; c.Kind == KindRemedy && ev != nil && ev.AfterFailure[1] > 0 {
		rf := rate(ev.AfterFailure)
		if c.FailureType == FailNoEffect && ev.CallFailing[1] >= 3 && rate(ev.CallFailing) >= NoEffectShare {
			return fmt.Sprintf("not a failure to repair: %s has no effect in %d of its %d episodes, so no effect is its usual outcome (as for a wait or a look-around) and tells nothing about what went wrong",
				c.Trigger["call"], ev.CallFailing[0], ev.CallFailing[1])
		}
		if rf == 0 {
			return fmt.Sprintf("unsupported: %s never succeeded within the next episodes after %s %s (0 of %d)", ev.Call, c.FailureType, c.Trigger["call"], ev.AfterFailure[1])
		}
		if ev.AfterSuccess[1] > 0 && rate(ev.AfterSuccess) >= rf {
			return fmt.Sprintf("not specific: %s follows %s as often when it succeeds (%d of %d) as after %s (%d of %d)",
				ev.Call, c.Trigger["call"], ev.AfterSuccess[0], ev.AfterSuccess[1], c.FailureType, ev.AfterFailure[0], ev.AfterFailure[1])
		}
		if ev.AfterAny[1] > 0 && rf < MinLift*rate(ev.AfterAny) {
			return fmt.Sprintf("not specific: %s follows %s %s in %d of %d, less than %.0f× as often as it follows any episode (%d of %d)",
				ev.Call, c.FailureType, c.Trigger["call"], ev.AfterFailure[0], ev.AfterFailure[1], MinLift, ev.AfterAny[0], ev.AfterAny[1])
		}
	}
	return ""
}

func checkVerify(v string) string {
	f := strings.Fields(v)
	switch {
	case len(f) == 3 && f[0] == "inv_ge":
		if n, err := strconv.Atoi(f[2]); err != nil || n < 1 {
			return fmt.Sprintf("verification %q: want inv_ge ITEM N with N ≥ 1", v)
		}
		return ""
	case len(f) == 2 && f[0] == "milestone":
		return ""
	}
	return fmt.Sprintf("verification %q: want \"inv_ge ITEM N\" or \"milestone NAME\"", v)
}
