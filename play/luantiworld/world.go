// Package luantiworld is the play.World of the Luanti game: its atoms are
// the closed-loop atoms of the game adapter's Controller, each call one
// episode, and raw actions held through the same controller.
package luantiworld

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/luanti"
	"github.com/mfm-project/mfm/play"
)

// Short names keep the dispatch table at one line per atom.
type (
	ctl = luanti.Controller
	arg = play.Args
	res = luanti.Result
)

// call runs one atom on the controller.
type call func(c *ctl, a arg) (res, error)

type atom struct {
	spec play.AtomSpec
	run  call
}

// bound is an atom's worst-case step estimate and how it is worked out.
type bound struct {
	max func(play.Args, harness.State) int
	doc string
}

func fixed(n int) bound {
	return bound{func(play.Args, harness.State) int { return n }, fmt.Sprintf("≤%d", n)}
}

func perN(per, extra int) bound {
	return bound{func(a play.Args, _ harness.State) int { return per*a.Int("n") + extra }, fmt.Sprintf("%d per n + %d", per, extra)}
}

// walkBound is go_to's own budget: 4 ticks a block and 40 more.
var walkBound = bound{func(a play.Args, st harness.State) int {
	return int(math.Hypot(a.Float("x")-st.X, a.Float("z")-st.Z)*4) + 42
}, "4 per block of horizontal distance + 42"}

var ticksBound = bound{func(a play.Args, _ harness.State) int { return a.Int("ticks") + 2 }, "ticks + 2"}

func def(name, doc string, params []play.ParamSpec, b bound, run call) atom {
	return atom{spec: play.AtomSpec{Name: name, Doc: doc, Params: params, MaxSteps: b.max, Steps: b.doc}, run: run}
}

// item is a game item name from the agent's short one (tree ->
// default:tree).
func item(s string) string {
	if s == "" || strings.Contains(s, ":") {
		return s
	}
	return "default:" + s
}

// atoms is the dispatch table: one line per atom. The step estimate is
// the atom's own tick budget plus the tick after release (and, for the
// atoms that dig, luanti.DropSettleTicks for the drops), except for the
// turning atoms (look, look_abs, look_at, scan_around), select, eat and
// dig_down: their budget is reached only when they fail or meet a block
// harder than stone (a failure ends the plan), and a call that succeeds
// takes far less, so their estimate is the most a successful call takes
// with a margin (docs/PLAY.md has the recorded figures; dig_down: 9 to
// 17 ticks a block, 43 for one block with the settling).
var atoms = []atom{
	def("go_to", "walk to (x, z) until within `within` blocks, jumping when blocked; fails after 3 s without progress", play.Params("x:number", "z:number", "within:number=1"), walkBound, func(c *ctl, a arg) (res, error) { return c.GoTo(a.Float("x"), a.Float("z"), a.Float("within")) }),
	def("look_abs", "turn to an absolute yaw and pitch (degrees; pitch 90 looks down)", play.Params("yaw:number", "pitch:number=0"), fixed(10), func(c *ctl, a arg) (res, error) { return c.LookAbs(a.Float("yaw"), a.Float("pitch")) }),
	def("look", "turn by dyaw and dpitch degrees", play.Params("dyaw:number=0", "dpitch:number=0"), fixed(10), func(c *ctl, a arg) (res, error) { return c.Look(a.Float("dyaw"), a.Float("dpitch")) }),
	def("look_at", "turn toward the centre of block (x, y, z) and check the crosshair is on it", play.Params("x:int", "y:int", "z:int"), fixed(12), func(c *ctl, a arg) (res, error) { return c.LookAt(a.Int("x"), a.Int("y"), a.Int("z")) }),
	def("mine_ahead", "hold dig on the block under the crosshair until it breaks (8 s at most); a block further than the game's reach (4 blocks from the eye) fails at once saying how far it is; a drop that lands within pickup range (about 1 block) is waited for and picked up; one further away stays on the ground, and the note says where (collect_drops picks it up)", nil, fixed(90), func(c *ctl, a arg) (res, error) { return c.MineAhead() }),
	def("select", "select the hotbar slot holding item (e.g. axe_stone)", play.Params("item:string"), fixed(8), func(c *ctl, a arg) (res, error) { return c.Select(item(a.String("item"))) }),
	def("dig_down", "look down and dig n blocks under the feet; ends once the drops are picked up (or the note says where one lies)", play.Params("n:int=1"), perN(10, 48), func(c *ctl, a arg) (res, error) { return c.DigDown(a.Int("n")) }),
	def("pillar_up", "jump and place the held block under the feet n times", play.Params("n:int=1"), perN(16, 32), func(c *ctl, a arg) (res, error) { return c.PillarUp(a.Int("n")) }),
	def("place", "place a block on the face the crosshair points at: `item` (moved into the hand first, e.g. furnace), else the held one", play.Params("item:string?"), fixed(42), func(c *ctl, a arg) (res, error) {
		if it := a.String("item"); it != "" {
			return c.PlaceItem(it)
		}
		return c.Place()
	}),
	def("craft", "craft item through the game's recipes from the inventory (e.g. wood from tree, stick, pick_wood, furnace, torch) until at least n of it are made: n counts items, not recipe runs (whole runs: n=5 wood takes 2 tree and makes 8); fails saying how many were made and what is missing", play.Params("item:string", "n:int=1"), fixed(62), func(c *ctl, a arg) (res, error) { return c.Craft(a.String("item"), a.Int("n")) }),
	def("equip", "put item in the hand (moved into the hotbar if needed)", play.Params("item:string"), fixed(72), func(c *ctl, a arg) (res, error) { return c.Equip(a.String("item")) }),
	def("smelt", "load the furnace in front with n item and fuel_n fuel, wait, take the products", play.Params("item:string", "fuel:string=coal_lump", "n:int=1", "fuel_n:int=1"), perN(40, 102), func(c *ctl, a arg) (res, error) {
		return c.Smelt(a.String("item"), a.String("fuel"), a.Int("n"), a.Int("fuel_n"))
	}),
	def("open_inventory", "open the inventory GUI (frames show it; the state says a GUI is open)", nil, fixed(22), func(c *ctl, a arg) (res, error) { return c.OpenInventory() }),
	def("close_inventory", "close the open GUI", nil, fixed(22), func(c *ctl, a arg) (res, error) { return c.CloseInventory() }),
	def("attack", "punch what the crosshair points at n times", play.Params("n:int=1"), perN(10, 12), func(c *ctl, a arg) (res, error) { return c.Attack(a.Int("n")) }),
	def("use", "use the held item (eat food, till with a hoe, right-click a block)", nil, fixed(17), func(c *ctl, a arg) (res, error) { return c.Use() }),
	def("dig_out", "dig away the block the head is inside (the turn block says when the view is entombed)", nil, fixed(110), func(c *ctl, a arg) (res, error) { return c.DigOut() }),
	def("eat", "eat the held food", nil, fixed(8), func(c *ctl, a arg) (res, error) { return c.Eat() }),
	def("watch", "wait some ticks without input", play.Params("ticks:int=20"), ticksBound, func(c *ctl, a arg) (res, error) { return c.Watch(a.Int("ticks")) }),
	def("scan_around", "turn a full circle, keeping a frame each quarter; reports the nearest tree", nil, fixed(30), func(c *ctl, a arg) (res, error) { return c.ScanAround() }),
	def("jump", "jump once in place", nil, fixed(22), func(c *ctl, a arg) (res, error) { return c.Jump() }),
	def("collect_drops", "walk over the nearest dropped item (of `item`, if given) until picked up", play.Params("item:string?"), fixed(102), func(c *ctl, a arg) (res, error) { return c.CollectDrops(skipOthers(a.String("item"))) }),
}

