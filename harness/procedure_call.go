package harness

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/mfm-project/mfm/episodes"
)

// Outcomes of a recorded procedure call (action.json "procedure"."outcome").
const (
	OutcomeOK      = "ok"      // every expanded item ran
	OutcomeStopped = "stopped" // a reflex stopped it; the rest was dropped
	OutcomeFailed  = "failed"  // executing an item failed
	// A refusal or other *ProcError records its Reason as the outcome
	// (refused, timeout, disabled, unusable, ...).
)

// ExecFunc executes one expanded item in the environment, calling emit
// after every environment step with the step (the state after it). emit
// returns ErrStopped when a reflex stopped the plan: ExecFunc must then
// return (it may return that error).
type ExecFunc func(ctx context.Context, it Item, emit func(Step) error) error

// ErrStopped is returned by emit when a reflex asked to stop.
var ErrStopped = errors.New("stopped by a reflex")

// CallOptions configure Runner.Call.
type CallOptions struct {
	// State is the state JSON the procedure reads on stdin; nil: the
	// recorder's latest state in state.json form, as the call op uses
	// ({} before any).
	State []byte
	// Reflexes are checked every SampleEvery steps (default 4) on
	// Sample(state, state SampleEvery steps earlier, entry).
	Reflexes    *ReflexSet
	SampleEvery int
	// Plan, Header, Meta and Budget go into the recorded Call.
	Plan   []string
	Header []string
	Meta   map[string]any
	Budget int64
}

// CallRecord is what action.json "procedure" holds for a call: the call,
// its arguments, the expansion, the outcome and reflex firings.
type CallRecord struct {
	Name        string           `json:"name"`
	Args        map[string]any   `json:"args"`
	Outcome     string           `json:"outcome"`
	Error       string           `json:"error,omitempty"`
	Expansion   []map[string]any `json:"expansion"`
	Done        int              `json:"done"` // items executed (whole or in part)
	Invocations []Invocation     `json:"invocations"`
	Reflexes    []Firing         `json:"reflexes,omitempty"`
}

func (c *CallRecord) meta() map[string]any {
	exp := make([]any, len(c.Expansion))
	for i, e := range c.Expansion {
		exp[i] = e
	}
	invs := make([]any, len(c.Invocations))
	for i, v := range c.Invocations {
		invs[i] = map[string]any{"name": v.Name, "args": v.Args, "depth": v.Depth, "sha256": v.SHA256, "ms": v.Millis, "exit": v.ExitCode}
	}
	m := map[string]any{"name": c.Name, "args": c.Args, "outcome": c.Outcome, "expansion": exp, "done": c.Done, "invocations": invs}
	if c.Error != "" {
		m["error"] = c.Error
	}
	if len(c.Reflexes) > 0 {
		fs := make([]any, len(c.Reflexes))
		for i, f := range c.Reflexes {
			fs[i] = f.record()
		}
		m["reflexes"] = fs
	}
	return m
}

// record is a firing as action.json "procedure"."reflexes" and the record
// protocol's step reply show it.
func (f Firing) record() map[string]any {
	fm := map[string]any{"reflex": f.Reflex, "stop": f.Stop, "note": f.Note, "step": f.Step}
	if f.Err != "" {
		fm["error"] = f.Err
	}
	return fm
}

// ArgsOf turns an argument object into ordered Args (sorted by name) for
// a Call.
func ArgsOf(m map[string]any) []Arg {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Arg, len(keys))
	for i, k := range keys {
		out[i] = Arg{Name: k, Value: m[k]}
	}
	return out
}

