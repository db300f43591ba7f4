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
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mfm-project/mfm/episodes"
)

// Ops are the record protocol's ops, in the order docs/RECORD.md lists
// them.
var Ops = []string{"initial", "begin", "call", "step", "note", "end", "abort", "life"}

// opFields are the fields each op takes besides "op" and "id"; any other
// field is refused, so a field meant for another op never passes
// silently.
var opFields = map[string][]string{
	"initial": {"state", "frame_png_b64", "frame_path"},
	"begin":   {"call"},
	"call":    {"call"},
	"step":    {"state", "action", "events", "cells", "item", "frame_png_b64", "frame_path"},
	"note":    {"text"},
	"end":     {"outcome", "error", "done"},
	"abort":   {},
	"life":    {},
}

var (
	stateFields = []string{"step", "x", "y", "z", "yaw", "pitch", "inventory", "health", "gui_open", "milestones", "extra"}
	callFields  = []string{"kind", "args", "raw", "budget", "plan", "header", "meta"}
	cellFields  = []string{"cell", "kind", "item"}
)

// CellKinds are the grid kinds a harness may give in a step's cells.
// walked and hazard are not among them: the recorder derives them from the
// states (a change of cell, a fall of health), so a harness-given one
// would say the same thing twice. A harness-given blocked cell replaces
// the one the recorder would derive at that step.
var CellKinds = []string{episodes.CellPlaced, episodes.CellOpened, episodes.CellBlocked, "water"}

// Request is one line of the `mfmd record` protocol (docs/RECORD.md): a
// JSON object whose "op" is one of Ops. Field names are matched exactly,
// each op takes only its own fields, and a JSON null is the same as a
// field left out.
type Request struct {
	Op          string
	State       *WireState // initial, step
	Call        *WireCall  // begin, call
	Outcome     string     // end of a call: ok, stopped, failed, …
	Error       string     // end of a call: what failed
	Done        *int       // end of a call: items executed (default all)
	Item        *int       // step of a call: the plan item executing (default: the previous step's, first 0)
	Action      any        // step
	Events      []string   // step
	Cells       []WireCell // step
	Text        string     // note
	FramePNGB64 string     // initial, step
	FramePath   string     // initial, step
	ID          json.RawMessage
}

// WireState is a State on the wire. Every field but Step may be left out:
// a field left out (or null) keeps its value from the latest state
// recorded in the life (see Merge), so a missing field never reads as a
// death, a fall or an emptied inventory.
type WireState struct {
	Step       *int64
	X, Y, Z    *float64
	Yaw, Pitch *float64
	Inventory  map[string]int // nil: left out; empty: given as {}
	Health     *float64
	GUIOpen    *bool
	Milestones []string       // nil: left out; empty: given as []
	Extra      map[string]any // nil: left out; empty: given as {}
}

