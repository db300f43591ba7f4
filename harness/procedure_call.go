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
	// State is the state JSON the procedure reads on stdin; when nil the
	// caller's latest recorded state is not known here, so pass it.
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
			fm := map[string]any{"reflex": f.Reflex, "stop": f.Stop, "note": f.Note, "step": f.Step}
			if f.Err != "" {
				fm["error"] = f.Err
			}
			fs[i] = fm
		}
		m["reflexes"] = fs
	}
	return m
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
	res, runErr := r.Run(ctx, name, argm, opt.State)
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
	state := []byte("{}")
	if r.last != nil {
		if b, err := episodes.MarshalPy(stateJSON(*r.last)); err == nil {
			state = b
		}
	}
	argm := map[string]any{}
	for _, a := range c.Args {
		argm[a.Name] = a.Value
	}
	res, runErr := r.opt.Procedures.Run(ctx, c.Kind, argm, state)
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
	r.cur.proc = cr
	return cr, nil, nil
}

// EndProcedure ends an episode opened by BeginProcedure, recording outcome
// (OutcomeOK when ""; OutcomeStopped, OutcomeFailed or the harness's own
// word) and done, the number of expanded items executed (-1: all).
func (r *Recorder) EndProcedure(outcome, errText string, done int) (episodes.Row, error) {
	if r.cur == nil || r.cur.proc == nil {
		return episodes.Row{}, errors.New("end: no procedure call in progress (use the call op)")
	}
	cr := r.cur.proc
	if outcome != "" {
		cr.Outcome = outcome
	}
	cr.Error = errText
	cr.Done = done
	if done < 0 {
		cr.Done = len(cr.Expansion)
	}
	return endCall(r, cr)
}