// Call runs procedure name with args and records the whole call as one
// episode of rec: Begin(Call{Kind: name, Args}), the executed items' steps,
// reflex notes, End. action.json gets "procedure": the CallRecord (call,
// arguments, expansion, outcome), so `--action NAME` finds every call. A
// procedure that refuses (or times out, is disabled, unusable, …) is
// recorded too, as an episode without steps whose note is the refusal;
// its *ProcError is returned with the row. Any other error (mine/procedures
// cannot be read) records nothing.
func (r *Runner) Call(ctx context.Context, rec *Recorder, name string, args []Arg, exec ExecFunc, opt CallOptions) (*CallRecord, episodes.Row, error) {
	argm := map[string]any{}
	for _, a := range args {
		argm[a.Name] = a.Value
	}
	state := opt.State
	if state == nil {
		state = rec.latestStateJSON()
	}
	res, runErr := r.Run(ctx, name, argm, state)
	cr := &CallRecord{Name: name, Args: argm, Outcome: OutcomeOK, Expansion: []map[string]any{}}
	if res != nil {
		cr.Invocations = res.Invocations
		for _, it := range res.Items {
			e := it.Entry()
			e["from"] = it.From
			cr.Expansion = append(cr.Expansion, e)
		}
	}
	var pe *ProcError
	if runErr != nil && !errors.As(runErr, &pe) {
		// not the procedure's doing (mine/procedures unreadable): nothing
		// is recorded
		return cr, episodes.Row{}, fmt.Errorf("call %s: %w", name, runErr)
	}
	call := Call{Kind: name, Args: args, Plan: opt.Plan, Header: opt.Header, Meta: opt.Meta, Budget: opt.Budget}
	if err := rec.Begin(call); err != nil {
		return cr, episodes.Row{}, fmt.Errorf("call %s: %w", name, err)
	}
	if runErr != nil {
		cr.Outcome, cr.Error = pe.Reason, pe.Error()
		_ = rec.Note(name + ": " + pe.Reason + ": " + pe.Message)
		row, err := endCall(rec, cr)
		if err != nil {
			return cr, row, errors.Join(runErr, err)
		}
		return cr, row, runErr
	}
	for _, n := range res.Notes {
		_ = rec.Note(n)
	}
	w := newReflexWatch(opt.Reflexes, opt.SampleEvery)
	queue := append([]Item(nil), res.Items...)
	var execErr error
	for i := 0; i < len(queue) && !w.stopped; i++ {
		it := queue[i]
		cr.Done++
		emit := func(s Step) error {
			if err := rec.Step(s); err != nil {
				return err
			}
			fired := w.observe(ctx, s.State, i, it.EntryName())
			if len(fired) == 0 {
				return nil
			}
			var notes []string
			queue, notes = w.apply(queue, i, fired)
			cr.Reflexes = append(cr.Reflexes, fired...)
			for _, n := range notes {
				_ = rec.Note(n)
			}
			if w.stopped {
				return ErrStopped
			}
			return nil
		}
		if err := exec(ctx, it, emit); err != nil && !errors.Is(err, ErrStopped) {
			execErr = fmt.Errorf("call %s: item %d (%s): %w", name, i, it.EntryName(), err)
			break
		}
		if w.stopped {
			// run the stopping reflexes' actions, unchecked
			for _, rit := range queue[i+1:] {
				cr.Done++
				if err := exec(ctx, rit, func(s Step) error { return rec.Step(s) }); err != nil {
					execErr = fmt.Errorf("call %s: reflex action (%s): %w", name, rit.EntryName(), err)
					break
				}
			}
		}
	}
	stopped := w.stopped
	switch {
	case execErr != nil:
		cr.Outcome, cr.Error = OutcomeFailed, execErr.Error()
		_ = rec.Note(name + ": failed: " + execErr.Error())
	case stopped:
		cr.Outcome = OutcomeStopped
	}
	row, err := endCall(rec, cr)
	if err != nil {
		return cr, row, errors.Join(execErr, err)
	}
	return cr, row, execErr
}

// endCall records the call record as action.json "procedure" and ends the
// episode (dropping it if it cannot be written).
func endCall(rec *Recorder, cr *CallRecord) (episodes.Row, error) {
	if err := rec.SetMeta("procedure", cr.meta()); err != nil {
		rec.Abort()
		return episodes.Row{}, err
	}
	row, err := rec.End()
	if err != nil {
		rec.Abort()
	}
	return row, err
}

// BeginProcedure runs procedure c.Kind with c.Args against the latest
// recorded state and opens its episode, as the record protocol's "call" op
// does: action.json "procedure" gets the call, arguments and expansion,
// and the outcome given to EndProcedure. The caller executes the returned
// expansion and sends its steps. A procedure that refuses (times out, is
// disabled, unusable, …) is recorded at once as an episode without steps
// whose note is the refusal; its row and *ProcError are returned and no
// episode stays open. Any other error (mine/procedures cannot be read)
// records nothing and returns a nil row.
func (r *Recorder) BeginProcedure(ctx context.Context, c Call) (*CallRecord, *episodes.Row, error) {
	if r.cur != nil {
		return nil, nil, fmt.Errorf("call %s: %w", c.Kind, ErrInEpisode)
	}
	if c.Kind == "" {
		return nil, nil, errors.New("call: the call needs a procedure name (kind)")
	}
	argm := map[string]any{}
	for _, a := range c.Args {
		argm[a.Name] = a.Value
	}
	res, runErr := r.opt.Procedures.Run(ctx, c.Kind, argm, r.latestStateJSON())
	cr := &CallRecord{Name: c.Kind, Args: argm, Outcome: OutcomeOK, Expansion: []map[string]any{}}
	if res != nil {
		cr.Invocations = res.Invocations
		for _, it := range res.Items {
			e := it.Entry()
			e["from"] = it.From
			cr.Expansion = append(cr.Expansion, e)
		}
	}
	var pe *ProcError
	if runErr != nil && !errors.As(runErr, &pe) {
		// not the procedure's doing (mine/procedures unreadable): nothing
		// is recorded
		return cr, nil, fmt.Errorf("call %s: %w", c.Kind, runErr)
	}
	if err := r.Begin(c); err != nil {
		return cr, nil, fmt.Errorf("call %s: %w", c.Kind, err)
	}
	if runErr != nil {
		cr.Outcome, cr.Error = pe.Reason, pe.Error()
		_ = r.Note(c.Kind + ": " + pe.Reason + ": " + pe.Message)
		row, err := endCall(r, cr)
		if err != nil {
			return cr, nil, errors.Join(runErr, err)
		}
		return cr, &row, runErr
	}
	for _, n := range res.Notes {
		_ = r.Note(n)
	}
	r.cur.proc = &procCall{rec: cr, plan: append([]Item(nil), res.Items...),
		watch: newReflexWatch(r.reflexSet(), r.opt.SampleEvery)}
	return cr, nil, nil
}

