package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Request is one line of the `mfmd record` protocol (docs/RECORD.md): a
// JSON object whose "op" is initial, begin, call, step, note, end or abort.
type Request struct {
	Op          string          `json:"op"`
	State       *WireState      `json:"state,omitempty"`         // initial, step
	Call        *WireCall       `json:"call,omitempty"`          // begin, call
	Outcome     string          `json:"outcome,omitempty"`       // end of a call: ok, stopped, failed, …
	Error       string          `json:"error,omitempty"`         // end of a call: what failed
	Done        *int            `json:"done,omitempty"`          // end of a call: items executed (default all)
	Item        *int            `json:"item,omitempty"`          // step of a call: the plan item executing (default: the previous step's, first 0)
	Action      any             `json:"action,omitempty"`        // step
	Events      []string        `json:"events,omitempty"`        // step
	Cells       []WireCell      `json:"cells,omitempty"`         // step
	Text        string          `json:"text,omitempty"`          // note
	FramePNGB64 string          `json:"frame_png_b64,omitempty"` // initial, step
	FramePath   string          `json:"frame_path,omitempty"`    // initial, step
	ID          json.RawMessage `json:"id,omitempty"`            // echoed in the reply
}

// WireState is a State on the wire.
type WireState struct {
	Step       *int64         `json:"step"`
	X          float64        `json:"x"`
	Y          float64        `json:"y"`
	Z          float64        `json:"z"`
	Yaw        float64        `json:"yaw"`
	Pitch      float64        `json:"pitch"`
	Inventory  map[string]int `json:"inventory"`
	Health     float64        `json:"health"`
	GUIOpen    bool           `json:"gui_open"`
	Milestones []string       `json:"milestones"`
	Extra      map[string]any `json:"extra"`
}

// WireCall is a Call on the wire; args is a JSON object whose key order is
// kept.
type WireCall struct {
	Kind   string          `json:"kind"`
	Args   json.RawMessage `json:"args"`
	Raw    map[string]any  `json:"raw"`
	Budget int64           `json:"budget"`
	Plan   []string        `json:"plan"`
	Header []string        `json:"header"`
	Meta   map[string]any  `json:"meta"`
}

// WireCell is a Cell on the wire: {"cell": [x, y, z], "kind": "placed", "item": "dirt"}.
type WireCell struct {
	Cell [3]int `json:"cell"`
	Kind string `json:"kind"`
	Item string `json:"item"`
}

// ParseRequest decodes and validates one protocol line. Frames given as
// frame_path are not read here.
func ParseRequest(line []byte) (Request, error) {
	var q Request
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	d.DisallowUnknownFields()
	if err := d.Decode(&q); err != nil {
		return Request{}, fmt.Errorf("not a valid request object: %w", err)
	}
	if d.More() {
		return Request{}, errors.New("more than one JSON value on the line")
	}
	need := func(what string, ok bool) error {
		if !ok {
			return fmt.Errorf("%s: missing %s", q.Op, what)
		}
		return nil
	}
	switch q.Op {
	case "initial", "step":
		if err := need(`"state"`, q.State != nil); err != nil {
			return Request{}, err
		}
		if err := need(`"state.step"`, q.State.Step != nil); err != nil {
			return Request{}, err
		}
		if q.FramePNGB64 != "" && q.FramePath != "" {
			return Request{}, fmt.Errorf("%s: give frame_png_b64 or frame_path, not both", q.Op)
		}
	case "begin":
		if err := need(`"call"`, q.Call != nil); err != nil {
			return Request{}, err
		}
		if q.Call.Kind == "" && len(q.Call.Raw) == 0 {
			return Request{}, errors.New(`begin: the call needs "kind" (a procedure) or "raw" (a low-level action)`)
		}
		if _, err := orderedArgs(q.Call.Args); err != nil {
			return Request{}, fmt.Errorf("begin: call.args: %w", err)
		}
	case "call":
		if err := need(`"call"`, q.Call != nil); err != nil {
			return Request{}, err
		}
		if q.Call.Kind == "" || len(q.Call.Raw) != 0 {
			return Request{}, errors.New(`call: the call needs "kind", a procedure in mine/procedures (and no "raw")`)
		}
		if _, err := orderedArgs(q.Call.Args); err != nil {
			return Request{}, fmt.Errorf("call: call.args: %w", err)
		}
	case "note":
		if err := need(`"text"`, q.Text != ""); err != nil {
			return Request{}, err
		}
	case "end", "abort":
	case "":
		return Request{}, errors.New(`missing "op" (want initial, begin, call, step, note, end or abort)`)
	default:
		return Request{}, fmt.Errorf("unknown op %q (want initial, begin, call, step, note, end or abort)", q.Op)
	}
	for i, c := range q.Cells {
		if c.Kind == "" {
			return Request{}, fmt.Errorf("step: cells[%d]: missing \"kind\"", i)
		}
	}
	return q, nil
}

