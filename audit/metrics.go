package audit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/harness"
)

// Sample is one recorded state a verifier sees: the state.json fields at
// top level, plus step, events (this episode's), all_events and
// milestones (cumulative over the run), tags.
type Sample struct {
	Step int64
	Env  map[string]any
}

// Stage statuses (MC-EvoBench Table C3).
const (
	StatusPassed      = "passed"
	StatusTimeout     = "timeout"     // the stage's step cap ran out first
	StatusNotReached  = "not_reached" // the recording ended before the verifier held
	StatusUnattempted = "unattempted" // an earlier stage did not pass
)

// StageResult is one stage occurrence's record.
type StageResult struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Start is the step the stage began at (where the previous stage
	// passed); Step where it passed; Steps the action steps it took (0 when
	// its verifier already held when it began).
	Start int64 `json:"start"`
	Step  int64 `json:"step,omitempty"`
	Steps int64 `json:"steps"`
	// Cap is the stage's effective step cap (0: none).
	Cap int `json:"cap,omitempty"`
	// EdgeWeight is the stage's planned execution-edge weight.
	EdgeWeight float64 `json:"edge_weight"`
}

// MilestoneResult is one item/tool state of VMP.
type MilestoneResult struct {
	State     string  `json:"state"`
	Threshold float64 `json:"threshold"`
	Initial   float64 `json:"initial"` // its count in the first snapshot
	Max       float64 `json:"max"`     // its highest count in a reported snapshot
	// Eligible: below the threshold in the first snapshot; Reached: eligible
	// and at the threshold in a later snapshot.
	Eligible bool `json:"eligible"`
	Reached  bool `json:"reached"`
}

// Scores are a run's three direct metrics as MC-EvoBench appendix C
// defines them, with what they count.
type Scores struct {
	Label string `json:"label"`
	Chain string `json:"chain"`
	// TSR = Passed / Planned (planned stage occurrences; the unattempted
	// suffix stays in the denominator).
	TSR     float64 `json:"tsr"`
	Passed  int     `json:"passed"`
	Planned int     `json:"planned"`
	// WGP = WeightDone / WeightPlanned over the execution edges (requires,
	// produces, consumes) of the passed / all planned stages; TSR when the
	// chain plans no execution-edge weight (WGPFallback).
	WGP           float64 `json:"wgp"`
	WeightDone    float64 `json:"weight_done"`
	WeightPlanned float64 `json:"weight_planned"`
	WGPFallback   bool    `json:"wgp_fallback,omitempty"`
	// VMP = Reached / Eligible over the item/tool states of the reported
	// stages' execution edges (0 when none is eligible);
	// InitiallySatisfied counts the states the first snapshot already met.
	VMP                float64           `json:"vmp"`
	Eligible           int               `json:"eligible"`
	Reached            int               `json:"reached"`
	InitiallySatisfied int               `json:"initially_satisfied"`
	Milestones         []MilestoneResult `json:"milestones"`
	Stages             []StageResult     `json:"stages"`
	// Stopped names the first stage that did not pass and why ("" when
	// every stage passed).
	Stopped string `json:"stopped,omitempty"`
	Samples int    `json:"samples"`
	// Warnings are what the store lacks that did not prevent a score.
	Warnings []string `json:"warnings,omitempty"`
}

// stageWeight sums a stage's execution-edge weights.
func stageWeight(s Stage) float64 {
	w := 0.0
	for _, e := range s.Edges {
		if e.Strict() {
			w += e.Weight()
		}
	}
	return w
}

