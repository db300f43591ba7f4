package episodes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Names of the files inside an episode directory, slash-separated
// (docs/STORE.md, "Episode files").
const (
	StateFileName       = "state/state.json"
	ActionFileName      = "action.json"
	OutcomeFileName     = "outcome.json"
	StepsFileName       = "steps.jsonl"
	ObservationFileName = "observation/image.png"
)

// RowDir returns the directory of the episode a row of life l names: its
// path, or episodes/<id> for a row without one.
func (l Life) RowDir(r *Row) string {
	if r.Path == "" {
		return l.EpisodeDir(r.ID)
	}
	return filepath.Join(l.Root, filepath.FromSlash(r.Path))
}

// Pos is a recorded position and view direction. Yaw and Pitch are nil
// when the state does not record them.
type Pos struct {
	X     float64  `json:"x"`
	Y     float64  `json:"y"`
	Z     float64  `json:"z"`
	Yaw   *float64 `json:"yaw"`
	Pitch *float64 `json:"pitch"`
}

// Vitals are a state's vitals; the paper's harness records more (food,
// light, sky), which State.Fields keeps.
type Vitals struct {
	Health *float64 `json:"health"`
}

// Goals is the paper harness's goal progress (absent in MFM's records
// unless the harness passes it as an extra field).
type Goals struct {
	Next string `json:"next"`
}

// State is a recorded state: an episode's state/state.json, the
// end_state of its outcome.json, a steps.jsonl row's state, or
// now/state.json. Fields a state may lack are pointers or nil; Raw holds
// the object as stored, with every field (the paper's hotbar, mobs, …),
// and Fields decodes all of it.
type State struct {
	Step       *int64         `json:"step"`
	Pos        *Pos           `json:"pos"`
	Inventory  map[string]int `json:"inventory"`
	Vitals     *Vitals        `json:"vitals"`
	GUIOpen    *bool          `json:"gui_open"`
	Milestones []string       `json:"milestones"`
	Goals      *Goals         `json:"goals"`
	Mainhand   *string        `json:"mainhand"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a state object and keeps a copy of it in Raw.
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = State(p)
	s.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Fields decodes every field of the state (numbers as float64), as a
// verifier or the recorder sees them.
func (s *State) Fields() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(s.Raw, &m); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return m, nil
}

// ActionEntry is action.json's "entry": a procedure call (Procedure,
// Args, Steps) or a raw action repeated (Action, Repeat).
type ActionEntry struct {
	Procedure string          `json:"procedure,omitempty"`
	Args      map[string]any  `json:"args,omitempty"`
	Steps     *int64          `json:"steps,omitempty"`
	Action    json.RawMessage `json:"action,omitempty"` // the raw action: keys pressed, as the harness gave them
	Repeat    *int64          `json:"repeat,omitempty"`
}

// ProcedureRecord is the part of action.json's "procedure" (the record
// MFM writes for a call of an agent procedure) that readers use.
type ProcedureRecord struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"` // ok, refused, stopped, …
	Error   string `json:"error"`
}