// Merge is the state w describes on top of prev, the latest state
// recorded: the fields w gives replace prev's, the others are carried
// over. With no latest state (prev nil: the first state of a life) a field
// left out takes its zero value (no items, no milestones, 0).
func (w *WireState) Merge(prev *State) State {
	var s State
	if prev != nil {
		s = cloneState(*prev)
	}
	if w.Step != nil {
		s.Step = *w.Step
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setF(&s.X, w.X)
	setF(&s.Y, w.Y)
	setF(&s.Z, w.Z)
	setF(&s.Yaw, w.Yaw)
	setF(&s.Pitch, w.Pitch)
	setF(&s.Health, w.Health)
	if w.GUIOpen != nil {
		s.GUIOpen = *w.GUIOpen
	}
	if w.Inventory != nil {
		s.Inventory = w.Inventory
	}
	if w.Milestones != nil {
		s.Milestones = w.Milestones
	}
	if w.Extra != nil {
		s.Extra = w.Extra
	}
	return cloneState(s)
}

// WireCall is a Call on the wire; args is a JSON object whose key order is
// kept.
type WireCall struct {
	Kind   string
	Args   []Arg
	Raw    map[string]any
	Budget int64
	Plan   []string
	Header []string
	Meta   map[string]any
}

func (c *WireCall) call() Call {
	return Call{Kind: c.Kind, Args: c.Args, Raw: c.Raw, Budget: c.Budget, Plan: c.Plan, Header: c.Header, Meta: c.Meta}
}

// WireCell is a Cell on the wire: {"cell": [x, y, z], "kind": "placed", "item": "dirt"}.
type WireCell struct {
	Cell [3]int
	Kind string
	Item string
}

// ParseRequest decodes and validates one protocol line. Frames are not
// read or decoded here. On an error the returned Request still carries the
// line's "id" and "op" when they could be read, for the reply.
func ParseRequest(line []byte) (Request, error) {
	var q Request
	d := json.NewDecoder(bytes.NewReader(line))
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		q.ID = recoverID(line)
		return q, fmt.Errorf("not a JSON object: %w", err)
	}
	if d.More() {
		q.ID = recoverID(line)
		return q, errors.New("more than one JSON value on the line (one request per line)")
	}
	ms, err := members(raw, "the request")
	if err != nil {
		q.ID = recoverID(line)
		return q, err
	}
	for _, m := range ms {
		if m.key == "id" && !isNull(m.val) {
			q.ID = m.val
		}
	}
	for _, m := range ms {
		if m.key == "op" {
			if err := decodeInto(m.val, "op", "a string", &q.Op); err != nil {
				return q, err
			}
		}
	}
	if q.Op == "" {
		return q, fmt.Errorf(`missing "op" (want %s)`, orList(Ops))
	}
	allowed, ok := opFields[q.Op]
	if !ok {
		op := q.Op
		q.Op = ""
		return q, fmt.Errorf("unknown op %q (want %s)", op, orList(Ops))
	}
	for _, m := range ms {
		if m.key == "op" || m.key == "id" {
			continue
		}
		if !slices.Contains(allowed, m.key) {
			return q, fieldNotOfOp(q.Op, m.key, allowed)
		}
		if err := q.decodeField(m); err != nil {
			return q, fmt.Errorf("%s: %w", q.Op, err)
		}
	}
	return q, q.check()
}

// decodeField decodes one top-level field the op takes.
func (q *Request) decodeField(m member) error {
	if isNull(m.val) {
		return nil
	}
	if limit, ok := fieldBytes[m.key]; ok && len(m.val) > limit {
		return fmt.Errorf("%s: %d bytes of JSON, more than the %d accepted", m.key, len(m.val), limit)
	}
	var err error
	switch m.key {
	case "state":
		q.State, err = parseState(m.val)
	case "call":
		q.Call, err = parseCall(m.val)
	case "outcome":
		err = decodeInto(m.val, "outcome", "a string", &q.Outcome)
	case "error":
		err = decodeInto(m.val, "error", "a string", &q.Error)
	case "done":
		q.Done, err = count(m.val, "done", "the number of plan items executed")
	case "item":
		q.Item, err = count(m.val, "item", "an index into the plan (0, 1, …)")
	case "action":
		err = decodeAny(m.val, "action", &q.Action)
	case "events":
		err = decodeInto(m.val, "events", "a list of strings", &q.Events)
	case "cells":
		q.Cells, err = parseCells(m.val)
	case "text":
		err = decodeInto(m.val, "text", "a string", &q.Text)
	case "frame_png_b64":
		err = decodeInto(m.val, "frame_png_b64", "a string", &q.FramePNGB64)
	case "frame_path":
		err = decodeInto(m.val, "frame_path", "a string", &q.FramePath)
	}
	if err != nil {
		return err
	}
	switch m.key {
	case "outcome":
		err = checkLen("outcome", q.Outcome, MaxStringBytes)
	case "error":
		err = checkLen("error", q.Error, MaxTextBytes)
	case "text":
		err = checkLen("text", q.Text, MaxTextBytes)
	case "events":
		err = checkStrings("events", q.Events, MaxStringBytes)
	case "cells":
		if len(q.Cells) > MaxListItems {
			err = limitError("cells", len(q.Cells), MaxListItems, "entries")
		}
	case "frame_path":
		err = checkLen("frame_path", q.FramePath, MaxPathBytes)
	case "frame_png_b64":
		if len(q.FramePNGB64) > base64.StdEncoding.EncodedLen(MaxFrameBytes) {
			err = fmt.Errorf("frame_png_b64: %d bytes of base64, more than the %d a frame of at most %d bytes takes", len(q.FramePNGB64), base64.StdEncoding.EncodedLen(MaxFrameBytes), MaxFrameBytes)
		}
	case "call":
		err = checkCall(q.Call.call())
	}
	return err
}