// Evaluate scores samples (recorded states in step order) against the
// chain as MC-EvoBench's runner and metrics do: stages run in order, each
// from the step where the previous one passed (the first from the first
// sample's step); a stage passes at the first sample from its start on
// where its verifier holds — at once, with zero steps, when it already
// holds — unless that is more than its step cap after its start
// (timeout). The first stage that does not pass ends the chain; the rest
// are unattempted.
func (c *Chain) Evaluate(label string, samples []Sample) Scores {
	res := Scores{Label: label, Chain: c.Name, Samples: len(samples), Planned: len(c.Stages)}
	type snapIdx struct{ start, final int }
	var reported []snapIdx // start and final snapshot of each reported stage
	var start int64
	if len(samples) > 0 {
		start = samples[0].Step
	}
	idx := 0
	stopped := false
	for _, s := range c.Stages {
		w := stageWeight(s)
		res.WeightPlanned += w
		sr := StageResult{ID: s.ID, EdgeWeight: w, Cap: s.MaxSteps}
		if sr.Cap == 0 {
			sr.Cap = c.MaxStageSteps
		}
		if stopped || len(samples) == 0 {
			if !stopped && len(samples) == 0 {
				sr.Status = StatusNotReached
				res.Stopped = s.ID + " (no recorded states)"
				stopped = true
			} else {
				sr.Status = StatusUnattempted
			}
			res.Stages = append(res.Stages, sr)
			continue
		}
		sr.Start = start
		prog := s.prog
		if prog == nil { // a chain built without ParseChain
			prog, _ = harness.CompileCondition(s.Verifier)
		}
		hit, last := -1, idx
		for i := idx; i < len(samples); i++ {
			if sr.Cap > 0 && samples[i].Step-start > int64(sr.Cap) {
				break
			}
			last = i
			if prog == nil {
				continue // a verifier that does not compile never holds
			}
			if ok, _ := harness.EvalCondition(prog, samples[i].Env); ok {
				hit = i
				break
			}
		}
		switch {
		case hit >= 0:
			sr.Status, sr.Step, sr.Steps = StatusPassed, samples[hit].Step, samples[hit].Step-start
			res.Passed++
			res.WeightDone += w
			reported = append(reported, snapIdx{idx, hit})
			start, idx = samples[hit].Step, hit
		case last < len(samples)-1:
			sr.Status, sr.Steps = StatusTimeout, samples[last].Step-start
			reported = append(reported, snapIdx{idx, last})
			res.Stopped = fmt.Sprintf("%s (timeout: step cap %d)", s.ID, sr.Cap)
			stopped = true
		default:
			sr.Status, sr.Steps = StatusNotReached, samples[last].Step-start
			reported = append(reported, snapIdx{idx, last})
			res.Stopped = s.ID + " (not reached before the recording ended)"
			stopped = true
		}
		res.Stages = append(res.Stages, sr)
	}
	res.TSR = ratio(float64(res.Passed), float64(res.Planned))
	if res.WeightPlanned > 0 {
		res.WGP = res.WeightDone / res.WeightPlanned
	} else {
		res.WGP, res.WGPFallback = res.TSR, true
	}

	// VMP: item/tool states of the reported stages' execution edges, each
	// with the largest count among its edges as threshold.
	thresholds := map[string]float64{}
	for i := range reported {
		for _, e := range c.Stages[i].Edges {
			if !e.Strict() || !c.isInventoryState(e.State) {
				continue
			}
			thresholds[e.State] = math.Max(thresholds[e.State], e.Weight())
		}
	}
	var snaps []map[string]any
	for _, r := range reported {
		snaps = append(snaps, samples[r.start].Env, samples[r.final].Env)
	}
	states := make([]string, 0, len(thresholds))
	for st := range thresholds {
		states = append(states, st)
	}
	sort.Strings(states)
	for _, st := range states {
		m := MilestoneResult{State: st, Threshold: thresholds[st]}
		if len(snaps) > 0 {
			m.Initial = c.count(st, snaps[0])
		}
		m.Max = m.Initial
		for _, sn := range snaps {
			m.Max = math.Max(m.Max, c.count(st, sn))
		}
		m.Eligible = m.Initial < m.Threshold
		m.Reached = m.Eligible && m.Max >= m.Threshold
		if m.Eligible {
			res.Eligible++
		} else {
			res.InitiallySatisfied++
		}
		if m.Reached {
			res.Reached++
		}
		res.Milestones = append(res.Milestones, m)
	}
	res.VMP = ratio(float64(res.Reached), float64(res.Eligible))
	return res
}

// isInventoryState reports whether a state is an item, tool or item group.
func (c *Chain) isInventoryState(st string) bool {
	return strings.HasPrefix(st, "item:") || strings.HasPrefix(st, "tool:") || strings.HasPrefix(st, "group:")
}

// count is a state's count in a snapshot: the inventory count of the item
// (under its full name or without its mod prefix, as play stores record
// "wood" for default:wood), one for a tool held in the main hand and not
// in the inventory, the sum over members for a group.
func (c *Chain) count(st string, env map[string]any) float64 {
	inv, _ := env["inventory"].(map[string]any)
	kind, name, _ := strings.Cut(st, ":")
	if kind == "group" {
		n := 0.0
		for _, m := range c.groups[st] {
			n += itemCount(inv, m)
		}
		return n
	}
	n := itemCount(inv, name)
	if n == 0 && kind == "tool" {
		if h, _ := env["mainhand"].(string); h != "" && (h == name || h == shortName(name)) {
			return 1
		}
	}
	return n
}

func itemCount(inv map[string]any, name string) float64 {
	if v, ok := number(inv[name]); ok {
		return v
	}
	if s := shortName(name); s != name {
		if v, ok := number(inv[s]); ok {
			return v
		}
	}
	return 0
}

// shortName drops a "mod:" prefix.
func shortName(name string) string {
	if _, s, ok := strings.Cut(name, ":"); ok {
		return s
	}
	return name
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Pool aggregates several chains' scores as MC-EvoBench reports a split
// (C.4, C.5): passed and planned stage occurrences, done and planned
// execution-edge weight, reached and eligible states are each summed
// before dividing, not averaged per chain. A chain without edge weight
// adds nothing to the WGP sums; if none has any, WGP falls back to the
// pooled TSR.
func Pool(label string, scores []Scores) Scores {
	p := Scores{Label: label}
	for _, s := range scores {
		p.Passed += s.Passed
		p.Planned += s.Planned
		p.WeightDone += s.WeightDone
		p.WeightPlanned += s.WeightPlanned
		p.Reached += s.Reached
		p.Eligible += s.Eligible
		p.InitiallySatisfied += s.InitiallySatisfied
		p.Samples += s.Samples
	}
	p.TSR = ratio(float64(p.Passed), float64(p.Planned))
	if p.WeightPlanned > 0 {
		p.WGP = p.WeightDone / p.WeightPlanned
	} else {
		p.WGP, p.WGPFallback = p.TSR, true
	}
	p.VMP = ratio(float64(p.Reached), float64(p.Eligible))
	return p
}
