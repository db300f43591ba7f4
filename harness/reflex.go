package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Reflex is a script in mine/reflexes/ that the harness runs on a state
// sample while actions execute. Its declaration (docs/PROCEDURES.md):
//
//   - the optional header line `# mfm-when: EXPR` is a condition over the
//     sample (expr-lang syntax: `health_prev - health >= 3 && lava_frac < 0.01`);
//     the script is started only on samples where it holds. Without one the
//     script runs on every sample and decides itself, as the paper's do.
//   - the script reads the sample JSON on stdin and prints nothing (did not
//     fire) or {"stop": bool, "note": "...", "actions": [...]}: a note for
//     the log, stop to drop the rest of the plan, actions (expanded like a
//     procedure's) to run at once.
//   - `# mfm-disabled: reason` keeps it on disk and never runs it.
type Reflex struct {
	*Procedure
	cond *vm.Program // nil: always
}

// CompileCondition compiles an mfm-when (or chain verifier) expression to
// a boolean program; undefined names are nil rather than errors.
func CompileCondition(src string) (*vm.Program, error) {
	p, err := expr.Compile(src, expr.AsBool(), expr.AllowUndefinedVariables())
	if err != nil {
		return nil, fmt.Errorf("condition %q: %w", src, err)
	}
	return p, nil
}

// EvalCondition runs a compiled condition on env. A run-time error (a
// missing field compared with a number) means the condition does not hold;
// it is returned for logging.
func EvalCondition(p *vm.Program, env map[string]any) (bool, error) {
	v, err := expr.Run(p, env)
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}

// Holds reports whether the reflex's condition holds on sample (always
// true without an mfm-when line).
func (x *Reflex) Holds(sample map[string]any) (bool, error) {
	if x.cond == nil {
		return true, nil
	}
	return EvalCondition(x.cond, sample)
}

// ReflexSet is the enabled and disabled reflexes of a store.
type ReflexSet struct {
	Runner   *Runner // runs the scripts and expands their actions (Runner.Dir: mine/procedures)
	Dir      string  // mine/reflexes
	Reflexes []*Reflex
}

// LoadReflexes loads mine/reflexes (dir). A reflex whose header cannot be
// used (bad mfm-when, unknown interpreter) is left out and reported in the
// returned error, joined (each a *LoadError); the others still load.
func LoadReflexes(dir string, r *Runner) (*ReflexSet, error) {
	procs, bad, err := ListProcedures(dir, KindReflex)
	if err != nil {
		return nil, err
	}
	set := &ReflexSet{Runner: r, Dir: dir}
	for _, p := range procs {
		x, err := NewReflex(p)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		set.Reflexes = append(set.Reflexes, x)
	}
	return set, errors.Join(bad...)
}

// NewReflex compiles the mfm-when condition of a loaded reflex; one that
// does not compile is a *LoadError ("reflex NAME: mfm-when: …").
func NewReflex(p *Procedure) (*Reflex, error) {
	x := &Reflex{Procedure: p}
	if strings.TrimSpace(p.When) != "" {
		c, err := CompileCondition(p.When)
		if err != nil {
			return nil, &LoadError{p.Name, p.Kind, p.Path, fmt.Errorf("reflex %s: mfm-when: %w", p.Name, err)}
		}
		x.cond = c
	}
	return x, nil
}

// Firing is one reflex that fired on a sample.
type Firing struct {
	Reflex string   `json:"reflex"`
	Stop   bool     `json:"stop"`
	Note   string   `json:"note,omitempty"`
	Items  []Item   `json:"actions,omitempty"`
	Err    string   `json:"error,omitempty"` // the reflex failed; it did not fire
	Step   int64    `json:"step"`
	Chain  []string `json:"-"`
}

// LogNote is the [NOTE] text the harness writes for a firing, in the
// paper's form: "[REFLEX fell] dropping 2.5 blocks ...".
func (f Firing) LogNote() string {
	if f.Err != "" {
		return "[REFLEX " + f.Reflex + "] failed: " + f.Err
	}
	return "[REFLEX " + f.Reflex + "] " + f.Note
}

// Check runs every enabled reflex whose condition holds on sample and
// returns those that fired (printed something) or failed, in name order.
// Disabled reflexes are skipped.
func (s *ReflexSet) Check(ctx context.Context, sample map[string]any) []Firing {
	if s == nil || len(s.Reflexes) == 0 {
		return nil
	}
	data, err := json.Marshal(sample)
	if err != nil {
		return []Firing{{Reflex: "*", Err: "sample is not JSON: " + err.Error()}}
	}
	step := int64(numOf(sample["step"]))
	var out []Firing
	for _, x := range s.Reflexes {
		if x.IsDisabled() {
			continue
		}
		ok, cerr := x.Holds(sample)
		if cerr != nil {
			s.Runner.logger().Debug("reflex condition did not evaluate", "reflex", x.Name, "when", x.When, "err", cerr)
		}
		if !ok {
			continue
		}
		f, fired := s.run(ctx, x, data)
		if fired {
			f.Step = step
			out = append(out, f)
		}
	}
	return out
}

