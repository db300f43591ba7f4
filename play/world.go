// Package play is the play engine of `mfmd play` and `mfmd act`: a
// session runs a task (package task) in a World, one turn per plan an
// agent sends, records every atom call as an episode through
// harness.Recorder, tracks the step budget and the milestones reached on
// the logged state, refuses repeats that change nothing (the governor),
// prints the turn block the agent reads, and keeps run.json in the store.
// See docs/PLAY.md.
package play

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/harness"
)

// World is a game the session plays in. Each call records its episode(s)
// into the store through the world's harness.Recorder. A World is used
// from one goroutine at a time.
type World interface {
	// Atoms lists the atoms the world offers.
	Atoms() []AtomSpec
	// RawKeys are the keys a raw action may hold ({"forward": 1}).
	RawKeys() []string
	// Call runs one atom with checked arguments, recording it. An error
	// is the world's failure (the game died), not the atom's: an atom
	// that did not achieve its aim returns Outcome{OK: false, Note: why}.
	Call(ctx context.Context, atom string, args Args) (Outcome, error)
	// Raw holds a low-level action for repeat ticks, recording it.
	Raw(ctx context.Context, action map[string]any, repeat int) (Outcome, error)
	// State is the latest state (Step: the harness step counter).
	State() harness.State
}

// KitGiver is a World that can put a task's start kit (item: count)
// into the player's inventory before the first turn.
type KitGiver interface {
	GiveKit(kit map[string]int) error
}

// Outcome is what one atom call did.
type Outcome struct {
	OK   bool
	Note string
}

// Param types.
const (
	TypeNumber = "number"
	TypeInt    = "int"
	TypeString = "string"
	TypeBool   = "bool"
)

// ParamSpec is one parameter of an atom.
type ParamSpec struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Default  any    `json:"default,omitempty"`
	Doc      string `json:"doc,omitempty"`
}

// AtomSpec describes an atom for the agent (mfmd act --list) and for
// checking a plan before it runs.
type AtomSpec struct {
	Name   string      `json:"name"`
	Doc    string      `json:"doc"`
	Params []ParamSpec `json:"params"`
	// MaxSteps is the worst-case step estimate of a call, counted
	// against the plan cap before anything runs: its closed-loop budget,
	// or the most a successful call takes when the budget is reached
	// only by a failure (which ends the plan anyway).
	MaxSteps func(a Args, st harness.State) int `json:"-"`
	// Steps says how MaxSteps is worked out ("≤10", "4 per block of
	// distance + 42"), for mfmd act --list.
	Steps string `json:"steps,omitempty"`
}

// Params parses a compact parameter list, one string per parameter:
// "x:number" (required), "within:number=1" (optional with a default),
// "item:string?" (optional, no default). It panics on a malformed spec
// (a programming error in an atom table).
func Params(specs ...string) []ParamSpec {
	out := make([]ParamSpec, 0, len(specs))
	for _, s := range specs {
		name, rest, ok := strings.Cut(s, ":")
		if !ok || name == "" {
			panic("play: param spec " + s + ": want name:type[=default|?]")
		}
		p := ParamSpec{Name: name, Required: true}
		typ, def, hasDef := strings.Cut(rest, "=")
		if strings.HasSuffix(typ, "?") {
			typ, p.Required = strings.TrimSuffix(typ, "?"), false
		}
		switch typ {
		case TypeNumber, TypeInt, TypeString, TypeBool:
		default:
			panic("play: param spec " + s + ": unknown type " + typ)
		}
		p.Type = typ
		if hasDef {
			v, err := convert(def, typ)
			if err != nil {
				panic("play: param spec " + s + ": " + err.Error())
			}
			p.Default, p.Required = v, false
		}
		out = append(out, p)
	}
	return out
}

// Args are an atom's checked arguments: number → float64, int → int,
// string, bool; defaults filled in.
type Args map[string]any

// Float is a number argument (0 when absent).
func (a Args) Float(k string) float64 {
	switch v := a[k].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	}
	return 0
}