// procCall is the state of an episode opened by BeginProcedure: the plan
// (the expansion, with reflexes' actions inserted), the item executing
// and the reflexes watching.
type procCall struct {
	rec   *CallRecord
	plan  []Item
	item  int
	watch *reflexWatch
}

// reflexSet is the reflexes a call op's episode is checked with:
// Options.Reflexes, or the store's mine/reflexes loaded afresh (the agent
// may have changed them since the last call); none with NoReflexes.
func (r *Recorder) reflexSet() *ReflexSet {
	switch {
	case r.opt.NoReflexes:
		return nil
	case r.opt.Reflexes != nil:
		return r.opt.Reflexes
	}
	set, err := LoadReflexes(r.reflexDir, r.opt.Procedures)
	if err != nil {
		r.opt.Logger.Warn("record: reflexes left out", "dir", r.reflexDir, "err", err)
	}
	return set
}

// ReflexResult is what the reflexes did on one step of a call episode.
type ReflexResult struct {
	// Firings are the reflexes that fired (or failed) on the step, in
	// name order; recorded in action.json "procedure"."reflexes", their
	// notes in the episode's notes.
	Firings []Firing
	// Stop: a reflex stopped the plan. Abandon the current item now and
	// execute Plan after it (the reflexes' actions); no more checks.
	Stop bool
	// Plan is the whole plan when the firings changed it (nil when not):
	// items up to the current one as before, then the reflexes' actions,
	// then (without Stop) the rest. Continue with the item after the
	// current one.
	Plan []Item
}

// ProcedureStep records s as a step of item (an index into the plan; -1:
// the item of the previous step, first 0) of the episode opened by
// BeginProcedure and checks the reflexes on it as Runner.Call does: after
// every SampleEvery-th step of an item (the count restarts when the item
// changes), until one stops the plan. An item outside the plan is an
// error and records nothing.
func (r *Recorder) ProcedureStep(ctx context.Context, s Step, item int) (*ReflexResult, error) {
	if r.cur == nil || r.cur.proc == nil {
		return nil, errors.New("step: no procedure call in progress (use the call op)")
	}
	pc := r.cur.proc
	if item >= len(pc.plan) {
		return nil, fmt.Errorf("step: item %d is outside the plan (%d item(s))", item, len(pc.plan))
	}
	if item < 0 {
		item = pc.item
	}
	if err := r.Step(s); err != nil {
		return nil, err
	}
	res := &ReflexResult{}
	if item >= len(pc.plan) {
		return res, nil // an empty plan: nothing to check
	}
	pc.item = item
	fired := pc.watch.observe(ctx, s.State, item, pc.plan[item].EntryName())
	if len(fired) == 0 {
		return res, nil
	}
	var notes []string
	pc.plan, notes = pc.watch.apply(pc.plan, item, fired)
	pc.rec.Reflexes = append(pc.rec.Reflexes, fired...)
	for _, n := range notes {
		_ = r.Note(n)
	}
	res.Firings, res.Stop, res.Plan = fired, pc.watch.stopped, pc.plan
	return res, nil
}

// EndProcedure ends an episode opened by BeginProcedure, recording outcome
// (when "": OutcomeStopped if a reflex stopped the plan, else OutcomeOK;
// or OutcomeStopped, OutcomeFailed or the harness's own word) and done,
// the number of plan items executed (-1: all, the reflexes' actions
// included).
func (r *Recorder) EndProcedure(outcome, errText string, done int) (episodes.Row, error) {
	if r.cur == nil || r.cur.proc == nil {
		return episodes.Row{}, errors.New("end: no procedure call in progress (use the call op)")
	}
	pc := r.cur.proc
	cr := pc.rec
	switch {
	case outcome != "":
		cr.Outcome = outcome
	case pc.watch.stopped:
		cr.Outcome = OutcomeStopped
	}
	cr.Error = errText
	cr.Done = done
	if done < 0 {
		cr.Done = len(pc.plan)
	}
	return endCall(r, cr)
}

// latestStateJSON is the latest recorded state as state.json has it, the
// stdin of a procedure called now; {} before any state.
func (r *Recorder) latestStateJSON() []byte {
	if r.last != nil {
		if b, err := episodes.MarshalPy(stateJSON(*r.last)); err == nil {
			return b
		}
	}
	return []byte("{}")
}