func skipOthers(want string) func(luanti.Item) bool {
	if want == "" {
		return nil
	}
	full := item(want)
	return func(it luanti.Item) bool { return strings.Fields(it.Item + " ")[0] != full }
}

// World plays through a Luanti controller.
type World struct {
	C     *luanti.Controller
	atoms map[string]atom
}

// New wraps a controller (calibrated, its initial state recorded).
func New(c *luanti.Controller) *World {
	w := &World{C: c, atoms: map[string]atom{}}
	for _, a := range atoms {
		w.atoms[a.spec.Name] = a
	}
	return w
}

// Recorder is the recorder the controller records through.
func (w *World) Recorder() *harness.Recorder {
	if w.C == nil {
		return nil
	}
	return w.C.R
}

// Atoms lists the atoms.
func (w *World) Atoms() []play.AtomSpec {
	out := make([]play.AtomSpec, len(atoms))
	for i, a := range atoms {
		out[i] = a.spec
	}
	return out
}

// rawKeys maps raw action keys to the inputs they hold.
var rawKeys = []string{"forward", "back", "left", "right", "jump", "sneak", "attack", "use"}

// RawKeys are the keys a raw action may hold: movement, attack (dig) and
// use (place).
func (w *World) RawKeys() []string { return rawKeys }

// State is the controller's latest state with the step counter and the
// hotbar.
func (w *World) State() harness.State {
	st := w.C.State(w.C.Cur)
	st.Step = w.C.Step
	hb := make([]string, len(w.C.Cur.Hotbar))
	for i, h := range w.C.Cur.Hotbar {
		hb[i] = strings.TrimPrefix(h, "default:")
	}
	st.Extra["hotbar"] = hb
	st.Extra["headroom"] = w.C.Cur.Headroom
	return st
}

// Call runs one atom.
func (w *World) Call(ctx context.Context, name string, a play.Args) (play.Outcome, error) {
	at, ok := w.atoms[name]
	if !ok {
		return play.Outcome{}, fmt.Errorf("luanti: no atom %q", name)
	}
	r, err := at.run(w.C, a)
	if err != nil {
		return play.Outcome{}, err
	}
	return play.Outcome{OK: r.OK, Note: r.Note}, nil
}

// Raw holds the keys of action for repeat ticks (a frame mid-way and at
// the end) and releases them.
func (w *World) Raw(ctx context.Context, action map[string]any, repeat int) (play.Outcome, error) {
	on := func(k string) bool { v, ok := action[k]; return ok && fmt.Sprint(v) != "0" }
	in := luanti.Input{Forward: on("forward"), Back: on("back"), Left: on("left"), Right: on("right"), Jump: on("jump"), Sneak: on("sneak"), Dig: on("attack"), Place: on("use")}
	raw := map[string]any{}
	for k, v := range action {
		raw[k] = v
	}
	r, err := w.C.Run(harness.Call{Raw: raw, Budget: int64(repeat)}, repeat, func(i int, s luanti.Raw, _ []luanti.Event) (luanti.Input, bool, luanti.Result) {
		if i >= repeat {
			return luanti.Input{}, true, luanti.Result{OK: true, Note: fmt.Sprintf("held %d ticks", repeat)}
		}
		x := in
		x.Frame = i == repeat/2
		return x, false, luanti.Result{}
	})
	if err != nil {
		return play.Outcome{}, err
	}
	return play.Outcome{OK: r.OK, Note: r.Note}, nil
}