// orderedArgs decodes a JSON object into arguments in key order.
func orderedArgs(raw json.RawMessage) ([]Arg, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("want a JSON object of name: value")
	}
	var args []Arg
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("argument %q: %w", k, err)
		}
		args = append(args, Arg{Name: k, Value: v})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	return args, nil
}

func (w *WireState) state() State {
	return State{Step: *w.Step, X: w.X, Y: w.Y, Z: w.Z, Yaw: w.Yaw, Pitch: w.Pitch, Inventory: w.Inventory,
		Health: w.Health, GUIOpen: w.GUIOpen, Milestones: w.Milestones, Extra: w.Extra}
}

func (q *Request) frame() ([]byte, error) {
	var b []byte
	switch {
	case q.FramePNGB64 != "":
		var err error
		if b, err = base64.StdEncoding.DecodeString(q.FramePNGB64); err != nil {
			return nil, fmt.Errorf("frame_png_b64: %w", err)
		}
	case q.FramePath != "":
		var err error
		if b, err = os.ReadFile(q.FramePath); err != nil {
			return nil, fmt.Errorf("frame_path: %w", err)
		}
	default:
		return nil, nil
	}
	if _, err := png.DecodeConfig(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("frame is not a PNG: %w", err)
	}
	return b, nil
}

// Reply is one line the protocol writes back per request.
type Reply struct {
	OK    bool            `json:"ok"`
	Line  int             `json:"line"`
	Op    string          `json:"op,omitempty"`
	ID    json.RawMessage `json:"id,omitempty"`
	Error string          `json:"error,omitempty"`
	// Episode is the id the op concerns (the open episode; the row's id on
	// end and initial).
	Episode string          `json:"episode,omitempty"`
	Row     json.RawMessage `json:"row,omitempty"` // end, initial: the index row as written
	// Actions is a call's expansion, to execute and send as steps.
	Actions []map[string]any `json:"actions,omitempty"`
	// Outcome is a call's outcome when it refused (refused, timeout,
	// disabled, …): the episode is already recorded, Row is its row.
	Outcome string `json:"outcome,omitempty"`
	// Reflexes are the reflexes that fired (or failed) on a step of a call
	// episode: {"reflex", "stop", "note", "step", "error"?}. When they
	// changed the plan, Actions is the whole new plan (continue with the
	// item after the step's) and Stop says to abandon the step's item now.
	Reflexes []map[string]any `json:"reflexes,omitempty"`
	Stop     bool             `json:"stop,omitempty"`
}

// Serve runs the record protocol: one request per line of in, one reply
// per line on out. A rejected line changes nothing (a bad step is not
// added; the episode stays open). It returns the number of rejected lines
// and an I/O error, if any. At EOF an open episode is dropped.
func Serve(r *Recorder, in io.Reader, out io.Writer) (int, error) {
	br := bufio.NewReaderSize(in, 1<<20)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	bad := 0
	for no := 1; ; no++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			rep := handle(r, line, no)
			if !rep.OK {
				bad++
			}
			if e := enc.Encode(rep); e != nil {
				return bad, fmt.Errorf("record: write reply: %w", e)
			}
			if e := bw.Flush(); e != nil {
				return bad, fmt.Errorf("record: write reply: %w", e)
			}
		}
		if errors.Is(err, io.EOF) {
			return bad, nil
		}
		if err != nil {
			return bad, fmt.Errorf("record: read line %d: %w", no, err)
		}
	}
}

