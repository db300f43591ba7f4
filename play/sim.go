package play

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/harness"
)

// SimWorld is a small deterministic world for tests and for trying the
// play loop without the game: a flat plain with trees and hazard cells,
// atoms that walk, mine, dig and craft, recorded through a
// harness.Recorder like the game's. One step moves at most one block.
type SimWorld struct {
	R       *harness.Recorder
	Trees   map[[2]int]bool    // trunk cells (x, z)
	Hazards map[[2]int]float64 // cells that hurt when stepped on: damage
	st      harness.State
}

// NewSimWorld starts a sim world at the origin with trees at (5, 0) and
// (-8, 6) and a hazard (lava, 4 damage) at (3, 3); it records the initial
// state when the store has no episode yet. On a store that has episodes
// the world starts afresh (at the origin, empty-handed) and its step
// counter goes on from the last recorded step.
func NewSimWorld(r *harness.Recorder) (*SimWorld, error) {
	w := &SimWorld{R: r,
		Trees:   map[[2]int]bool{{5, 0}: true, {-8, 6}: true},
		Hazards: map[[2]int]float64{{3, 3}: 4},
		st:      harness.State{Health: 20, Inventory: map[string]int{}, Extra: map[string]any{"vitals": map[string]any{"breath": 10}}},
	}
	if last, ok := r.Last(); ok {
		w.st.Step = last.Step
	}
	if r.NextID() == "ep_000000" {
		if _, err := r.Initial(w.State(), w.frame()); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// simRecipe is one run of a sim recipe: what it takes and how many it
// makes.
type simRecipe struct {
	in  map[string]int
	out int
}

// missing is the first input (in name order) the inventory lacks for a
// run, with how many a run needs and how many there are; "" when a run
// can be made.
func (r simRecipe) missing(inv map[string]int) (item string, need, have int) {
	for _, k := range r.ingredients() {
		if inv[k] < r.in[k] {
			return k, r.in[k], inv[k]
		}
	}
	return "", 0, 0
}

func (r simRecipe) ingredients() []string {
	ins := make([]string, 0, len(r.in))
	for k := range r.in {
		ins = append(ins, k)
	}
	sort.Strings(ins)
	return ins
}

// inputs is what runs runs take: "2 tree", "3 wood, 2 stick".
func (r simRecipe) inputs(runs int) string {
	var parts []string
	for _, k := range r.ingredients() {
		parts = append(parts, fmt.Sprintf("%d %s", runs*r.in[k], k))
	}
	return strings.Join(parts, ", ")
}

// describe is one run: "1 tree → 4 wood".
func (r simRecipe) describe(item string) string {
	return fmt.Sprintf("%s → %d %s", r.inputs(1), r.out, item)
}

// simRuns says how many runs were made: "2 runs of 1 tree → 4 wood", as
// the game's craft does.
func simRuns(runs int, per string) string {
	if runs == 1 {
		return "1 run of " + per
	}
	return fmt.Sprintf("%d runs of %s", runs, per)
}

var simRecipes = map[string]simRecipe{
	"wood":      {map[string]int{"tree": 1}, 4},
	"stick":     {map[string]int{"wood": 1}, 4},
	"pick_wood": {map[string]int{"wood": 3, "stick": 2}, 1},
}

// GiveKit adds the kit to the inventory (recorded from the next step on).
func (w *SimWorld) GiveKit(kit map[string]int) error {
	for k, n := range kit {
		w.st.Inventory[k] += n
	}
	return nil
}

// Atoms lists the sim's atoms.
func (w *SimWorld) Atoms() []AtomSpec {
	return []AtomSpec{
		{Name: "go_to", Doc: "walk to (x, z) until within `within` blocks; stops when hurt", Params: Params("x:number", "z:number", "within:number=1"),
			MaxSteps: func(a Args, st harness.State) int { return int(math.Hypot(a.Float("x")-st.X, a.Float("z")-st.Z)) + 3 }, Steps: "1 per block of distance + 3"},
		{Name: "mine_ahead", Doc: "mine a trunk within 1.5 blocks (+1 tree)", MaxSteps: func(Args, harness.State) int { return 5 }, Steps: "≤5"},
		{Name: "dig_down", Doc: "dig n blocks down (+n dirt)", Params: Params("n:int=1"), MaxSteps: func(a Args, _ harness.State) int { return 5 * a.Int("n") }, Steps: "5 per block (n)"},
		{Name: "craft", Doc: "craft item until at least n of it are made (n counts items, whole recipe runs): wood (1 tree → 4), stick (1 wood → 4), pick_wood (3 wood, 2 stick → 1)", Params: Params("item:string", "n:int=1"), MaxSteps: func(a Args, _ harness.State) int { return 2 * a.Int("n") }, Steps: "2 per item (n)"},
		{Name: "look_abs", Doc: "turn to yaw (degrees) and pitch", Params: Params("yaw:number", "pitch:number=0"), MaxSteps: func(Args, harness.State) int { return 2 }, Steps: "≤2"},
		{Name: "wait", Doc: "wait some ticks", Params: Params("ticks:int=10"), MaxSteps: func(a Args, _ harness.State) int { return a.Int("ticks") }, Steps: "ticks"},
	}
}

// RawKeys are the keys a raw action may hold.
func (w *SimWorld) RawKeys() []string {
	return []string{"forward", "back", "left", "right", "jump", "sneak", "attack", "use"}
}

// State is the current state.
func (w *SimWorld) State() harness.State {
	s := w.st
	s.Inventory = map[string]int{}
	for k, v := range w.st.Inventory {
		s.Inventory[k] = v
	}
	return s
}

// Step counter and position setters for tests.

// Teleport moves the player without recording (tests).
func (w *SimWorld) Teleport(x, z float64) { w.st.X, w.st.Z = x, z }

func (w *SimWorld) frame() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	c := color.RGBA{uint8(int(w.st.X*8) & 255), uint8(int(w.st.Z*8) & 255), uint8(int(w.st.Step) & 255), 255}
	for i := range 16 {
		for j := range 16 {
			img.Set(i, j, c)
		}
	}
	return img
}

// tick records one step with the action and events.
func (w *SimWorld) tick(action map[string]any, events []string, frame bool) error {
	w.st.Step++
	s := harness.Step{Action: action, State: w.State(), Events: events}
	if frame {
		s.Frame = w.frame()
	}
	return w.R.Step(s)
}

// Call runs one atom.
func (w *SimWorld) Call(ctx context.Context, atom string, a Args) (Outcome, error) {
	call := harness.Call{Kind: atom, Args: harness.ArgsOf(a)}
	if err := w.R.Begin(call); err != nil {
		return Outcome{}, err
	}
	out, err := w.run(atom, a)
	if err != nil {
		w.R.Abort()
		return Outcome{}, err
	}
	if out.Note != "" {
		_ = w.R.Note(atom + ": " + out.Note)
	}
	if _, err := w.R.End(); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

func (w *SimWorld) run(atom string, a Args) (Outcome, error) {
	act := map[string]any{"atom": atom}
	last := func(ev ...string) error { return w.tick(act, ev, true) }
	switch atom {
	case "go_to":
		x, z, within := a.Float("x"), a.Float("z"), a.Float("within")
		for i := 0; ; i++ {
			d := math.Hypot(x-w.st.X, z-w.st.Z)
			if d <= within {
				if i == 0 {
					return Outcome{OK: true, Note: "already there"}, last()
				}
				return Outcome{OK: true, Note: fmt.Sprintf("arrived %.1f from the target", d)}, nil
			}
			stepLen := math.Min(1, d)
			w.st.X += (x - w.st.X) / d * stepLen
			w.st.Z += (z - w.st.Z) / d * stepLen
			cell := [2]int{int(math.Round(w.st.X)), int(math.Round(w.st.Z))}
			if dmg, ok := w.Hazards[cell]; ok {
				w.st.Health -= dmg
				if err := last(fmt.Sprintf("hurt lava %g", dmg)); err != nil {
					return Outcome{}, err
				}
				return Outcome{Note: fmt.Sprintf("hurt by lava at %d,%d; stopped", cell[0], cell[1])}, nil
			}
			d2 := math.Hypot(x-w.st.X, z-w.st.Z)
			if err := w.tick(map[string]any{"keys": []string{"forward"}}, nil, d2 <= within); err != nil {
				return Outcome{}, err
			}
		}
	case "mine_ahead":
		for c := range w.Trees {
			if math.Hypot(float64(c[0])-w.st.X, float64(c[1])-w.st.Z) <= 1.5 {
				for i := 0; i < 4; i++ {
					if err := w.tick(map[string]any{"keys": []string{"dig"}}, nil, false); err != nil {
						return Outcome{}, err
					}
				}
				w.st.Inventory["tree"]++
				return Outcome{OK: true, Note: "broke tree"}, last(fmt.Sprintf("mine_block tree at %d,1,%d", c[0], c[1]), "pick_up tree 1")
			}
		}
		return Outcome{Note: "nothing in reach to mine"}, last()
	case "dig_down":
		n := a.Int("n")
		for i := 0; i < n; i++ {
			for j := 0; j < 4; j++ {
				if err := w.tick(map[string]any{"keys": []string{"dig"}}, nil, false); err != nil {
					return Outcome{}, err
				}
			}
			w.st.Y--
			w.st.Inventory["dirt"]++
			if err := last(fmt.Sprintf("mine_block dirt at %d,%d,%d", int(w.st.X), int(w.st.Y), int(w.st.Z))); err != nil {
				return Outcome{}, err
			}
		}
		return Outcome{OK: true, Note: fmt.Sprintf("dug %d down", n)}, nil
	case "craft":
		item, n := a.String("item"), a.Int("n")
		r, ok := simRecipes[item]
		if !ok {
			return Outcome{Note: fmt.Sprintf("no recipe for %q", item)}, last()
		}
		// n counts the items wanted: whole runs until at least n are made
		made, runs := 0, 0
		per := r.describe(item)
		for made < n {
			if k, need, have := r.missing(w.st.Inventory); k != "" {
				if err := last(); err != nil {
					return Outcome{}, err
				}
				if runs == 0 {
					return Outcome{Note: fmt.Sprintf("missing %d %s (one run takes %s)", need-have, k, per)}, nil
				}
				return Outcome{Note: fmt.Sprintf("made %d of %d %s (%s), then missing %d %s", made, n, item, simRuns(runs, per), need-have, k)}, nil
			}
			if err := w.tick(act, nil, false); err != nil {
				return Outcome{}, err
			}
			for k, v := range r.in {
				w.st.Inventory[k] -= v
				if w.st.Inventory[k] == 0 {
					delete(w.st.Inventory, k)
				}
			}
			w.st.Inventory[item] += r.out
			made += r.out
			runs++
			if err := last(fmt.Sprintf("craft %s %d", item, r.out)); err != nil {
				return Outcome{}, err
			}
		}
		return Outcome{OK: true, Note: fmt.Sprintf("crafted %d %s from %s (%s)", made, item, r.inputs(runs), simRuns(runs, per))}, nil
	case "look_abs":
		w.st.Yaw, w.st.Pitch = a.Float("yaw"), a.Float("pitch")
		if err := w.tick(act, nil, false); err != nil {
			return Outcome{}, err
		}
		return Outcome{OK: true, Note: fmt.Sprintf("facing yaw %.0f pitch %.0f", w.st.Yaw, w.st.Pitch)}, last()
	case "wait":
		for i := 0; i < a.Int("ticks"); i++ {
			if err := w.tick(act, nil, i == a.Int("ticks")-1); err != nil {
				return Outcome{}, err
			}
		}
		return Outcome{OK: true, Note: "waited"}, nil
	}
	return Outcome{}, fmt.Errorf("sim: no atom %q", atom)
}

// Raw holds a raw action: forward moves 0.2 blocks a tick along the yaw.
func (w *SimWorld) Raw(ctx context.Context, action map[string]any, repeat int) (Outcome, error) {
	raw := map[string]any{}
	for k, v := range action {
		raw[k] = v
	}
	if err := w.R.Begin(harness.Call{Raw: raw, Budget: int64(repeat)}); err != nil {
		return Outcome{}, err
	}
	fwd := fmt.Sprint(action["forward"]) == "1"
	for i := 0; i < repeat; i++ {
		if fwd {
			yr := w.st.Yaw * math.Pi / 180
			w.st.X += -math.Sin(yr) * 0.2
			w.st.Z += math.Cos(yr) * 0.2
		}
		if err := w.tick(raw, nil, i == repeat-1); err != nil {
			w.R.Abort()
			return Outcome{}, err
		}
	}
	if _, err := w.R.End(); err != nil {
		return Outcome{}, err
	}
	return Outcome{OK: true, Note: fmt.Sprintf("held %d ticks", repeat)}, nil
}