// Action is an episode's action.json: what was done. The paper's harness
// writes entry and first_step (and plan, turn, … which Raw keeps); MFM
// adds call, plan_lines and, for an agent procedure, procedure.
type Action struct {
	Call      string           `json:"call"`
	Entry     ActionEntry      `json:"entry"`
	FirstStep *int64           `json:"first_step"`
	PlanLines []string         `json:"plan_lines"`
	Procedure *ProcedureRecord `json:"procedure"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes action.json and keeps a copy of it in Raw.
func (a *Action) UnmarshalJSON(b []byte) error {
	type plain Action
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*a = Action(p)
	a.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Outcome is an episode's outcome.json: what changed. The paper's fields
// are descended, events, inventory_delta, last_step,
// milestone_transition (null or a list), moved, notes and tags; MFM adds
// first_step, ticks, damage, died, stuck and end_state (the state at the
// episode's end). Fields an outcome may lack are pointers or nil; Raw
// keeps the rest (the paper's flushed, verified_after, …).
type Outcome struct {
	Descended           *float64       `json:"descended"`
	Events              []string       `json:"events"`
	InventoryDelta      map[string]int `json:"inventory_delta"`
	LastStep            *int64         `json:"last_step"`
	MilestoneTransition []string       `json:"milestone_transition"`
	Moved               *float64       `json:"moved"`
	Notes               []string       `json:"notes"`
	Tags                []string       `json:"tags"`

	FirstStep *int64   `json:"first_step"`
	Ticks     *int64   `json:"ticks"`
	Damage    *float64 `json:"damage"`
	Died      *bool    `json:"died"`
	Stuck     *bool    `json:"stuck"`
	EndState  *State   `json:"end_state"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes outcome.json and keeps a copy of it in Raw.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	type plain Outcome
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*o = Outcome(p)
	o.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Step is one row of an episode's steps.jsonl: the step's number, the
// action sent, the state after it, its events and, when its frame was
// kept, the frame's name relative to the episode ("frames/000012.png").
type Step struct {
	Step   int64           `json:"step"`
	Action json.RawMessage `json:"action"`
	State  *State          `json:"state"`
	Events []string        `json:"events"`
	Frame  string          `json:"frame"`
}

// DecodeState decodes a state object (state/state.json, end_state, now/state.json).
func DecodeState(b []byte) (*State, error) {
	var s State
	if err := decodeObject(b, &s, "state"); err != nil {
		return nil, err
	}
	return &s, nil
}

// DecodeAction decodes action.json.
func DecodeAction(b []byte) (*Action, error) {
	var a Action
	if err := decodeObject(b, &a, "action"); err != nil {
		return nil, err
	}
	return &a, nil
}

// DecodeOutcome decodes outcome.json.
func DecodeOutcome(b []byte) (*Outcome, error) {
	var o Outcome
	if err := decodeObject(b, &o, "outcome"); err != nil {
		return nil, err
	}
	return &o, nil
}

// DecodeStep decodes one steps.jsonl row.
func DecodeStep(b []byte) (Step, error) {
	var s Step
	if err := decodeObject(b, &s, "step"); err != nil {
		return Step{}, err
	}
	return s, nil
}

// ReadState reads and decodes the state/state.json of the episode in dir.
// A missing file is an error that wraps fs.ErrNotExist.
func ReadState(dir string) (*State, error) {
	b, err := readEpisodeFile(dir, StateFileName)
	if err != nil {
		return nil, err
	}
	s, err := DecodeState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(StateFileName)), err)
	}
	return s, nil
}

// ReadAction reads and decodes the action.json of the episode in dir
// (an initial episode has none). A missing file is an error that wraps
// fs.ErrNotExist.
func ReadAction(dir string) (*Action, error) {
	b, err := readEpisodeFile(dir, ActionFileName)
	if err != nil {
		return nil, err
	}
	a, err := DecodeAction(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ActionFileName), err)
	}
	return a, nil
}

// ReadOutcome reads and decodes the outcome.json of the episode in dir.
// A missing file is an error that wraps fs.ErrNotExist.
func ReadOutcome(dir string) (*Outcome, error) {
	b, err := readEpisodeFile(dir, OutcomeFileName)
	if err != nil {
		return nil, err
	}
	o, err := DecodeOutcome(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, OutcomeFileName), err)
	}
	return o, nil
}

// ScanSteps calls fn for each well-formed row of the steps.jsonl of the
// episode in dir, in order; malformed rows go to bad (nil ignores them)
// and a torn last line is not a row. An episode without steps.jsonl (one
// recorded without frames, or the paper's) has no rows.
func ScanSteps(dir string, fn func(Step) error, bad func(*RowError)) error {
	path := filepath.Join(dir, StepsFileName)
	_, err := ScanFile(path, 0, func(l Line) error {
		if len(bytes.TrimSpace(l.Data)) == 0 {
			return nil
		}
		s, err := DecodeStep(l.Data)
		if err != nil {
			if bad != nil {
				bad(&RowError{File: path, Line: l.No, Err: err})
			}
			return nil
		}
		return fn(s)
	})
	return err
}

func readEpisodeFile(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read episode file: %w", err)
	}
	return b, nil
}

// decodeObject decodes the JSON object b into v. A field of the wrong
// type is reported by its name and the type it must have.
func decodeObject(b []byte, v any, what string) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("%s: not a JSON object", what)
	}
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("%s: field %q is a JSON %s, want %s", what, te.Field, te.Value, jsonKind(te.Type.String()))
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}

// jsonKind names the JSON a Go type decodes from.
func jsonKind(goType string) string {
	switch goType {
	case "float64", "*float64":
		return "a number"
	case "int64", "*int64", "int":
		return "an integer"
	case "string", "*string":
		return "a string"
	case "bool", "*bool":
		return "true or false"
	}
	if len(goType) > 2 && goType[:2] == "[]" {
		return "a list"
	}
	return "an object"
}
