package luanti

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"
	"github.com/soniakeys/quant/median"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// Input is what an atom holds during one tick: keys and buttons held, and
// a relative mouse motion.
type Input struct {
	Forward, Back, Left, Right, Jump, Sneak bool
	Dig, Place                              bool // mouse buttons 1 and 3 held
	DX, DY                                  int  // mouse motion this tick (pixels)
	// Click presses and releases a mouse button at once (1 dig/punch, 3
	// place/use): one action, where a button held over a slow tick would
	// repeat it (a second place on the block just placed opens its GUI).
	Click byte
	Tap   xproto.Keysym
	Frame bool // keep this tick's frame
}

// Action is the recorded form of an Input: the keys held are under "keys"
// (so only movement atoms count as attempted movement for the stuck tag;
// blocked cells are given exactly by the controller).
func (in Input) Action() map[string]any {
	var keys []string
	for _, k := range []struct {
		on   bool
		name string
	}{{in.Forward, "forward"}, {in.Back, "back"}, {in.Left, "left"}, {in.Right, "right"}, {in.Jump, "jump"}, {in.Sneak, "sneak"}, {in.Dig, "dig"}, {in.Place, "place"}} {
		if k.on {
			keys = append(keys, k.name)
		}
	}
	m := map[string]any{"keys": nonNilStrings(keys)}
	if in.DX != 0 || in.DY != 0 {
		m["mouse"] = []int{in.DX, in.DY}
	}
	if in.Tap != 0 {
		m["tap"] = keyName(in.Tap)
	}
	switch in.Click {
	case 1:
		m["click"] = "dig"
	case 3:
		m["click"] = "place"
	}
	return m
}