// fieldBytes bounds the JSON of the fields copied into the record as they
// are (action) and of the frame fields, before they are decoded.
var fieldBytes = map[string]int{
	"action":        MaxObjectBytes,
	"frame_png_b64": 4*MaxFrameBytes/3 + 16,
}

// check validates what the op needs once its fields are decoded.
func (q *Request) check() error {
	switch q.Op {
	case "initial", "step":
		if q.State == nil {
			return fmt.Errorf(`%s: missing "state"`, q.Op)
		}
		if q.State.Step == nil {
			return fmt.Errorf(`%s: missing "state.step"`, q.Op)
		}
		if q.FramePNGB64 != "" && q.FramePath != "" {
			return fmt.Errorf("%s: give frame_png_b64 or frame_path, not both", q.Op)
		}
	case "begin":
		if q.Call == nil {
			return errors.New(`begin: missing "call"`)
		}
		if (q.Call.Kind == "") == (len(q.Call.Raw) == 0) {
			return errors.New(`begin: the call needs "kind" (a procedure's name) or "raw" (a low-level action), one of the two`)
		}
	case "call":
		if q.Call == nil {
			return errors.New(`call: missing "call"`)
		}
		if q.Call.Kind == "" || len(q.Call.Raw) != 0 {
			return errors.New(`call: the call needs "kind", a procedure in mine/procedures (and no "raw")`)
		}
	case "note":
		if q.Text == "" {
			return errors.New(`note: missing "text"`)
		}
	}
	return nil
}

