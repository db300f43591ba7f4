package episodes

import (
	"fmt"
	"math"
)

// Axes is how a store's coordinates lie in its game's world, declared in
// mfm-store.json ("axes"): which way north is and which block a position
// falls in. A store without it has the paper's (Minecraft's) axes: north
// is -z and block n spans n..n+1 (floor).
type Axes struct {
	// North is "+z" (Luanti) or "-z" (Minecraft); "" is "-z".
	North string `json:"north,omitempty"`
	// Cells is "round" (Luanti: block n spans n-0.5..n+0.5, nodes are
	// centred on whole numbers) or "floor" (Minecraft); "" is "floor".
	Cells string `json:"cells,omitempty"`
}

// LuantiAxes are the axes of a Luanti world.
var LuantiAxes = Axes{North: "+z", Cells: "round"}

// Check reports a value Axes does not know.
func (a Axes) Check() error {
	if a.North != "" && a.North != "+z" && a.North != "-z" {
		return fmt.Errorf("axes: north is %q, want \"+z\" or \"-z\"", a.North)
	}
	if a.Cells != "" && a.Cells != "round" && a.Cells != "floor" {
		return fmt.Errorf("axes: cells is %q, want \"round\" or \"floor\"", a.Cells)
	}
	return nil
}

// NorthPlusZ reports whether north is +z.
func (a Axes) NorthPlusZ() bool { return a.North == "+z" }

// Block is the whole-number coordinate of the block a position v falls
// in: round for Cells "round", floor otherwise.
func (a Axes) Block(v float64) int {
	if a.Cells == "round" {
		return int(math.Floor(v + 0.5))
	}
	return int(math.Floor(v))
}

// Axes are the store's declared axes (the zero Axes when it declares none).
func (s *Store) Axes() Axes {
	if s.Format.Axes == nil {
		return Axes{}
	}
	return *s.Format.Axes
}

// SetAxes declares the store's axes in mfm-store.json.
func (s *Store) SetAxes(a Axes) error {
	if err := a.Check(); err != nil {
		return err
	}
	if s.Format.Version == 0 {
		return fmt.Errorf("set axes of %s: a paper-harness store has no %s (create one with mfmd init)", s.Root, FormatFileName)
	}
	f := s.Format
	f.Axes = &a
	if err := WriteFormat(s.Root, f); err != nil {
		return fmt.Errorf("set axes of %s: %w", s.Root, err)
	}
	s.Format = f
	return nil
}
