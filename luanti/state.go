package luanti

import (
	"fmt"
	"math"
	"strings"
)

// Vec is a position or velocity.
type Vec struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Pointed is what the crosshair points at (up to 5 blocks).
type Pointed struct {
	Node  string  `json:"node"`
	Under Vec     `json:"under"`
	Above Vec     `json:"above"`
	Dist  float64 `json:"dist"`
	Soft  bool    `json:"soft"` // leaves or a plant: cut in a moment
	// AboveNode is the node at Above, where a placed block would go.
	AboveNode string `json:"above_node"`
}

// Item is a dropped item near the player.
type Item struct {
	Pos  Vec    `json:"pos"`
	Item string `json:"item"`
}

// Event is one game event from the mod: dig, place, hp, die, respawn,
// eat, pickup.
type Event struct {
	Type   string  `json:"type"`
	Node   string  `json:"node"`
	Pos    *Vec    `json:"pos"`
	Change float64 `json:"change"`
	Reason string  `json:"reason"`
	Item   string  `json:"item"`
	HP     float64 `json:"hp"`
	Count  float64 `json:"count"`
	// A command's result (type "cmd"): its id, name, outcome and note,
	// and what it returns (Data).
	ID   float64 `json:"id"`
	Cmd  string  `json:"cmd"`
	OK   bool    `json:"ok"`
	Note string  `json:"note"`
	Data any     `json:"data"`
}

// Raw is one state line of the mod (mod/mfm_state/init.lua).
type Raw struct {
	Seq        float64            `json:"seq"`
	US         float64            `json:"us"`
	GameTime   float64            `json:"gametime"`
	TimeOfDay  float64            `json:"timeofday"`
	Pos        Vec                `json:"pos"`
	Vel        Vec                `json:"vel"`
	Yaw        float64            `json:"yaw"`
	Pitch      float64            `json:"pitch"`
	HP         float64            `json:"hp"`
	Breath     float64            `json:"breath"`
	Wielded    string             `json:"wielded"`
	WieldIndex float64            `json:"wield_index"`
	Hotbar     []string           `json:"hotbar"`
	Inventory  map[string]float64 `json:"inventory"`
	Controls   map[string]bool    `json:"controls"`
	Pointed    any                `json:"pointed"`
	Below      string             `json:"below"`
	Tree       any                `json:"tree"`
	Items      []Item             `json:"items"`
	Biome      string             `json:"biome"`
	Headroom   float64            `json:"headroom"`    // free blocks above the head (up to 16)
	WieldedUse string             `json:"wielded_use"` // "use": left click runs the item's on_use; "place": right click
	PointedObj any                `json:"pointed_object"`
	Furnace    any                `json:"furnace"`     // the furnace in the crosshair
	Entombed   any                `json:"entombed"`    // {node, pos} when the eye is inside a solid block, else false
	Ahead      any                `json:"ahead"`       // the blocks one step ahead at the feet and the head
	Liquid     any                `json:"liquid"`      // {node, pos}: the nearest water or lava within 3 blocks, else false
	UnderFloor any                `json:"under_floor"` // {node, depth, pos}: air or a liquid under the floor within 8 blocks, else false
	Ready      bool               `json:"ready"`       // the player stands at the chosen spawn
	Spawn      string             `json:"spawn"`       // how the spawn was chosen
	Events     []Event            `json:"events"`
}

// Tomb is the solid block the eye is inside.
type Tomb struct {
	Node string
	Pos  Vec
}

// EntombedIn reports the block the eye is inside, if any: the view is
// that block's inside and the agent must dig it out.
func (r Raw) EntombedIn() (Tomb, bool) {
	m, ok := r.Entombed.(map[string]any)
	if !ok {
		return Tomb{}, false
	}
	return Tomb{Node: str(m["node"]), Pos: vec(m["pos"])}, true
}

// PointedAt decodes the pointed node (nil when none).
func (r Raw) PointedAt() *Pointed {
	m, ok := r.Pointed.(map[string]any)
	if !ok {
		return nil
	}
	p := &Pointed{Node: str(m["node"]), Under: vec(m["under"]), Above: vec(m["above"])}
	p.Dist, _ = m["dist"].(float64)
	p.Soft, _ = m["soft"].(bool)
	p.AboveNode = str(m["above_node"])
	return p
}

// Tree is a standing tree: the lowest trunk block of a column on the
// ground and how many trunk blocks stand on it.
type Tree struct {
	Base   Vec
	Height int
	Node   string
}

// NearestTree is the nearest standing tree within 20 blocks, if any.
func (r Raw) NearestTree() (Tree, bool) {
	m, ok := r.Tree.(map[string]any)
	if !ok {
		return Tree{}, false
	}
	h, _ := m["height"].(float64)
	return Tree{Base: vec(m), Height: int(h), Node: str(m["node"])}, true
}

func str(v any) string { s, _ := v.(string); return s }

func vec(v any) Vec {
	m, _ := v.(map[string]any)
	f := func(k string) float64 { x, _ := m[k].(float64); return x }
	return Vec{f("x"), f("y"), f("z")}
}

// Object is an entity in the crosshair.
type Object struct {
	Name string
	HP   float64
	Dist float64
}

