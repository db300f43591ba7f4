// Package audit computes MC-EvoBench's transfer metrics for a recorded run
// from its states and events, given a task chain (docs/AUDIT.md): TSR
// (passed stages / planned), WGP (weighted fraction of strict edges with
// verified progress) and VMP (eligible milestones reached / eligible). It
// reads stores; it does not record or mount them.
package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/expr-lang/expr/vm"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// Stage is one planned stage with its verifier, a condition over a
// recorded state (expr-lang, as mfm-when: `inventory.stick >= 2`).
type Stage struct {
	ID       string `json:"id"`
	Verifier string `json:"verifier"`
}

// Edge is a dependency from stage From to stage To. A strict edge counts
// for WGP; it has verified progress when To passed at or after From.
type Edge struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	Weight float64 `json:"weight"`
	Strict *bool   `json:"strict,omitempty"` // default true
}

// Milestone is a milestone with its verifier; Eligible false leaves it out
// of VMP (default true). Without a verifier, the milestone is reached when
// its id is among the recorded milestones.
type Milestone struct {
	ID       string `json:"id"`
	Verifier string `json:"verifier,omitempty"`
	Eligible *bool  `json:"eligible,omitempty"`
}

// Chain is a task chain.
type Chain struct {
	Name       string      `json:"name"`
	Stages     []Stage     `json:"stages"`
	Edges      []Edge      `json:"edges"`
	Milestones []Milestone `json:"milestones"`

	stage map[string]*vm.Program
	mile  map[string]*vm.Program
}

// ParseChain decodes and validates a chain: unique stage ids, verifiers
// that compile, edges between declared stages with weights > 0.
func ParseChain(b []byte) (*Chain, error) {
	var c Chain
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	if len(c.Stages) == 0 {
		return nil, errors.New(`chain: no "stages"`)
	}
	c.stage = map[string]*vm.Program{}
	for i, s := range c.Stages {
		if s.ID == "" {
			return nil, fmt.Errorf("chain: stages[%d]: missing id", i)
		}
		if _, dup := c.stage[s.ID]; dup {
			return nil, fmt.Errorf("chain: stage %q declared twice", s.ID)
		}
		if s.Verifier == "" {
			return nil, fmt.Errorf("chain: stage %q: missing verifier", s.ID)
		}
		p, err := harness.CompileCondition(s.Verifier)
		if err != nil {
			return nil, fmt.Errorf("chain: stage %q: %w", s.ID, err)
		}
		c.stage[s.ID] = p
	}
	for i, e := range c.Edges {
		if c.stage[e.From] == nil || c.stage[e.To] == nil {
			return nil, fmt.Errorf("chain: edges[%d]: %s -> %s: both ends must be declared stages", i, e.From, e.To)
		}
		if !(e.Weight > 0) {
			return nil, fmt.Errorf("chain: edges[%d]: %s -> %s: weight must be > 0", i, e.From, e.To)
		}
	}
	c.mile = map[string]*vm.Program{}
	for i, m := range c.Milestones {
		if m.ID == "" {
			return nil, fmt.Errorf("chain: milestones[%d]: missing id", i)
		}
		if _, dup := c.mile[m.ID]; dup {
			return nil, fmt.Errorf("chain: milestone %q declared twice", m.ID)
		}
		var p *vm.Program
		if m.Verifier != "" {
			var err error
			if p, err = harness.CompileCondition(m.Verifier); err != nil {
				return nil, fmt.Errorf("chain: milestone %q: %w", m.ID, err)
			}
		}
		c.mile[m.ID] = p
	}
	return &c, nil
}