func (s *ReflexSet) run(ctx context.Context, x *Reflex, sample []byte) (Firing, bool) {
	f := Firing{Reflex: x.Name}
	stdout, stderr, code, reason, err := s.Runner.spawn(ctx, x.Procedure, map[string]any{}, sample, []string{x.Name})
	if err != nil {
		f.Err = (&ProcError{Procedure: x.Name, Reason: reason, Message: err.Error(), Stderr: stderr, ExitCode: code}).Error()
		return f, true
	}
	if len(strings.TrimSpace(string(stdout))) == 0 {
		return f, false
	}
	var o output
	if err := decodeOutput(stdout, &o); err != nil {
		f.Err = err.Error()
		return f, true
	}
	f.Stop, f.Note = o.Stop, o.Note
	if len(o.Actions) > 0 {
		res := &Result{Name: x.Name}
		if err := s.Runner.expandItems(ctx, res, o.Actions, sample, []string{"reflex:" + x.Name}); err != nil {
			f.Err = err.Error()
			return f, true
		}
		f.Items = res.Items
	}
	return f, true
}

// Sample builds the flat state a reflex sees from the state after a step,
// the state a few ticks earlier (prev; may be nil) and the running entry
// (atom name or "raw"): state.json's fields, with vitals (health, food, …)
// also at the top level, and for each top-level field F of prev an F_prev
// (health_prev, food_prev, pos_prev, …), plus "entry".
func Sample(cur State, prev *State, entry string) map[string]any {
	m := flatState(cur)
	if prev != nil {
		for k, v := range flatState(*prev) {
			m[k+"_prev"] = v
		}
	}
	m["entry"] = entry
	return m
}

func flatState(s State) map[string]any {
	m := stateJSON(s)
	if v, ok := m["vitals"].(map[string]any); ok {
		for k, x := range v {
			if _, taken := m[k]; !taken {
				m[k] = x
			}
		}
	}
	// normalise to JSON types (ints in inventory become float64) so
	// conditions compare numbers uniformly
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

func numOf(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return 0
}

// reflexWatch checks a ReflexSet on the steps of a procedure call, as
// Runner.Call and the record protocol's call op do: after every
// every-th step of each item (the count restarts with each item), on
// Sample(state, the state every steps earlier, the item's entry), until
// a reflex stops the plan.
type reflexWatch struct {
	set     *ReflexSet
	every   int
	hist    []State // the last every+1 states, over all items
	item    int     // the item the last step belonged to
	n       int     // steps of that item
	stopped bool
}

func newReflexWatch(set *ReflexSet, every int) *reflexWatch {
	if every <= 0 {
		every = 4
	}
	return &reflexWatch{set: set, every: every, item: -1}
}

// observe notes a step of item i (entry its name) and returns the
// firings of the reflexes checked on it: none between samples, after a
// stop, or without reflexes.
func (w *reflexWatch) observe(ctx context.Context, s State, i int, entry string) []Firing {
	if w.stopped {
		return nil
	}
	w.hist = append(w.hist, s)
	if len(w.hist) > w.every+1 {
		w.hist = w.hist[len(w.hist)-w.every-1:]
	}
	if i != w.item {
		w.item, w.n = i, 0
	}
	w.n++
	if w.set == nil || w.n%w.every != 0 {
		return nil
	}
	var prev *State
	if len(w.hist) > w.every {
		p := w.hist[len(w.hist)-1-w.every]
		prev = &p
	}
	return w.set.Check(ctx, Sample(s, prev, entry))
}

// apply applies the firings of one sample taken during item i of queue
// and returns the new queue and the notes to record, one per firing in
// order. The reflexes' own actions, in firing (name) order, run right
// after item i. When any of them stops, the rest of the queue is dropped
// (each stopping reflex's note says how many actions) and the watch
// stops checking; otherwise the rest follows their actions.
func (w *reflexWatch) apply(queue []Item, i int, fired []Firing) ([]Item, []string) {
	rest := queue[i+1:]
	var added []Item
	stop := false
	for _, f := range fired {
		added = append(added, f.Items...)
		stop = stop || f.Stop
	}
	notes := make([]string, len(fired))
	for k, f := range fired {
		notes[k] = f.LogNote()
		if f.Stop {
			notes[k] += fmt.Sprintf(" -- the runner dropped the rest of your plan (%d action(s)).", len(rest))
		}
	}
	out := append(append([]Item(nil), queue[:i+1]...), added...)
	if stop {
		w.stopped = true
	} else {
		out = append(out, rest...)
	}
	return out, notes
}