func parseState(raw json.RawMessage) (*WireState, error) {
	ms, err := members(raw, "state")
	if err != nil {
		return nil, err
	}
	w := &WireState{}
	for _, m := range ms {
		where := "state." + m.key
		if isNull(m.val) {
			if !slices.Contains(stateFields, m.key) {
				return nil, unknownField(m.key, "state", stateFields)
			}
			continue
		}
		switch m.key {
		case "step":
			w.Step, err = integer(m.val, where)
		case "x":
			w.X, err = number(m.val, where)
		case "y":
			w.Y, err = number(m.val, where)
		case "z":
			w.Z, err = number(m.val, where)
		case "yaw":
			w.Yaw, err = number(m.val, where)
		case "pitch":
			w.Pitch, err = number(m.val, where)
		case "health":
			w.Health, err = number(m.val, where)
		case "gui_open":
			var b bool
			if err = decodeInto(m.val, where, "true or false", &b); err == nil {
				w.GUIOpen = &b
			}
		case "inventory":
			w.Inventory, err = inventory(m.val, where)
		case "milestones":
			w.Milestones = []string{}
			err = decodeInto(m.val, where, "a list of strings", &w.Milestones)
		case "extra":
			if len(m.val) > MaxObjectBytes {
				return nil, fmt.Errorf("%s: %d bytes of JSON, more than the %d accepted", where, len(m.val), MaxObjectBytes)
			}
			var ex map[string]any
			if err = decodeAny(m.val, where, &ex); err == nil {
				if ex == nil {
					err = fmt.Errorf("%s: want a JSON object, got %s", where, jsonKind(m.val))
				}
				w.Extra = ex
			}
		default:
			return nil, unknownField(m.key, "state", stateFields)
		}
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

func inventory(raw json.RawMessage, where string) (map[string]int, error) {
	ms, err := members(raw, where)
	if err != nil {
		return nil, err
	}
	inv := make(map[string]int, len(ms))
	for _, m := range ms {
		n, err := integer(m.val, where+"."+m.key)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, fmt.Errorf("%s.%s: want a count, got null", where, m.key)
		}
		inv[m.key] = int(*n)
	}
	return inv, nil
}

func parseCall(raw json.RawMessage) (*WireCall, error) {
	ms, err := members(raw, "call")
	if err != nil {
		return nil, err
	}
	c := &WireCall{}
	for _, m := range ms {
		where := "call." + m.key
		if !slices.Contains(callFields, m.key) {
			return nil, unknownField(m.key, "call", callFields)
		}
		if isNull(m.val) {
			continue
		}
		if m.key != "plan" && m.key != "header" && len(m.val) > MaxObjectBytes {
			return nil, fmt.Errorf("%s: %d bytes of JSON, more than the %d accepted", where, len(m.val), MaxObjectBytes)
		}
		switch m.key {
		case "kind":
			err = decodeInto(m.val, where, "a string", &c.Kind)
		case "args":
			c.Args, err = orderedArgs(m.val)
			if err != nil {
				err = fmt.Errorf("%s: %w", where, err)
			}
		case "raw":
			err = decodeAny(m.val, where, &c.Raw)
			if err == nil && c.Raw == nil {
				err = fmt.Errorf("%s: want a JSON object, got %s", where, jsonKind(m.val))
			}
		case "budget":
			var n *int
			if n, err = count(m.val, where, "the planned number of ticks"); err == nil {
				c.Budget = int64(*n)
			}
		case "plan":
			err = decodeInto(m.val, where, "a list of strings", &c.Plan)
		case "header":
			err = decodeInto(m.val, where, "a list of strings", &c.Header)
		case "meta":
			err = decodeAny(m.val, where, &c.Meta)
			if err == nil && c.Meta == nil {
				err = fmt.Errorf("%s: want a JSON object, got %s", where, jsonKind(m.val))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func parseCells(raw json.RawMessage) ([]WireCell, error) {
	var list []json.RawMessage
	if err := decodeInto(raw, "cells", "a list of cells", &list); err != nil {
		return nil, err
	}
	cells := make([]WireCell, 0, len(list))
	for i, cr := range list {
		where := fmt.Sprintf("cells[%d]", i)
		ms, err := members(cr, where)
		if err != nil {
			return nil, err
		}
		var c WireCell
		hasCell := false
		for _, m := range ms {
			w := where + "." + m.key
			switch m.key {
			case "cell":
				var xyz []json.RawMessage
				if err := decodeInto(m.val, w, "[x, y, z]", &xyz); err != nil {
					return nil, err
				}
				if len(xyz) != 3 {
					return nil, fmt.Errorf("%s: want [x, y, z], three integers (block coordinates), got %d value(s)", w, len(xyz))
				}
				for j, v := range xyz {
					n, err := integer(v, fmt.Sprintf("%s[%d]", w, j))
					if err != nil {
						return nil, err
					}
					if n == nil {
						return nil, fmt.Errorf("%s[%d]: want an integer, got null", w, j)
					}
					c.Cell[j] = int(*n)
				}
				hasCell = true
			case "kind":
				if err := decodeInto(m.val, w, "a string", &c.Kind); err != nil {
					return nil, err
				}
			case "item":
				if err := decodeInto(m.val, w, "a string", &c.Item); err != nil {
					return nil, err
				}
			default:
				return nil, unknownField(m.key, where, cellFields)
			}
		}
		if !hasCell {
			return nil, fmt.Errorf(`%s: missing "cell" ([x, y, z])`, where)
		}
		if c.Kind == "" {
			return nil, fmt.Errorf(`%s: missing "kind" (want %s)`, where, orList(CellKinds))
		}
		if !slices.Contains(CellKinds, c.Kind) {
			return nil, fmt.Errorf("%s.kind: %q is not a kind a harness gives (want %s; walked and hazard are derived from the states)", where, c.Kind, orList(CellKinds))
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// member is one "key": value of a JSON object, in the order written.
type member struct {
	key string
	val json.RawMessage
}

// members decodes a JSON object into its members, refusing a key given
// twice. where names the object in errors.
func members(raw []byte, where string) ([]member, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	tok, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("%s: want a JSON object, got %s", where, jsonKind(raw))
	}
	var ms []member
	seen := map[string]bool{}
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		k, _ := kt.(string)
		if seen[k] {
			return nil, fmt.Errorf("%s: field %q given twice", where, k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", where, k, err)
		}
		ms = append(ms, member{k, v})
	}
	if _, err := d.Token(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return ms, nil
}

// recoverID finds the top-level "id" of a line that is not a valid
// request (truncated, or wrong further on), reading up to the first error.
func recoverID(line []byte) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(line))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil
		}
		if k, _ := kt.(string); k == "id" && !isNull(v) {
			return v
		}
	}
	return nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "the number " + string(v)
}

// decodeInto decodes v into dst (a string, []string, []json.RawMessage,
// bool), naming where and what is wanted on a mismatch.
func decodeInto(v json.RawMessage, where, want string, dst any) error {
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("%s: want %s, got %s", where, want, jsonKind(v))
	}
	return nil
}

// decodeAny decodes v keeping numbers as json.Number (an integer stays an
// integer in the files written).
func decodeAny(v json.RawMessage, where string, dst any) error {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(dst); err != nil {
		return fmt.Errorf("%s: want a JSON object, got %s", where, jsonKind(v))
	}
	return nil
}

func number(v json.RawMessage, where string) (*float64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return nil, fmt.Errorf("%s: want a number, got %s", where, jsonKind(v))
	}
	return &f, nil
}

func integer(v json.RawMessage, where string) (*int64, error) {
	if isNull(v) {
		return nil, nil
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		return nil, fmt.Errorf("%s: want an integer, got %s", where, jsonKind(v))
	}
	return &n, nil
}

// count is a non-negative integer (done, item, budget).
func count(v json.RawMessage, where, what string) (*int, error) {
	n, err := integer(v, where)
	if err != nil || n == nil {
		return nil, err
	}
	if *n < 0 || *n > 1<<31 {
		return nil, fmt.Errorf("%s: want %s, 0 or more, got %d", where, what, *n)
	}
	i := int(*n)
	return &i, nil
}

func unknownField(key, where string, allowed []string) error {
	for _, a := range allowed {
		if strings.EqualFold(a, key) {
			return fmt.Errorf("unknown field %q in %s (field names are case-sensitive: %q)", key, where, a)
		}
	}
	return fmt.Errorf("unknown field %q in %s (want %s)", key, where, strings.Join(allowed, ", "))
}

func fieldNotOfOp(op, key string, allowed []string) error {
	takes := "nothing but op and id"
	if len(allowed) > 0 {
		takes = strings.Join(allowed, ", ")
	}
	for _, fields := range opFields {
		if slices.Contains(fields, key) {
			return fmt.Errorf("%s: field %q does not belong to %s (%s takes %s)", op, key, op, op, takes)
		}
	}
	all := []string{"op", "id"}
	for _, o := range Ops {
		for _, f := range opFields[o] {
			if !slices.Contains(all, f) {
				all = append(all, f)
			}
		}
	}
	return fmt.Errorf("%s: %w", op, unknownField(key, "the request", all))
}

func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// orderedArgs decodes a JSON object into arguments in key order.
func orderedArgs(raw json.RawMessage) ([]Arg, error) {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return nil, nil
	}
	ms, err := members(raw, "args")
	if err != nil {
		return nil, errors.New("want a JSON object of name: value")
	}
	args := make([]Arg, 0, len(ms))
	for _, m := range ms {
		var v any
		if err := decodeAny(m.val, m.key, &v); err != nil {
			return nil, fmt.Errorf("argument %q: %w", m.key, err)
		}
		args = append(args, Arg{Name: m.key, Value: v})
	}
	return args, nil
}

// frame reads the request's frame (nil when none); the recorder decodes
// it fully. A relative frame_path is resolved against dir ("" = the
// working directory).
func (q *Request) frame(dir string) ([]byte, error) {
	var b []byte
	switch {
	case q.FramePNGB64 != "":
		var err error
		if b, err = base64.StdEncoding.DecodeString(q.FramePNGB64); err != nil {
			return nil, fmt.Errorf("frame_png_b64: not base64: %w", err)
		}
	case q.FramePath != "":
		p := q.FramePath
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		var err error
		if b, err = readFrameFile(p); err != nil {
			return nil, fmt.Errorf("frame_path: %w", err)
		}
	default:
		return nil, nil
	}
	if len(b) == 0 {
		return nil, errors.New("the frame is empty (0 bytes)")
	}
	return b, nil
}

// readFrameFile reads a frame_path: a regular file of at most
// MaxFrameBytes. Anything else (a device, a fifo, a directory, a socket)
// is refused before it is read, so no path can stall or exhaust the
// recorder: the file is checked by stat, opened without blocking (a fifo
// put in its place since cannot hang the open), and checked again on the
// open descriptor.
func readFrameFile(p string) ([]byte, error) {
	regular := func(fi os.FileInfo) error {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%s): a frame is read from a PNG file", p, fileKind(fi.Mode()))
		}
		if fi.Size() > MaxFrameBytes {
			return fmt.Errorf("%s is %d bytes, more than the %d a frame may be", p, fi.Size(), MaxFrameBytes)
		}
		return nil
	}
	before, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if err := regular(before); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	if !os.SameFile(before, fi) {
		return nil, fmt.Errorf("%s was replaced while it was opened", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFrameBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFrameBytes {
		return nil, fmt.Errorf("%s grew past the %d bytes a frame may be while it was read", p, MaxFrameBytes)
	}
	return b, nil
}

// fileKind names a non-regular file's type for an error.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a fifo"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "type " + m.Type().String()
}