// PointedObject is the entity in the crosshair within punching reach.
func (r Raw) PointedObject() (Object, bool) {
	m, ok := r.PointedObj.(map[string]any)
	if !ok {
		return Object{}, false
	}
	o := Object{Name: str(m["name"])}
	o.HP, _ = m["hp"].(float64)
	o.Dist, _ = m["dist"].(float64)
	return o, true
}

// Furnace is a furnace's node inventory: what it smelts, burns and made.
type Furnace struct {
	Pos            Vec
	Active         bool
	Src, Fuel, Dst map[string]float64
}

// FurnaceAhead is the furnace in the crosshair, if any.
func (r Raw) FurnaceAhead() (Furnace, bool) {
	m, ok := r.Furnace.(map[string]any)
	if !ok {
		return Furnace{}, false
	}
	f := Furnace{Pos: vec(m["pos"]), Src: counts(m["src"]), Fuel: counts(m["fuel"]), Dst: counts(m["dst"])}
	f.Active, _ = m["active"].(bool)
	return f, true
}

// counts decodes an item count table (the mod writes an empty one as
// null or []).
func counts(v any) map[string]float64 {
	out := map[string]float64{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		if n, ok := x.(float64); ok {
			out[k] = n
		}
	}
	return out
}

// Ahead is what one step ahead holds, at the feet and at the head.
type Ahead struct {
	Pos                  Vec
	Feet, Head           string
	FeetSolid, HeadSolid bool
}

// AheadOf decodes the blocks one step ahead.
func (r Raw) AheadOf() (Ahead, bool) {
	m, ok := r.Ahead.(map[string]any)
	if !ok {
		return Ahead{}, false
	}
	a := Ahead{Pos: vec(m["pos"]), Feet: str(m["feet"]), Head: str(m["head"])}
	a.FeetSolid, _ = m["feet_solid"].(bool)
	a.HeadSolid, _ = m["head_solid"].(bool)
	return a, true
}

// Blocking says what blocks a step ahead ("" when both blocks are free):
// "tree at feet level and leaves at head level at 3,12,-4".
func (a Ahead) Blocking() string {
	var parts []string
	if a.FeetSolid {
		parts = append(parts, shortName(a.Feet)+" at feet level")
	}
	if a.HeadSolid {
		parts = append(parts, shortName(a.Head)+" at head level")
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s at %v,%v,%v", strings.Join(parts, " and "), a.Pos.X, a.Pos.Y, a.Pos.Z)
}

// Hazard is a warning about water, lava or a cave close by ("" for
// none): the nearest liquid within 3 blocks (under the feet, ahead, or
// near) and what lies under the floor (a liquid or open air within 8
// blocks below, which digging down falls into).
func (r Raw) Hazard() string {
	var out []string
	if m, ok := r.Liquid.(map[string]any); ok {
		p := vec(m["pos"])
		feet := Vec{math.Floor(r.Pos.X + 0.5), math.Floor(r.Pos.Y + 0.5), math.Floor(r.Pos.Z + 0.5)}
		dx, dy, dz := p.X-feet.X, p.Y-feet.Y, p.Z-feet.Z
		where := "near"
		yaw := r.Yaw * math.Pi / 180
		switch {
		case dx == 0 && dz == 0 && dy < 0:
			where = "under your feet"
		case (-math.Sin(yaw)*dx + math.Cos(yaw)*dz) > 0.7*math.Hypot(dx, dz):
			where = "ahead"
		case dy < 0:
			where = "near, below"
		}
		out = append(out, fmt.Sprintf("%s %s, %.0f block(s) away at %v,%v,%v", liquidName(m["node"]), where, math.Sqrt(dx*dx+dy*dy+dz*dz), p.X, p.Y, p.Z))
	}
	if m, ok := r.UnderFloor.(map[string]any); ok {
		d, _ := m["depth"].(float64)
		p := vec(m["pos"])
		what := liquidName(m["node"])
		if str(m["node"]) == "air" {
			what = "open space (a cave)"
		}
		out = append(out, fmt.Sprintf("%s under %.0f block(s) of floor at %v,%v,%v: digging down falls into it", what, d-1, p.X, p.Y, p.Z))
	}
	return strings.Join(out, "; ")
}

// liquidName is a liquid's short name: water, lava, river water.
func liquidName(v any) string {
	n := shortName(str(v))
	for _, suf := range []string{"_source", "_flowing"} {
		n = strings.TrimSuffix(n, suf)
	}
	return strings.ReplaceAll(n, "_", " ")
}

// inLiquid names the liquid the player is in (at the feet or the head),
// "" when none.
func (r Raw) inLiquid() string {
	m, ok := r.Liquid.(map[string]any)
	if !ok {
		return ""
	}
	p, feet := vec(m["pos"]), Vec{math.Floor(r.Pos.X + 0.5), math.Floor(r.Pos.Y + 0.5), math.Floor(r.Pos.Z + 0.5)}
	if p.X == feet.X && p.Z == feet.Z && (p.Y == feet.Y || p.Y == feet.Y+1) {
		return liquidName(m["node"])
	}
	return ""
}

// isLiquid reports whether a node name is water or lava.
func isLiquid(node string) bool {
	n := shortName(node)
	return strings.Contains(n, "water_") || strings.Contains(n, "lava_")
}