func handle(r *Recorder, line []byte, no int) Reply {
	q, err := ParseRequest(line)
	rep := Reply{Line: no, Op: q.Op, ID: q.ID}
	fail := func(err error) Reply {
		rep.OK = false
		rep.Error = fmt.Sprintf("line %d: %v", no, err)
		if r.cur != nil {
			rep.Episode = r.cur.id
		}
		return rep
	}
	if err != nil {
		return fail(err)
	}
	switch q.Op {
	case "initial":
		fr, err := q.frame()
		if err != nil {
			return fail(fmt.Errorf("initial: %w", err))
		}
		row, err := r.Initial(q.State.state(), fr)
		if err != nil {
			return fail(err)
		}
		rep.Episode, rep.Row = row.ID, row.Raw
	case "begin":
		args, _ := orderedArgs(q.Call.Args)
		c := Call{Kind: q.Call.Kind, Args: args, Raw: q.Call.Raw, Budget: q.Call.Budget, Plan: q.Call.Plan, Header: q.Call.Header, Meta: q.Call.Meta}
		if err := r.Begin(c); err != nil {
			return fail(err)
		}
		rep.Episode = r.cur.id
	case "call":
		args, _ := orderedArgs(q.Call.Args)
		c := Call{Kind: q.Call.Kind, Args: args, Budget: q.Call.Budget, Plan: q.Call.Plan, Header: q.Call.Header, Meta: q.Call.Meta}
		cr, row, err := r.BeginProcedure(context.Background(), c)
		var pe *ProcError
		switch {
		case err != nil && row != nil && errors.As(err, &pe):
			rep.Episode, rep.Row, rep.Outcome, rep.Error = row.ID, row.Raw, cr.Outcome, err.Error()
		case err != nil:
			return fail(err)
		default:
			rep.Episode = r.cur.id
			rep.Actions = planEntries(r.cur.proc.plan)
		}
	case "step":
		fr, err := q.frame()
		if err != nil {
			return fail(fmt.Errorf("step: %w", err))
		}
		s := Step{Action: q.Action, State: q.State.state(), Events: q.Events, FramePNG: fr}
		for _, c := range q.Cells {
			s.Cells = append(s.Cells, Cell{X: c.Cell[0], Y: c.Cell[1], Z: c.Cell[2], Kind: c.Kind, Item: c.Item})
		}
		if r.cur == nil || r.cur.proc == nil {
			if q.Item != nil {
				return fail(errors.New("step: item belongs to an episode opened by the call op"))
			}
			if err := r.Step(s); err != nil {
				return fail(err)
			}
			rep.Episode = r.cur.id
			break
		}
		item := -1
		if q.Item != nil {
			if *q.Item < 0 {
				return fail(fmt.Errorf("step: item %d: want an index into the plan (0, 1, …)", *q.Item))
			}
			item = *q.Item
		}
		rr, err := r.ProcedureStep(context.Background(), s, item)
		if err != nil {
			return fail(err)
		}
		rep.Episode = r.cur.id
		for _, f := range rr.Firings {
			rep.Reflexes = append(rep.Reflexes, f.record())
		}
		rep.Stop = rr.Stop
		if rr.Plan != nil {
			rep.Actions = planEntries(rr.Plan)
		}
	case "note":
		if err := r.Note(strings.TrimRight(q.Text, "\n")); err != nil {
			return fail(err)
		}
		rep.Episode = r.cur.id
	case "end":
		var row episodes.Row
		var err error
		if r.cur != nil && r.cur.proc != nil {
			done := -1
			if q.Done != nil {
				done = *q.Done
			}
			row, err = r.EndProcedure(q.Outcome, q.Error, done)
		} else if q.Outcome != "" || q.Error != "" || q.Done != nil {
			return fail(errors.New("end: outcome, error and done belong to an episode opened by the call op"))
		} else {
			row, err = r.End()
		}
		if err != nil {
			return fail(err)
		}
		rep.Episode, rep.Row = row.ID, row.Raw
	case "abort":
		if r.cur == nil {
			return fail(fmt.Errorf("abort: %w", ErrNoEpisode))
		}
		rep.Episode = r.cur.id
		r.Abort()
	}
	rep.OK = true
	return rep
}

// planEntries is a plan in the form the call op replies with: each item's
// Entry ({"procedure": NAME, "args"} or {"action", "repeat"}).
func planEntries(plan []Item) []map[string]any {
	out := make([]map[string]any, len(plan))
	for i, it := range plan {
		out[i] = it.Entry()
	}
	return out
}
