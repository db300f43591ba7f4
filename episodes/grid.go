package episodes

import (
	"encoding/json"
	"fmt"
)

// Grid cell kinds the recorder writes. Other kinds (e.g. "water" in paper
// runs) are kept and shown as they are.
const (
	CellWalked  = "walked"
	CellPlaced  = "placed"
	CellOpened  = "opened"
	CellBlocked = "blocked"
	CellHazard  = "hazard"
)

// GridRow is one row of grid.jsonl: {"cell": [x, y, z], "kind": ..., "step": ...}
// plus optional detail (item, pose, amount, cause, episode).
type GridRow struct {
	Cell    [3]int   `json:"cell"`
	Kind    string   `json:"kind"`
	Step    int64    `json:"step"`
	Item    string   `json:"item,omitempty"`
	Pose    *Pose    `json:"pose,omitempty"`
	Amount  *float64 `json:"amount,omitempty"`
	Cause   string   `json:"cause,omitempty"`
	Episode string   `json:"episode,omitempty"`
}

// Pose is a position and view direction.
type Pose struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Z     float64 `json:"z"`
	Yaw   float64 `json:"yaw"`
	Pitch float64 `json:"pitch"`
}

// ParseGridRow decodes one grid.jsonl row.
func ParseGridRow(line []byte) (GridRow, error) {
	var g GridRow
	if err := json.Unmarshal(line, &g); err != nil {
		return GridRow{}, fmt.Errorf("grid row: %w", err)
	}
	if g.Kind == "" {
		return GridRow{}, fmt.Errorf("grid row: no \"kind\"")
	}
	return g, nil
}

// ReadGrid calls fn for each well-formed row of the grid file at path from
// byte offset start; malformed rows go to bad (may be nil).
func ReadGrid(path string, start int64, fn func(GridRow) error, bad func(*RowError)) (int64, error) {
	return ScanFile(path, start, func(l Line) error {
		g, err := ParseGridRow(l.Data)
		if err != nil {
			if bad != nil {
				bad(&RowError{File: path, Line: l.No, Err: err})
			}
			return nil
		}
		return fn(g)
	})
}

// Marshal encodes the row as the harness writes it (MarshalPy: sorted keys,
// Python float form, so an amount of 2 prints as 2.0 and pose coordinates
// keep their fraction). Optional fields are left out when empty.
func (g GridRow) Marshal() ([]byte, error) {
	m := map[string]any{
		"cell": []any{g.Cell[0], g.Cell[1], g.Cell[2]},
		"kind": g.Kind,
		"step": g.Step,
	}
	if g.Item != "" {
		m["item"] = g.Item
	}
	if g.Pose != nil {
		m["pose"] = map[string]any{"x": g.Pose.X, "y": g.Pose.Y, "z": g.Pose.Z, "yaw": g.Pose.Yaw, "pitch": g.Pose.Pitch}
	}
	if g.Amount != nil {
		m["amount"] = *g.Amount
	}
	if g.Cause != "" {
		m["cause"] = g.Cause
	}
	if g.Episode != "" {
		m["episode"] = g.Episode
	}
	return MarshalPy(m)
}