// Int is an int argument (0 when absent).
func (a Args) Int(k string) int {
	switch v := a[k].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// String is a string argument ("" when absent).
func (a Args) String(k string) string { s, _ := a[k].(string); return s }

// Bool is a bool argument.
func (a Args) Bool(k string) bool { b, _ := a[k].(bool); return b }

// Has reports whether the argument was given or has a default.
func (a Args) Has(k string) bool { _, ok := a[k]; return ok }

// CheckArgs checks given arguments against spec and returns them typed,
// with defaults filled in.
func (spec AtomSpec) CheckArgs(given []harness.Arg) (Args, error) {
	out := Args{}
	known := map[string]ParamSpec{}
	for _, p := range spec.Params {
		known[p.Name] = p
	}
	for _, a := range given {
		p, ok := known[a.Name]
		if !ok {
			return nil, fmt.Errorf("%s: no parameter %q (it takes %s)", spec.Name, a.Name, spec.signature())
		}
		if _, dup := out[a.Name]; dup {
			return nil, fmt.Errorf("%s: %s given twice", spec.Name, a.Name)
		}
		v, err := coerce(a.Value, p.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %s=%v: %w", spec.Name, a.Name, a.Value, err)
		}
		out[a.Name] = v
	}
	for _, p := range spec.Params {
		if _, ok := out[p.Name]; ok {
			continue
		}
		if p.Required {
			return nil, fmt.Errorf("%s: missing %s (it takes %s)", spec.Name, p.Name, spec.signature())
		}
		if p.Default != nil {
			out[p.Name] = p.Default
		}
	}
	return out, nil
}

// stepsDoc is how the atom's worst-case step estimate is worked out.
func (spec AtomSpec) stepsDoc() string {
	switch {
	case spec.Steps != "":
		return spec.Steps
	case spec.MaxSteps == nil:
		return "≤1"
	}
	return "depends on the arguments"
}

// signature is "go_to(x:number, z:number, within:number=1)".
func (spec AtomSpec) signature() string {
	var parts []string
	for _, p := range spec.Params {
		s := p.Name + ":" + p.Type
		switch {
		case p.Default != nil:
			s += "=" + fmt.Sprint(p.Default)
		case !p.Required:
			s += "?"
		}
		parts = append(parts, s)
	}
	return spec.Name + "(" + strings.Join(parts, ", ") + ")"
}

func convert(s, typ string) (any, error) {
	switch typ {
	case TypeNumber:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case TypeInt:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case TypeBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	}
	return s, nil
}

// coerce converts a plan value (int64, float64, string, bool, json
// numbers) to typ.
func coerce(v any, typ string) (any, error) {
	switch x := v.(type) {
	case string:
		if typ == TypeString {
			return x, nil
		}
		return convert(x, typ)
	case bool:
		if typ == TypeBool {
			return x, nil
		}
		return nil, fmt.Errorf("want a %s, got a bool", typ)
	case int64, int, float64, interface{ String() string }:
		f, err := strconv.ParseFloat(fmt.Sprint(x), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("want a %s", typ)
		}
		switch typ {
		case TypeNumber:
			return f, nil
		case TypeInt:
			if f != math.Trunc(f) || math.Abs(f) > 1e9 {
				return nil, fmt.Errorf("want an integer, got %v", f)
			}
			return int(f), nil
		case TypeString:
			return fmt.Sprint(x), nil
		}
		return nil, fmt.Errorf("want a %s, got a number", typ)
	}
	return nil, fmt.Errorf("want a %s, got %T", typ, v)
}

// specIndex maps atom names to specs.
func specIndex(atoms []AtomSpec) map[string]AtomSpec {
	m := make(map[string]AtomSpec, len(atoms))
	for _, a := range atoms {
		m[a.Name] = a
	}
	return m
}

// sortedAtomNames lists atom names in order.
func sortedAtomNames(atoms []AtomSpec) []string {
	var n []string
	for _, a := range atoms {
		n = append(n, a.Name)
	}
	sort.Strings(n)
	return n
}