func keyName(k xproto.Keysym) string {
	if k >= '0' && k <= 'z' {
		return string(rune(k))
	}
	return fmt.Sprintf("%#x", uint32(k))
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Stats count what the controller did.
type Stats struct {
	Episodes, Steps, Frames int
	Started                 time.Time
	AtomOK, AtomFail        map[string]int
}

// Controller runs closed-loop atoms against the game and records each
// call as one episode.
type Controller struct {
	G    *Game
	R    *harness.Recorder
	Step int64 // harness step counter (one per control tick)
	Cur  Raw   // latest state
	// MaxFrames is the number of frames kept per episode besides the
	// observation (default 2: one mid-way, the last).
	MaxFrames int
	// Milestones reached so far.
	Milestones []string
	// OpenSky is the last place seen with 16 free blocks overhead.
	OpenSky *Vec
	// Ctx, if set, interrupts the running atom when ctx ends (the episode
	// is written up to that tick with the note "interrupted"); later atom
	// calls return ctx's error without recording.
	Ctx   context.Context
	Stats Stats
	// LastRow is the index row of the last episode recorded, LastEvents
	// its events in the recorder's vocabulary (mine_block, hurt, …).
	LastRow    episodes.Row
	LastEvents []string
	// GUI names the open GUI ("inventory"), "" when none: set by
	// OpenInventory, cleared by CloseInventory or by the next atom that
	// needs the view (it presses Escape first).
	GUI string
	// LastData is what the mod returned for the last Command.
	LastData any
	// EpisodeLimit, if > 0, stops recording at that many episodes: a
	// further atom call returns ErrEpisodeLimit without recording.
	EpisodeLimit int

	held      Input
	lastFrame []byte
	mouseGain float64 // degrees of yaw per pixel, learnt
	spawn     Vec
}

// NewController reads the first state.
func NewController(g *Game, r *harness.Recorder) (*Controller, error) {
	c := &Controller{G: g, R: r, MaxFrames: 2, mouseGain: 0.2}
	c.Stats.Started = time.Now()
	c.Stats.AtomOK, c.Stats.AtomFail = map[string]int{}, map[string]int{}
	raw, _, err := g.Next(0)
	if err != nil {
		return nil, err
	}
	c.Cur = raw
	c.spawn = raw.Pos
	return c, nil
}

// shortName strips the default: prefix of minetest_game items and nodes.
func shortName(s string) string { return strings.TrimPrefix(s, "default:") }

// State converts a raw state line into the recorder's state.
func (c *Controller) State(r Raw) harness.State {
	inv := map[string]int{}
	for k, v := range r.Inventory {
		inv[shortName(k)] = int(v)
	}
	pointed := any(nil)
	if p := r.PointedAt(); p != nil {
		pointed = shortName(p.Node)
	}
	// entombed names the solid block the eye is inside ("" when free):
	// every frame shows that block's inside until it is dug out.
	entombed := ""
	if t, ok := r.EntombedIn(); ok {
		entombed = shortName(t.Node)
	}
	return harness.State{
		Step: c.Step, X: round3(r.Pos.X), Y: round3(r.Pos.Y), Z: round3(r.Pos.Z),
		Yaw: round3(normYaw(r.Yaw)), Pitch: round3(r.Pitch),
		Inventory: inv, Health: r.HP, GUIOpen: c.GUI != "",
		Milestones: append([]string(nil), c.Milestones...),
		Extra: map[string]any{
			"vitals":      map[string]any{"breath": r.Breath},
			"mainhand":    shortName(r.Wielded),
			"time_of_day": round3(r.TimeOfDay),
			"pointed":     pointed,
			"below":       shortName(r.Below),
			"entombed":    entombed,
			"gui":         c.GUI,
			// water, lava or a cave close by (Raw.Hazard; "" for none)
			"hazard": r.Hazard(),
		},
	}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

func normYaw(y float64) float64 {
	y = math.Mod(y, 360)
	if y < 0 {
		y += 360
	}
	return y
}

// angleDiff is b-a in (-180, 180].
func angleDiff(a, b float64) float64 {
	d := math.Mod(b-a, 360)
	if d > 180 {
		d -= 360
	} else if d <= -180 {
		d += 360
	}
	return d
}

// apply sends the input changes to the game.
func (c *Controller) apply(in Input) error {
	x := c.G.X
	keys := []struct {
		ks       xproto.Keysym
		was, now bool
	}{{KeyW, c.held.Forward, in.Forward}, {KeyS, c.held.Back, in.Back}, {KeyA, c.held.Left, in.Left}, {KeyD, c.held.Right, in.Right}, {KeySpace, c.held.Jump, in.Jump}, {KeyShift, c.held.Sneak, in.Sneak}}
	for _, k := range keys {
		if k.was != k.now {
			if err := x.Key(k.ks, k.now); err != nil {
				return err
			}
		}
	}
	if c.held.Dig != in.Dig {
		if err := x.Button(1, in.Dig); err != nil {
			return err
		}
	}
	if c.held.Place != in.Place {
		if err := x.Button(3, in.Place); err != nil {
			return err
		}
	}
	if err := x.Move(in.DX, in.DY); err != nil {
		return err
	}
	if in.Tap != 0 {
		if err := x.Tap(in.Tap); err != nil {
			return err
		}
	}
	if in.Click != 0 {
		if err := x.Button(in.Click, true); err != nil {
			return err
		}
		if err := x.Button(in.Click, false); err != nil {
			return err
		}
	}
	c.held = in
	c.held.DX, c.held.DY, c.held.Tap, c.held.Click, c.held.Frame = 0, 0, 0, 0, false
	return nil
}

// ErrEpisodeLimit is returned by an atom called after Controller.EpisodeLimit
// episodes were recorded.
var ErrEpisodeLimit = errors.New("luanti: episode limit reached")

// SettleTicks bounds how long an episode waits for the player to land
// after its atom ended in the air (a 13-block fall takes about 2 s).
const SettleTicks = 60

// airborne reports a player moving vertically: falling, or rising in a
// jump.
func airborne(r Raw) bool { return math.Abs(r.Vel.Y) > 0.2 }

// tick is one recorded control step.
// advance waits for the game's next state line after the current one and
// makes it current (one step); on an error the episode is aborted.
func (c *Controller) advance() (tick, error) {
	raw, ev, err := c.G.Next(c.Cur.Seq)
	if err != nil {
		c.R.Abort()
		return tick{}, err
	}
	c.Cur = raw
	c.Step++
	return tick{raw: raw, events: ev}, nil
}

type tick struct {
	in     Input
	raw    Raw
	events []Event
	img    *image.RGBA
}

// Result is what an atom reports.
type Result struct {
	OK   bool
	Note string
}

// toolWatch notices the tool in the hand breaking during an atom: it
// leaves the hand and the inventory holds one fewer.
type toolWatch struct {
	name    string  // the wielded item at the start
	had     float64 // how many the inventory held
	digging bool    // the atom has held dig
	note    string  // set once it broke
}

// toolKinds are the name parts of items that wear out.
var toolKinds = []string{"pick_", "axe_", "shovel_", "sword_", "hoe_"}

func (w *toolWatch) broke(s Raw, tick int) bool {
	if w.note != "" {
		return true
	}
	isTool := false
	for _, k := range toolKinds {
		isTool = isTool || strings.Contains(w.name, k)
	}
	if !isTool || s.Wielded == w.name || s.Inventory[w.name] >= w.had {
		return false
	}
	w.note = fmt.Sprintf("the %s in the hand broke (worn out) at tick %d", shortName(w.name), tick)
	return true
}

// atomFunc decides the input of the next tick from the current state; it
// returns done when the atom finished (ok or not).
type atomFunc func(i int, s Raw, ev []Event) (in Input, done bool, res Result)

// Run records one atom call as an episode: each tick the atom chooses an
// input from the latest state, the input is sent, the next state line is
// awaited, and the step is kept with its events; at the end every key is
// released and the episode is written with up to MaxFrames frames.
func (c *Controller) Run(call harness.Call, budget int, f atomFunc) (Result, error) {
	if c.Ctx != nil && c.Ctx.Err() != nil {
		return Result{}, c.Ctx.Err() // stopping: no new episode
	}
	if c.EpisodeLimit > 0 && c.Stats.Episodes >= c.EpisodeLimit {
		return Result{}, ErrEpisodeLimit
	}
	if err := c.R.Begin(call); err != nil {
		return Result{}, err
	}
	var ticks []tick
	var res Result
	done := false
	closedGUI := false
	if c.GUI != "" && call.Kind != "open_inventory" && call.Kind != "close_inventory" {
		// The atom needs the view: close the GUI first (one recorded tick).
		in := Input{Tap: KeyEscape}
		if err := c.apply(in); err != nil {
			c.R.Abort()
			return Result{}, err
		}
		t, err := c.advance()
		if err != nil {
			return Result{}, err
		}
		t.in = in
		c.GUI = ""
		closedGUI = true
		ticks = append(ticks, t)
	}
	c.Cur.Events = nil // events are seen once, by the tick that brought them
	tool := toolWatch{name: c.Cur.Wielded, had: c.Cur.Inventory[c.Cur.Wielded]}
	for i := 0; i < budget && !done; i++ {
		if c.Ctx != nil && c.Ctx.Err() != nil && len(ticks) > 0 {
			done, res = true, Result{Note: "interrupted"}
			break
		}
		if tool.broke(c.Cur, i) && tool.digging {
			// digging on bare-handed would only spend the budget
			done, res = true, Result{Note: tool.note + ": stopped; equip another tool (the inventory shows what is left)"}
			break
		}
		in, d, r := f(i, c.Cur, nil)
		if d {
			done, res = true, r
			break
		}
		tool.digging = tool.digging || in.Dig
		if err := c.apply(in); err != nil {
			c.R.Abort()
			return Result{}, err
		}
		t, err := c.advance()
		if err != nil {
			return Result{}, err
		}
		t.in = in
		raw, ev := t.raw, t.events
		if raw.Headroom >= 16 && raw.Vel.Y == 0 {
			p := raw.Pos
			c.OpenSky = &p
		}
		if in.Frame {
			if t.img, err = c.G.X.Capture(); err != nil {
				c.R.Abort()
				return Result{}, err
			}
		}
		ticks = append(ticks, t)
		// The atom sees the events of this tick through the state's
		// Events (the line's own) and the accumulated ev.
		if len(ev) > 0 {
			c.Cur.Events = ev
		}
	}
	if !done {
		if _, d, r := f(budget, c.Cur, nil); d {
			res = r
		} else {
			res = Result{OK: false, Note: fmt.Sprintf("budget of %d ticks used up", budget)}
		}
	}
	if tool.note != "" && !strings.Contains(res.Note, tool.note) {
		res.Note = strings.TrimPrefix(res.Note+"; "+tool.note, "; ")
	}
	// Release everything; the state after release is the last step.
	if c.held != (Input{}) {
		if err := c.apply(Input{}); err != nil {
			c.R.Abort()
			return Result{}, err
		}
	}
	// The world settles before the episode ends: an atom that ends in the
	// air (walked off a ledge, mid-jump) goes on without input until the
	// player has landed, so a fall and its damage are in this episode.
	if airborne(c.Cur) {
		y0, hurt := c.Cur.Pos.Y, 0.0
		for k, still := 0, 0; k < SettleTicks && still < 2; k++ {
			t, err := c.advance()
			if err != nil {
				return Result{}, err
			}
			ticks = append(ticks, t)
			raw := t.raw
			for _, e := range t.events {
				if e.Type == "hp" && e.Change < 0 && e.Reason == "fall" {
					hurt -= e.Change
				}
			}
			if airborne(raw) {
				still = 0
			} else {
				still++
			}
		}
		if drop := y0 - c.Cur.Pos.Y; drop > 0.5 || hurt > 0 {
			res.Note = strings.TrimPrefix(res.Note+fmt.Sprintf("; landed %.1f lower", drop), "; ")
			if hurt > 0 {
				res.Note += fmt.Sprintf(", hurt %g by the fall", hurt)
			}
		}
	}
	if len(ticks) == 0 {
		t, err := c.advance()
		if err != nil {
			return Result{}, err
		}
		ticks = append(ticks, t)
	}
	img, err := c.G.X.Capture()
	if err != nil {
		c.R.Abort()
		return Result{}, err
	}
	ticks[len(ticks)-1].img = img
	for i := range ticks {
		t := &ticks[i]
		var evs []string
		var cells []harness.Cell
		for _, e := range t.events {
			if l := c.eventLine(e); l != "" {
				evs = append(evs, l)
			}
			if e.Type == "place" && e.Pos != nil {
				cells = append(cells, harness.Cell{X: int(math.Floor(e.Pos.X + 0.5)), Y: int(math.Floor(e.Pos.Y + 0.5)), Z: int(math.Floor(e.Pos.Z + 0.5)), Kind: "placed", Item: shortName(e.Node)})
			}
		}
		if t.in.Forward && i > 0 && math.Hypot(t.raw.Pos.X-ticks[i-1].raw.Pos.X, t.raw.Pos.Z-ticks[i-1].raw.Pos.Z) < 0.02 {
			yaw := t.raw.Yaw * math.Pi / 180
			cells = append(cells, harness.Cell{X: int(math.Floor(t.raw.Pos.X - math.Sin(yaw) + 0.5)), Y: int(math.Floor(t.raw.Pos.Y + 0.5)), Z: int(math.Floor(t.raw.Pos.Z + math.Cos(yaw) + 0.5)), Kind: "blocked"})
		}
		c.milestones(t)
		step := harness.Step{Action: t.in.Action(), State: c.stateAt(t.raw, ticks, i), Events: evs, Cells: cells}
		if t.img != nil {
			b := encodeFrame(t.img)
			if !bytes.Equal(b, c.lastFrame) {
				step.FramePNG = b
				c.lastFrame = b
				c.Stats.Frames++
			}
		}
		if err := c.R.Step(step); err != nil {
			c.R.Abort()
			return Result{}, err
		}
	}
	if closedGUI {
		res.Note = strings.TrimSuffix("closed the inventory first; "+res.Note, "; ")
	}
	if res.Note != "" {
		if err := c.R.Note(call.Kind + ": " + res.Note); err != nil {
			return Result{}, err
		}
	}
	row, err := c.R.End()
	if err != nil {
		return Result{}, err
	}
	c.LastRow, c.LastEvents = row, nil
	for _, t := range ticks {
		for _, e := range t.events {
			if l := c.eventLine(e); l != "" {
				c.LastEvents = append(c.LastEvents, l)
			}
		}
	}
	c.Stats.Episodes++
	c.Stats.Steps += len(ticks)
	if res.OK {
		c.Stats.AtomOK[call.Kind]++
	} else {
		c.Stats.AtomFail[call.Kind]++
	}
	return res, nil
}

// stateAt is the recorder state of tick i (Step numbers are consecutive).
func (c *Controller) stateAt(r Raw, ticks []tick, i int) harness.State {
	st := c.State(r)
	st.Step = c.Step - int64(len(ticks)-1-i)
	return st
}

func (c *Controller) milestones(t *tick) {
	add := func(m string) {
		for _, x := range c.Milestones {
			if x == m {
				return
			}
		}
		c.Milestones = append(c.Milestones, m)
	}
	inv := t.raw.Inventory
	if inv["default:tree"] >= 1 {
		add("wood_1")
	}
	if inv["default:tree"] >= 5 {
		add("wood_5")
	}
	if inv["default:cobble"] >= 1 {
		add("stone_1")
	}
	if inv["default:coal_lump"] >= 1 {
		add("coal_1")
	}
	if c.spawn.Y-t.raw.Pos.Y >= 4 {
		add("depth_4")
	}
	for _, e := range t.events {
		if e.Type == "hp" && e.Reason == "fall" && e.Change < 0 {
			add("fall_damage")
		}
	}
}

// eventLine formats a mod event in the recorder's event vocabulary
// (mine_block, place_block, hurt, died, eat, pick_up).
func (c *Controller) eventLine(e Event) string {
	at := ""
	if e.Pos != nil {
		at = fmt.Sprintf(" at %d,%d,%d", int(math.Round(e.Pos.X)), int(math.Round(e.Pos.Y)), int(math.Round(e.Pos.Z)))
	}
	switch e.Type {
	case "dig":
		return "mine_block " + shortName(e.Node) + at
	case "place":
		return "place_block " + shortName(e.Node) + at
	case "hp":
		if e.Change < 0 {
			return fmt.Sprintf("hurt %s %g", e.Reason, -e.Change)
		}
		return fmt.Sprintf("heal %s %g", e.Reason, e.Change)
	case "die":
		return "died " + e.Reason
	case "eat":
		return fmt.Sprintf("eat %s %+g", shortName(e.Item), e.HP)
	case "pickup":
		return fmt.Sprintf("pick_up %s %g", shortName(e.Item), e.Count)
	case "craft":
		return fmt.Sprintf("craft %s %g", shortName(e.Item), e.Count)
	case "kill":
		return "kill " + e.Item
	case "cmd":
		return "" // a command's result is its atom's note
	}
	return e.Type
}

// FrameColors is the size of each frame's own palette.
const FrameColors = 64

// encodeFrame quantises a frame to its own 64-colour palette (median cut,
// github.com/soniakeys/quant; no dithering, which compresses badly) and
// encodes it as PNG; it keeps the dark trunks and leaves of a forest that
// a fixed palette (web-safe, Plan 9) turns black or yellow.
func encodeFrame(img *image.RGBA) []byte {
	p := median.Quantizer(FrameColors).Paletted(img)
	draw.Draw(p, p.Rect, img, img.Rect.Min, draw.Src)
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	_ = enc.Encode(&b, p)
	return b.Bytes()
}

// Frame captures and encodes the current frame.
func (c *Controller) Frame() ([]byte, error) {
	img, err := c.G.X.Capture()
	if err != nil {
		return nil, err
	}
	return encodeFrame(img), nil
}

// Initial records the initial state (ep_000000).
func (c *Controller) Initial() error {
	raw, _, err := c.G.Next(c.Cur.Seq)
	if err != nil {
		return err
	}
	c.Cur = raw
	f, err := c.Frame()
	if err != nil {
		return err
	}
	c.lastFrame = f
	_, err = c.R.Initial(c.State(raw), f)
	if err == nil {
		c.Stats.Episodes++
		c.Stats.Frames++
	}
	return err
}

// args builds an ordered argument list.
func args(kv ...any) []harness.Arg {
	var a []harness.Arg
	for i := 0; i+1 < len(kv); i += 2 {
		a = append(a, harness.Arg{Name: kv[i].(string), Value: kv[i+1]})
	}
	return a
}

func sortedKeys(m map[string]int) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
