package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Limits of what the recorder accepts (docs/RECORD.md#limits). One
// accepted request must not be able to make a store slow or unreadable or
// an episode unsavable, so every line, string, list and number the record
// protocol takes is bounded, and a request past a bound is refused with an
// error naming the field and the limit.
const (
	// MaxLineBytes bounds one request line of `mfmd record`, a base64
	// frame included. A longer line is refused without being held in
	// memory.
	MaxLineBytes = 32 << 20
	// MaxFrameBytes bounds a frame's PNG bytes (frame_png_b64 decoded,
	// frame_path's file, Step.FramePNG).
	MaxFrameBytes = 16 << 20
	// MaxFramePixels bounds a frame's width × height, so decoding it
	// cannot take more than a bounded amount of memory.
	MaxFramePixels = 4096 * 4096
	// MaxPathBytes bounds frame_path.
	MaxPathBytes = 4096
	// MaxTextBytes bounds a note's text and the error of an end.
	MaxTextBytes = 16 << 10
	// MaxStringBytes bounds every other string: a call's kind, an outcome,
	// an event line, a plan or header line, a cell's item, an argument's
	// name.
	MaxStringBytes = 1 << 10
	// MaxNameBytes bounds an inventory item's name and a milestone.
	MaxNameBytes = 256
	// MaxListItems bounds a step's events and cells, a state's inventory
	// entries and milestones, and a call's args, plan lines and header
	// parts.
	MaxListItems = 1024
	// MaxObjectBytes bounds the JSON of a state's extra, a step's action
	// and a call's raw, meta and args, each as written on the line.
	MaxObjectBytes = 64 << 10
	// MaxEpisodeEventBytes bounds the event lines of one episode together:
	// its index row lists them all, and a row must stay small for every
	// reader of index.jsonl.
	MaxEpisodeEventBytes = 1 << 20
	// MaxEpisodeSteps bounds the steps of one episode (the recorder holds
	// them until end).
	MaxEpisodeSteps = 1 << 20
	// MaxCoord bounds |x|, |y| and |z| of a state and a cell (blocks); the
	// worlds of Minecraft (±3·10⁷) and Luanti (±31,000) are inside.
	MaxCoord = 1e8
	// MaxAngle bounds |yaw| and |pitch| (degrees; an accumulated yaw may
	// exceed 360).
	MaxAngle = 1e6
	// MaxHealth bounds |health|.
	MaxHealth = 1e9
	// MaxCount bounds |count| of an inventory entry.
	MaxCount = 1e9
	// MaxStep bounds |step|.
	MaxStep = 1e12
)

// limitError is the error for a value past a limit.
func limitError(where string, got int, limit int, unit string) error {
	return fmt.Errorf("%s: %d %s, more than the %d accepted", where, got, unit, limit)
}

// checkLen refuses a string longer than limit bytes.
func checkLen(where, s string, limit int) error {
	if len(s) > limit {
		return limitError(where, len(s), limit, "bytes")
	}
	return nil
}

// checkStrings refuses a list of more than MaxListItems strings or one of
// them longer than limit bytes.
func checkStrings(where string, xs []string, limit int) error {
	if len(xs) > MaxListItems {
		return limitError(where, len(xs), MaxListItems, "entries")
	}
	for i, s := range xs {
		if err := checkLen(fmt.Sprintf("%s[%d]", where, i), s, limit); err != nil {
			return err
		}
	}
	return nil
}

// checkNumber refuses a non-finite number and one whose magnitude exceeds
// bound: a state must be recordable (JSON has no Inf or NaN) and its
// derived values (distances, grid cells) must not overflow.
func checkNumber(where string, v, bound float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: %v is not a finite number", where, v)
	}
	if math.Abs(v) > bound {
		return fmt.Errorf("%s: %v is out of range (|%s| ≤ %g)", where, v, where, bound)
	}
	return nil
}

// checkState refuses a state the recorder could not write or derive from:
// non-finite or out-of-range numbers, too many or too long names, an
// extra that holds a number JSON cannot carry.
func checkState(where string, s State) error {
	if s.Step > MaxStep || s.Step < -MaxStep {
		return fmt.Errorf("%s.step: %d is out of range (|step| ≤ %g)", where, s.Step, float64(MaxStep))
	}
	for _, f := range []struct {
		name  string
		v     float64
		bound float64
	}{{"x", s.X, MaxCoord}, {"y", s.Y, MaxCoord}, {"z", s.Z, MaxCoord}, {"yaw", s.Yaw, MaxAngle}, {"pitch", s.Pitch, MaxAngle}, {"health", s.Health, MaxHealth}} {
		if err := checkNumber(where+"."+f.name, f.v, f.bound); err != nil {
			return err
		}
	}
	if len(s.Inventory) > MaxListItems {
		return limitError(where+".inventory", len(s.Inventory), MaxListItems, "entries")
	}
	for k, n := range s.Inventory {
		if err := checkLen(where+".inventory key", k, MaxNameBytes); err != nil {
			return err
		}
		if float64(n) > MaxCount || float64(n) < -MaxCount {
			return fmt.Errorf("%s.inventory.%s: %d is out of range (|count| ≤ %g)", where, k, n, float64(MaxCount))
		}
	}
	if err := checkStrings(where+".milestones", s.Milestones, MaxNameBytes); err != nil {
		return err
	}
	return checkValue(where+".extra", s.Extra)
}

// checkValue refuses a number JSON cannot carry (Inf, NaN, a json.Number
// out of float64's range) anywhere in v, which is written into the
// episode's files as it is.
func checkValue(where string, v any) error {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: %v is not a finite number", where, x)
		}
	case float32:
		return checkValue(where, float64(x))
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil {
			return fmt.Errorf("%s: %s is not a number a JSON reader can hold (out of float64's range)", where, x)
		}
	case map[string]any:
		for k, e := range x {
			if err := checkValue(where+"."+k, e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkValue(fmt.Sprintf("%s[%d]", where, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCells refuses more than MaxListItems cells, a cell out of range
// and an over-long item.
func checkCells(cells []Cell) error {
	if len(cells) > MaxListItems {
		return limitError("cells", len(cells), MaxListItems, "entries")
	}
	for i, c := range cells {
		for j, v := range []int{c.X, c.Y, c.Z} {
			if float64(v) > MaxCoord || float64(v) < -MaxCoord {
				return fmt.Errorf("cells[%d].cell[%d]: %d is out of range (|coordinate| ≤ %g)", i, j, v, float64(MaxCoord))
			}
		}
		if err := checkLen(fmt.Sprintf("cells[%d].item", i), c.Item, MaxStringBytes); err != nil {
			return err
		}
	}
	return nil
}

// checkCall refuses a call with an over-long kind, plan or header, too
// many arguments, or a number JSON cannot carry in its args, raw or meta.
func checkCall(c Call) error {
	if err := checkLen("call.kind", c.Kind, MaxStringBytes); err != nil {
		return err
	}
	if err := checkStrings("call.plan", c.Plan, MaxStringBytes); err != nil {
		return err
	}
	if err := checkStrings("call.header", c.Header, MaxStringBytes); err != nil {
		return err
	}
	if len(c.Args) > MaxListItems {
		return limitError("call.args", len(c.Args), MaxListItems, "entries")
	}
	for _, a := range c.Args {
		if err := checkLen("call.args name", a.Name, MaxStringBytes); err != nil {
			return err
		}
		if err := checkValue("call.args."+a.Name, a.Value); err != nil {
			return err
		}
	}
	if err := checkValue("call.raw", c.Raw); err != nil {
		return err
	}
	return checkValue("call.meta", c.Meta)
}