// LoadChain reads a chain file.
func LoadChain(path string) (*Chain, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseChain(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Sample is one recorded state a verifier sees: the state.json fields at
// top level, plus step, events (this episode's), all_events and
// milestones (cumulative over the run), tags.
type Sample struct {
	Step int64
	Env  map[string]any
}

// StageResult is one stage's verdict.
type StageResult struct {
	ID     string `json:"id"`
	Passed bool   `json:"passed"`
	Step   int64  `json:"step,omitempty"` // the first step where it held
	Index  int    `json:"-"`
}

// Result is a run's audit.
type Result struct {
	Label      string          `json:"label"`
	Samples    int             `json:"samples"`
	TSR        float64         `json:"tsr"`
	WGP        float64         `json:"wgp"`
	VMP        float64         `json:"vmp"`
	Passed     int             `json:"passed"`
	Planned    int             `json:"planned"`
	Stages     []StageResult   `json:"stages"`
	Milestones map[string]bool `json:"milestones"` // eligible ones: reached?
}

// Evaluate computes the metrics over samples in recorded order.
func (c *Chain) Evaluate(label string, samples []Sample) Result {
	res := Result{Label: label, Samples: len(samples), Planned: len(c.Stages), Milestones: map[string]bool{}}
	first := map[string]int{}
	for _, s := range c.Stages {
		sr := StageResult{ID: s.ID, Index: -1}
		for i, smp := range samples {
			if ok, _ := harness.EvalCondition(c.stage[s.ID], smp.Env); ok {
				sr.Passed, sr.Step, sr.Index = true, smp.Step, i
				first[s.ID] = i
				break
			}
		}
		if sr.Passed {
			res.Passed++
		}
		res.Stages = append(res.Stages, sr)
	}
	res.TSR = ratio(float64(res.Passed), float64(res.Planned))
	var num, den float64
	for _, e := range c.Edges {
		if e.Strict != nil && !*e.Strict {
			continue
		}
		den += e.Weight
		fi, okF := first[e.From]
		ti, okT := first[e.To]
		if okF && okT && ti >= fi {
			num += e.Weight
		}
	}
	res.WGP = ratio(num, den)
	var reached, eligible float64
	for _, m := range c.Milestones {
		if m.Eligible != nil && !*m.Eligible {
			continue
		}
		eligible++
		hit := false
		for _, smp := range samples {
			if p := c.mile[m.ID]; p != nil {
				hit, _ = harness.EvalCondition(p, smp.Env)
			} else {
				ms, _ := smp.Env["milestones"].([]any)
				for _, x := range ms {
					if x == m.ID {
						hit = true
					}
				}
			}
			if hit {
				break
			}
		}
		res.Milestones[m.ID] = hit
		if hit {
			reached++
		}
	}
	res.VMP = ratio(reached, eligible)
	return res
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Samples reads the recorded states of store s, every life in order: per
// episode its state/state.json (the start), then outcome.json end_state
// when MFM recorded one, with the episode's events and the cumulative
// milestones (state milestones and outcome milestone_transition).
func Samples(s *episodes.Store) ([]Sample, error) {
	lives, err := s.Lives()
	if err != nil {
		return nil, err
	}
	var out []Sample
	var allEvents []any
	miles := []any{}
	seen := map[string]bool{}
	addMile := func(v any) {
		if id, ok := v.(string); ok && !seen[id] {
			seen[id] = true
			miles = append(miles, id)
		}
	}
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		for _, r := range rows {
			dir := l.RowDir(&r)
			o, err := episodes.ReadOutcome(dir)
			if err != nil {
				o = &episodes.Outcome{} // the episode's outcome is not recorded
			}
			var evs []any
			if o.Events != nil {
				evs = anySlice(o.Events)
			}
			allEvents = append(allEvents, evs...)
			mk := func(st map[string]any, step int64, withEvents bool) Sample {
				env := map[string]any{}
				for k, v := range st {
					env[k] = v
				}
				if ms, ok := st["milestones"].([]any); ok {
					for _, m := range ms {
						addMile(m)
					}
				}
				env["step"] = step
				env["life"] = l.N
				env["episode"] = r.ID
				env["tags"] = anySlice(r.Tags)
				if withEvents {
					env["events"] = evs
				} else {
					env["events"] = []any{}
				}
				env["all_events"] = append([]any(nil), allEvents...)
				env["milestones"] = append([]any(nil), miles...)
				if _, ok := env["inventory"]; !ok {
					env["inventory"] = map[string]any{}
				}
				return Sample{Step: step, Env: env}
			}
			if st, err := episodes.ReadState(dir); err == nil {
				if fields, err := st.Fields(); err == nil {
					out = append(out, mk(fields, r.FirstStep, false))
				}
			}
			for _, m := range o.MilestoneTransition {
				addMile(m)
			}
			var end map[string]any
			if o.EndState != nil {
				end, _ = o.EndState.Fields()
			}
			if end == nil && len(out) > 0 {
				// the paper records no end state: the start state with this
				// episode's events and milestones
				end = map[string]any{}
				for k, v := range out[len(out)-1].Env {
					end[k] = v
				}
			}
			if end != nil {
				out = append(out, mk(end, r.LastStep, true))
			}
		}
	}
	return out, nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Run audits store dir under label.
func Run(c *Chain, label, dir string) (Result, error) {
	s, err := episodes.Open(dir)
	if err != nil {
		return Result{}, err
	}
	smp, err := Samples(s)
	if err != nil {
		return Result{}, err
	}
	return c.Evaluate(label, smp), nil
}