// checkPNG decodes b fully: a frame the views could not read is refused,
// and so is one past MaxFrameBytes or MaxFramePixels (checked on the
// header, before decoding).
func checkPNG(b []byte) error {
	if len(b) > MaxFrameBytes {
		return fmt.Errorf("the PNG is %d bytes, more than the %d a frame may be", len(b), MaxFrameBytes)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("not a complete PNG (%d bytes): %w", len(b), err)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > MaxFramePixels {
		return fmt.Errorf("the PNG is %d×%d pixels, more than the %d a frame may have", cfg.Width, cfg.Height, MaxFramePixels)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("not a complete PNG (%d bytes): %w", len(b), err)
	}
	return nil
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
	// Life is the life that begins, on life; Previous is where the life
	// that ended was frozen (previous/life_N).
	Life     int    `json:"life,omitempty"`
	Previous string `json:"previous,omitempty"`
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// FrameDir is the directory a relative frame_path is resolved against
	// ("": the process's working directory).
	FrameDir string
}

// ServeResult is what one Serve run did.
type ServeResult struct {
	Lines    int // requests read (blank lines are not requests)
	Rejected int // requests answered "ok": false
	// Dropped is the episode the input ended inside ("" if none): none
	// of it is recorded, and now/ is back to the state before it.
	Dropped      string
	DroppedSteps int
}

// OK reports whether every request was accepted and no episode dropped.
func (r ServeResult) OK() bool { return r.Rejected == 0 && r.Dropped == "" }

// Serve runs the record protocol: one request per line of in, one reply
// per line on out. A rejected line changes nothing (a bad step is not
// added; the episode stays open). At the end of in an open episode is
// dropped (Abort) and reported in the result. The error is an I/O error
// reading in or writing out.
func Serve(r *Recorder, in io.Reader, out io.Writer, opt ServeOptions) (ServeResult, error) {
	br := bufio.NewReaderSize(in, 1<<20)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var res ServeResult
	dropOpen := func() {
		if r.cur != nil {
			res.Dropped, res.DroppedSteps = r.cur.id, len(r.cur.steps)
			r.Abort()
		}
	}
	for no := 1; ; no++ {
		line, long, err := readLine(br, MaxLineBytes)
		if long > 0 || len(bytes.TrimSpace(line)) > 0 {
			res.Lines++
			var rep Reply
			if long > 0 {
				rep = Reply{Line: no, ID: recoverID(line), Error: fmt.Sprintf("line %d: the line is %d bytes, more than the %d a request may be (docs/RECORD.md#limits); nothing of it is read", no, long, MaxLineBytes)}
				if r.cur != nil {
					rep.Episode = r.cur.id
				}
			} else {
				rep = handle(r, line, no, opt)
			}
			if !rep.OK {
				res.Rejected++
			}
			if e := enc.Encode(rep); e != nil {
				dropOpen()
				return res, fmt.Errorf("record: write reply: %w", e)
			}
			if e := bw.Flush(); e != nil {
				dropOpen()
				return res, fmt.Errorf("record: write reply: %w", e)
			}
		}
		if errors.Is(err, io.EOF) {
			dropOpen()
			return res, nil
		}
		if err != nil {
			dropOpen()
			return res, fmt.Errorf("record: read line %d: %w", no, err)
		}
	}
}

// readLine reads one line (with its '\n') of at most limit bytes. A longer
// line is read to its end and dropped without being held: long is its
// length and line its first limit bytes.
func readLine(br *bufio.Reader, limit int) (line []byte, long int64, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if long > 0 {
			long += int64(len(chunk))
		} else if len(line)+len(chunk) > limit {
			long = int64(len(line) + len(chunk))
		} else {
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, long, err
		}
	}
}

