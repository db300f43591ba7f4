package task

import (
	"math"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/harness"
)

// Observation is one logged step: the state after it and the events it
// reported (the recorder's vocabulary: "hurt fall 3", "craft wood 4", …).
type Observation struct {
	Step   int64
	State  harness.State
	Events []string
}

// Reached is a milestone reached at a step.
type Reached struct {
	Name  string `json:"name"`
	When  string `json:"when"`
	Step  int64  `json:"step"`
	Index int    `json:"index"` // position in the task's list
}

// Tracker evaluates a task's milestones on a sequence of observations, in
// order: the first observation is the start (for depth, away, near
// start). It is not safe for concurrent use.
type Tracker struct {
	t       *Task
	start   *harness.State
	reached []Reached
	got     map[string]bool
	crafted map[string]float64
	hurt    float64 // damage since the last milestone reached
	last    harness.State
}

// NewTracker returns a tracker for t with nothing observed.
func NewTracker(t *Task) *Tracker {
	return &Tracker{t: t, got: map[string]bool{}, crafted: map[string]float64{}}
}

// SetStart fixes the start state (otherwise the first observation's).
func (tr *Tracker) SetStart(s harness.State) { c := s; tr.start = &c }

// Observe evaluates the milestones on one more observation and returns
// those first reached at it, in the task's order.
func (tr *Tracker) Observe(o Observation) []Reached {
	if tr.start == nil {
		tr.SetStart(o.State)
	}
	for _, e := range o.Events {
		f := strings.Fields(e)
		switch {
		case len(f) >= 2 && (f[0] == "craft" || f[0] == "crafted"):
			n := 1.0
			if len(f) >= 3 {
				if v, err := strconv.ParseFloat(strings.TrimPrefix(f[2], "+"), 64); err == nil {
					n = v
				}
			}
			tr.crafted[shortItem(f[1])] += n
		case len(f) >= 3 && f[0] == "hurt":
			if v, err := strconv.ParseFloat(f[2], 64); err == nil {
				tr.hurt += math.Abs(v)
			}
		}
	}
	tr.last = o.State
	var out []Reached
	for i, m := range tr.t.Milestones {
		if tr.got[m.Name] {
			continue
		}
		if tr.t.Ordered && len(tr.reached) != i {
			break
		}
		if tr.holds(m.pred, o.State) {
			r := Reached{Name: m.Name, When: m.When, Step: o.Step, Index: i}
			tr.got[m.Name] = true
			tr.reached = append(tr.reached, r)
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		tr.hurt = 0
	}
	return out
}

// Reached is every milestone reached so far, in the order reached.
func (tr *Tracker) Reached() []Reached { return append([]Reached(nil), tr.reached...) }

// Done reports whether every milestone is reached.
func (tr *Tracker) Done() bool { return len(tr.reached) == len(tr.t.Milestones) }

// Pending is the milestones not reached yet, in the task's order.
func (tr *Tracker) Pending() []Milestone {
	var out []Milestone
	for _, m := range tr.t.Milestones {
		if !tr.got[m.Name] {
			out = append(out, m)
		}
	}
	return out
}

// Crafted is the number of each item crafted so far.
func (tr *Tracker) Crafted() map[string]float64 {
	m := make(map[string]float64, len(tr.crafted))
	for k, v := range tr.crafted {
		m[k] = v
	}
	return m
}

// Evaluate runs a fresh tracker over seq and returns the milestones
// reached, each with the step it was first reached at.
func Evaluate(t *Task, seq []Observation) []Reached {
	tr := NewTracker(t)
	for _, o := range seq {
		tr.Observe(o)
	}
	return tr.Reached()
}

func shortItem(s string) string { return strings.TrimPrefix(s, "default:") }

func (tr *Tracker) holds(p Predicate, s harness.State) bool {
	if len(p.Clauses) == 0 {
		return false
	}
	for _, c := range p.Clauses {
		if !tr.clause(c, s) {
			return false
		}
	}
	return true
}

func (tr *Tracker) clause(c Clause, s harness.State) bool {
	switch c.Kind {
	case ClauseAlive:
		return s.Health > 0
	case ClauseInv:
		return compare(float64(s.Inventory[shortItem(c.Name)]), c.Op, c.Value)
	case ClauseCrafted:
		n := tr.crafted[shortItem(c.Name)]
		if m, ok := s.Extra["crafted"].(map[string]any); ok {
			if v, ok := m[shortItem(c.Name)].(float64); ok && v > n {
				n = v
			}
		}
		return compare(n, c.Op, c.Value)
	case ClauseDepth:
		return compare(tr.start.Y-s.Y, c.Op, c.Value)
	case ClauseAway:
		return compare(math.Hypot(s.X-tr.start.X, s.Z-tr.start.Z), c.Op, c.Value)
	case ClauseHurt:
		return compare(tr.hurt, c.Op, c.Value)
	case ClauseHealth:
		return compare(s.Health, c.Op, c.Value)
	case ClauseCoord:
		v := map[string]float64{"x": s.X, "y": s.Y, "z": s.Z}[c.Name]
		return compare(v, c.Op, c.Value)
	case ClauseNear:
		x, y, z := c.X, c.Y, c.Z
		if c.FromStart {
			x, y, z = tr.start.X, tr.start.Y, tr.start.Z
		}
		if c.Flat {
			return math.Hypot(s.X-x, s.Z-z) <= c.R
		}
		return math.Sqrt((s.X-x)*(s.X-x)+(s.Y-y)*(s.Y-y)+(s.Z-z)*(s.Z-z)) <= c.R
	}
	return false
}