func handle(r *Recorder, line []byte, no int, opt ServeOptions) Reply {
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
		fr, err := q.frame(opt.FrameDir)
		if err != nil {
			return fail(fmt.Errorf("initial: %w", err))
		}
		row, err := r.Initial(q.State.Merge(r.last), fr)
		if err != nil {
			return fail(err)
		}
		rep.Episode, rep.Row = row.ID, row.Raw
	case "begin":
		if err := r.Begin(q.Call.call()); err != nil {
			return fail(err)
		}
		rep.Episode = r.cur.id
	case "call":
		cr, row, err := r.BeginProcedure(context.Background(), q.Call.call())
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
		if r.cur == nil {
			return fail(fmt.Errorf("step: %w", ErrNoEpisode))
		}
		fr, err := q.frame(opt.FrameDir)
		if err != nil {
			return fail(fmt.Errorf("step: %w", err))
		}
		s := Step{Action: q.Action, State: q.State.Merge(r.last), Events: q.Events, FramePNG: fr}
		for _, c := range q.Cells {
			s.Cells = append(s.Cells, Cell{X: c.Cell[0], Y: c.Cell[1], Z: c.Cell[2], Kind: c.Kind, Item: c.Item})
		}
		if r.cur.proc == nil {
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
		} else if r.cur != nil && (q.Outcome != "" || q.Error != "" || q.Done != nil) {
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
	case "life":
		frozen, err := r.NewLife()
		if err != nil {
			return fail(err)
		}
		rep.Life = frozen.N + 1
		rep.Previous = episodes.PreviousDir + "/" + episodes.LifeName(frozen.N)
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
