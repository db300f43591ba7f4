package luanti

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/mfm-project/mfm/harness"
)

// EyeHeight is the player's eye height above the feet (Luanti 5.6).
const EyeHeight = 1.47

// Calibrate measures how many degrees the view turns per pixel of mouse
// motion (sign included), before anything is recorded.
func (c *Controller) Calibrate() error {
	for try := 0; try < 3; try++ {
		before := c.Cur
		if err := c.G.X.Move(100, 0); err != nil {
			return err
		}
		var err error
		for i := 0; i < 4; i++ {
			if c.Cur, _, err = c.G.Next(c.Cur.Seq); err != nil {
				return err
			}
		}
		d := angleDiff(before.Yaw, c.Cur.Yaw)
		if math.Abs(d) > 2 {
			c.mouseGain = d / 100
			return nil
		}
	}
	return fmt.Errorf("luanti: the view does not turn with mouse motion (is the window focused?)")
}

func clampPx(v float64) int {
	return int(math.Max(-250, math.Min(250, math.Round(v))))
}

// turn is the mouse motion that turns toward yaw/pitch (pitch: + is down).
func (c *Controller) turn(s Raw, yaw, pitch float64) (dx, dy int, ey, ep float64) {
	ey = angleDiff(normYaw(s.Yaw), normYaw(yaw))
	ep = pitch - s.Pitch
	g := c.mouseGain
	return clampPx(ey / g * 0.9), clampPx(ep / math.Abs(g) * 0.9), ey, ep
}

// LookAbs turns to an absolute yaw and pitch (degrees; pitch 90 looks down).
func (c *Controller) LookAbs(yaw, pitch float64) (Result, error) {
	yaw, pitch = round1(normYaw(yaw)), round1(math.Max(-89, math.Min(89, pitch)))
	return c.Run(harness.Call{Kind: "look_abs", Args: args("yaw", yaw, "pitch", pitch)}, 20, c.lookFn(yaw, pitch, false))
}

// Look turns by a relative yaw and pitch.
func (c *Controller) Look(dyaw, dpitch float64) (Result, error) {
	yaw, pitch := normYaw(c.Cur.Yaw+dyaw), math.Max(-89, math.Min(89, c.Cur.Pitch+dpitch))
	return c.Run(harness.Call{Kind: "look", Args: args("dyaw", round1(dyaw), "dpitch", round1(dpitch))}, 20, c.lookFn(yaw, pitch, false))
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func (c *Controller) lookFn(yaw, pitch float64, frame bool) atomFunc {
	y0, p0 := c.Cur.Yaw, c.Cur.Pitch
	return func(i int, s Raw, _ []Event) (Input, bool, Result) {
		dx, dy, ey, ep := c.turn(s, yaw, pitch)
		if math.Abs(ey) < 2.5 && math.Abs(ep) < 2.5 {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("facing yaw %.0f pitch %.0f", normYaw(s.Yaw), s.Pitch)}
		}
		if i >= 20 {
			if math.Abs(angleDiff(y0, s.Yaw)) < 0.5 && math.Abs(p0-s.Pitch) < 0.5 {
				return Input{}, true, Result{Note: fmt.Sprintf("the view did not turn at all (a GUI open?); %.0f/%.0f degrees off", ey, ep)}
			}
			return Input{}, true, Result{Note: fmt.Sprintf("still %.0f/%.0f degrees off", ey, ep)}
		}
		return Input{DX: dx, DY: dy, Frame: frame}, false, Result{}
	}
}

// angleTo is the yaw and pitch from the eye to a point.
func angleTo(s Raw, p Vec) (yaw, pitch float64) {
	dx, dy, dz := p.X-s.Pos.X, p.Y-(s.Pos.Y+EyeHeight), p.Z-s.Pos.Z
	yaw = math.Atan2(-dx, dz) * 180 / math.Pi
	pitch = -math.Atan2(dy, math.Hypot(dx, dz)) * 180 / math.Pi
	return normYaw(yaw), pitch
}

// LookAt turns toward the centre of block (x, y, z) and checks the
// crosshair points at it.
func (c *Controller) LookAt(x, y, z int) (Result, error) {
	target := Vec{float64(x), float64(y), float64(z)}
	return c.Run(harness.Call{Kind: "look_at", Args: args("x", x, "y", y, "z", z)}, 25, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		yaw, pitch := angleTo(s, target)
		dx, dy, ey, ep := c.turn(s, yaw, pitch)
		if math.Abs(ey) < 3 && math.Abs(ep) < 3 {
			p := s.PointedAt()
			if p != nil && p.Under == target {
				return Input{}, true, Result{OK: true, Note: "pointing at " + shortName(p.Node)}
			}
			what := "nothing"
			if p != nil {
				what = fmt.Sprintf("%s at %v,%v,%v", shortName(p.Node), p.Under.X, p.Under.Y, p.Under.Z)
			}
			return Input{}, true, Result{Note: "facing the block but the crosshair hits " + what}
		}
		if i >= 24 {
			return Input{}, true, Result{Note: fmt.Sprintf("still %.0f/%.0f degrees off", ey, ep)}
		}
		return Input{DX: dx, DY: dy}, false, Result{}
	})
}

// GoTo walks to (x, z) until within `within` blocks, steering with the
// mouse and jumping when the way ahead is blocked. It fails when no
// progress is made for 3 s.
func (c *Controller) GoTo(x, z, within float64) (Result, error) {
	x, z = round1(x), round1(z)
	d0 := math.Hypot(x-c.Cur.Pos.X, z-c.Cur.Pos.Z)
	budget := int(d0*4) + 40
	best, bestAt := d0, 0
	var slow int
	ground := c.Cur // the latest state on the ground: what blocks is said from there, not mid-jump
	return c.Run(harness.Call{Kind: "go_to", Args: args("x", x, "z", z, "within", within), Budget: int64(budget)}, budget, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if !airborne(s) && s.Below != "air" { // at a jump's top the speed is nil, but not the air below
			ground = s
		}
		d := math.Hypot(x-s.Pos.X, z-s.Pos.Z)
		if d <= within {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("arrived %.1f from the target", d)}
		}
		if d < best-0.3 {
			best, bestAt = d, i
		}
		if i-bestAt > 30 {
			return Input{}, true, Result{Note: fmt.Sprintf("blocked: no progress for 3 s, %.1f blocks short; %s", d, blockedBy(ground))}
		}
		if i >= budget {
			return Input{}, true, Result{Note: fmt.Sprintf("out of time %.1f blocks short", d)}
		}
		yaw := normYaw(math.Atan2(-(x-s.Pos.X), z-s.Pos.Z) * 180 / math.Pi)
		dx, dy, ey, _ := c.turn(s, yaw, 10)
		in := Input{DX: dx, DY: dy, Forward: math.Abs(ey) < 40}
		if in.Forward && math.Hypot(s.Vel.X, s.Vel.Z) < 1.0 && i > 2 {
			slow++
		} else {
			slow = 0
		}
		in.Jump = slow >= 2
		if i%20 == 10 {
			in.Frame = true
		}
		return in, false, Result{}
	})
}

// blockedBy says what stands one step ahead when a walk stalls.
func blockedBy(s Raw) string {
	a, ok := s.AheadOf()
	if !ok {
		return "the game did not say what is ahead"
	}
	if b := a.Blocking(); b != "" {
		return "in the way: " + b
	}
	return fmt.Sprintf("nothing solid one step ahead (%s at feet level, %s at head level at %v,%v,%v): a drop, a ledge beside, or something wider than a block", shortName(a.Feet), shortName(a.Head), a.Pos.X, a.Pos.Y, a.Pos.Z)
}

// DefaultReach is how far the engine lets the hand dig and place, from
// the eye, when the state gives no reach (no item of minetest_game sets
// a range of its own).
const DefaultReach = 4.0

// outOfReach says why the pointed block p cannot be dug from where the
// player is: the crosshair meets it further from the eye than the held
// item reaches (the state's pointed node is looked for within 5 blocks,
// the game digs within 4). "" when it is in reach.
func outOfReach(s Raw, p *Pointed) string {
	reach := s.Reach
	if reach <= 0 {
		reach = DefaultReach
	}
	if p == nil || p.Dist <= reach {
		return ""
	}
	return fmt.Sprintf("the %s at %v,%v,%v is %.1f blocks from your eye, out of reach (the game digs within %g): walk closer first, e.g. go_to x=%v z=%v within=2",
		shortName(p.Node), p.Under.X, p.Under.Y, p.Under.Z, p.Dist, reach, p.Under.X, p.Under.Z)
}

// MineAhead holds the dig button on the pointed block until it breaks.
// A block beyond the game's reach fails at once, saying how far it is.
func (c *Controller) MineAhead() (Result, error) {
	p := c.Cur.PointedAt()
	target := "nothing"
	if p != nil {
		target = shortName(p.Node)
	}
	far := outOfReach(c.Cur, p)
	return c.Run(harness.Call{Kind: "mine_ahead", Args: args("block", target)}, 80, func(i int, s Raw, ev []Event) (Input, bool, Result) {
		if p == nil {
			return Input{}, true, Result{Note: "nothing in the crosshair within 5 blocks to mine"}
		}
		if far != "" {
			return Input{}, true, Result{Note: far}
		}
		for _, e := range s.Events {
			if e.Type == "dig" {
				return Input{}, true, Result{OK: true, Note: "broke " + shortName(e.Node)}
			}
		}
		if i >= 80 {
			return Input{}, true, Result{Note: "the block did not break in 8 s"}
		}
		return Input{Dig: true, Frame: i == 6}, false, Result{}
	})
}

// Select selects the hotbar slot holding item (e.g. "default:axe_stone").
func (c *Controller) Select(item string) (Result, error) {
	slot := -1
	for i, h := range c.Cur.Hotbar {
		if h == item {
			slot = i
			break
		}
	}
	return c.Run(harness.Call{Kind: "select", Args: args("item", shortName(item))}, 10, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if slot < 0 {
			return Input{}, true, Result{Note: "not in the hotbar"}
		}
		if s.Wielded == item {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("holding %s (slot %d)", shortName(item), slot+1)}
		}
		if i >= 10 {
			return Input{}, true, Result{Note: "the slot did not change"}
		}
		if i%4 == 0 {
			return Input{Tap: xproto.Keysym('1' + slot)}, false, Result{}
		}
		return Input{}, false, Result{}
	})
}

// Wield makes sure item is in hand (records a select call only if needed).
func (c *Controller) Wield(item string) error {
	if c.Cur.Wielded == item {
		return nil
	}
	_, err := c.Select(item)
	return err
}

// digDownSettleTicks is how long dig_down waits for the fall after its
// last dig before it reports that the player did not go down.
const digDownSettleTicks = 20

// DigDown looks straight down and digs n blocks under the feet. A plant
// or leaves in the player's own cell (the crosshair's first hit when
// looking down, cut in a moment) are cleared on the way and not counted
// as one of the n blocks: n is the blocks dug under the feet.
func (c *Controller) DigDown(n int) (Result, error) {
	y0 := c.Cur.Pos.Y
	dug, dugAt := 0, -1
	var cleared []string
	pointed := c.Cur.PointedAt() // what the next dig event is of
	return c.Run(harness.Call{Kind: "dig_down", Args: args("n", n)}, 60*n, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		for _, e := range s.Events {
			if e.Type != "dig" {
				continue
			}
			if pointed != nil && pointed.Soft && e.Node == pointed.Node {
				cleared = append(cleared, shortName(e.Node))
				continue
			}
			dug++
		}
		pointed = s.PointedAt()
		if dug >= n && dugAt < 0 {
			dugAt = i
		}
		if dug >= n && y0-s.Pos.Y >= float64(n)-0.5 && math.Abs(s.Vel.Y) < 0.1 {
			note := fmt.Sprintf("dug %d blocks, %.1f down", dug, y0-s.Pos.Y)
			if len(cleared) > 0 {
				note += fmt.Sprintf(" (cleared %s at the feet first, not counted)", strings.Join(cleared, ", "))
			}
			return Input{}, true, Result{OK: true, Note: note}
		}
		if down := y0 - s.Pos.Y; down > float64(dug)+1.5 && math.Abs(s.Vel.Y) < 0.1 {
			// the floor opened: stop digging where the player landed
			return Input{}, true, Result{Note: fmt.Sprintf("fell %.1f blocks after digging %d of %d: the floor opened into open space (a cave) below; look around before digging on", down, dug, n)}
		}
		// A fall of n blocks lands within a second or two: once the n
		// digs are done, waiting longer only spends steps.
		if dugAt >= 0 && i-dugAt >= digDownSettleTicks {
			return Input{}, true, Result{Note: fmt.Sprintf("dug %d blocks but went only %.1f down: what was dug was not all under the feet (leaves or plants beside them, or the player stood on an edge); stand on solid ground and dig again", dug, y0-s.Pos.Y)}
		}
		if i >= 60*n {
			return Input{}, true, Result{Note: fmt.Sprintf("dug %d of %d blocks in %d ticks, %.1f down", dug, n, i, y0-s.Pos.Y)}
		}
		dx, dy, _, ep := c.turn(s, s.Yaw, 89)
		in := Input{DX: dx / 4, DY: dy, Dig: ep < 10 && dug < n, Frame: i == 15}
		// Stand in the middle of the block, or the hole opens beside the
		// feet and the player never falls in.
		cx, cz := math.Floor(s.Pos.X+0.5), math.Floor(s.Pos.Z+0.5)
		if ox, oz := cx-s.Pos.X, cz-s.Pos.Z; math.Hypot(ox, oz) > 0.12 {
			// Forward is (-sin yaw, cos yaw); right is (cos yaw, sin yaw).
			yr := s.Yaw * math.Pi / 180
			f := -math.Sin(yr)*ox + math.Cos(yr)*oz
			r := math.Cos(yr)*ox + math.Sin(yr)*oz
			in.Forward, in.Back = f > 0.08, f < -0.08
			in.Right, in.Left = r > 0.08, r < -0.08
			in.Sneak = true
			in.Dig = false
		}
		return in, false, Result{}
	})
}

// PillarUp looks straight down and holds jump and place together: the
// game repeats the placement every 0.25 s while the button is held and
// refuses it while the new block would overlap the player, so a block
// lands under the feet near the top of each jump. It stops once n blocks
// are placed and the player has landed on them.
func (c *Controller) PillarUp(n int) (Result, error) {
	placed := 0
	y0 := c.Cur.Pos.Y
	top, topAt := y0, 0
	budget := 16*n + 30
	return c.Run(harness.Call{Kind: "pillar_up", Args: args("n", n), Budget: int64(budget)}, budget, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		for _, e := range s.Events {
			if e.Type == "place" {
				placed++
			}
		}
		if placed >= n && math.Abs(s.Vel.Y) < 0.1 {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("placed %d blocks, %.1f up", placed, s.Pos.Y-y0)}
		}
		if i >= budget {
			return Input{}, true, Result{Note: fmt.Sprintf("placed %d of %d blocks, %.1f up", placed, n, s.Pos.Y-y0)}
		}
		if s.Pos.Y > top+0.3 {
			top, topAt = s.Pos.Y, i
		}
		if i-topAt > 25 && math.Abs(s.Vel.Y) < 0.1 {
			what := "the head hits something"
			if s.Headroom < 1 {
				what = "no headroom"
			}
			return Input{}, true, Result{Note: fmt.Sprintf("stopped rising after %d of %d blocks, %.1f up: %s", placed, n, s.Pos.Y-y0, what)}
		}
		dx, dy, _, ep := c.turn(s, s.Yaw, 89)
		in := Input{DX: dx / 4, DY: dy, Frame: i == 2*n}
		if ep < 10 && placed < n {
			in.Jump, in.Place = true, true
		}
		return in, false, Result{}
	})
}

// Place presses the place button once on the pointed block's face.
func (c *Controller) Place() (Result, error) {
	item := shortName(c.Cur.Wielded)
	return c.Run(harness.Call{Kind: "place", Args: args("item", item)}, 10, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		for _, e := range s.Events {
			if e.Type == "place" {
				return Input{}, true, Result{OK: true, Note: "placed " + shortName(e.Node)}
			}
		}
		if i >= 10 {
			return Input{}, true, Result{Note: "nothing was placed"}
		}
		return Input{Place: i%4 == 0}, false, Result{}
	})
}

// Eat eats the wielded food (left click uses it) and checks the eat event.
func (c *Controller) Eat() (Result, error) {
	item := shortName(c.Cur.Wielded)
	return c.Run(harness.Call{Kind: "eat", Args: args("item", item)}, 15, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		for _, e := range s.Events {
			if e.Type == "eat" {
				return Input{}, true, Result{OK: true, Note: fmt.Sprintf("ate %s, health %g", shortName(e.Item), s.HP)}
			}
		}
		if i >= 15 {
			return Input{}, true, Result{Note: "no eat event"}
		}
		return Input{Dig: i%5 == 0}, false, Result{}
	})
}

// Watch waits n ticks without input, keeping a frame mid-way.
func (c *Controller) Watch(n int) (Result, error) {
	hp0 := c.Cur.HP
	return c.Run(harness.Call{Kind: "watch", Args: args("ticks", n)}, n, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if i >= n {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("time of day %.2f, health %g (was %g)", s.TimeOfDay, s.HP, hp0)}
		}
		return Input{Frame: i == n/2}, false, Result{}
	})
}

// ScanAround turns a full circle in four quarter turns, keeping a frame
// at each, and reports the nearest tree.
func (c *Controller) ScanAround() (Result, error) {
	start := c.Cur.Yaw
	q := 1
	return c.Run(harness.Call{Kind: "scan_around"}, 60, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		target := normYaw(start + 90*float64(q))
		dx, dy, ey, _ := c.turn(s, target, 0)
		fr := false
		if math.Abs(ey) < 3 {
			fr = true
			q++
			if q > 4 {
				note := "no tree within 20 blocks"
				if t, ok := s.NearestTree(); ok {
					note = fmt.Sprintf("nearest tree: %s at %v,%v,%v, %d high", shortName(t.Node), t.Base.X, t.Base.Y, t.Base.Z, t.Height)
				}
				return Input{}, true, Result{OK: true, Note: note}
			}
		}
		if i >= 60 {
			return Input{}, true, Result{Note: "did not finish the circle"}
		}
		return Input{DX: dx, DY: dy, Frame: fr}, false, Result{}
	})
}

// Jump jumps once in place.
func (c *Controller) Jump() (Result, error) {
	y0 := c.Cur.Pos.Y
	top := y0
	return c.Run(harness.Call{Kind: "jump"}, 20, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		top = math.Max(top, s.Pos.Y)
		if i > 3 && math.Abs(s.Vel.Y) < 0.1 {
			return Input{}, true, Result{OK: top-y0 > 0.5, Note: fmt.Sprintf("rose %.1f", top-y0)}
		}
		return Input{Jump: i < 3}, false, Result{}
	})
}

// CollectDrops walks over the nearest dropped item (the state mod picks
// items up within 1.2 blocks, Minecraft-like) until the inventory grows.
// Items for which skip reports true (nil: none) are left alone.
func (c *Controller) CollectDrops(skip func(Item) bool) (Result, error) {
	total := func(s Raw) float64 {
		t := 0.0
		for _, v := range s.Inventory {
			t += v
		}
		return t
	}
	t0 := total(c.Cur)
	what := "nothing"
	if it, ok := nearestItem(c.Cur, skip); ok {
		what = shortName(strings.Fields(it.Item + " ")[0])
	}
	best, bestAt := math.Inf(1), 0
	return c.Run(harness.Call{Kind: "collect_drops", Args: args("item", what)}, 100, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if got := total(s) - t0; got > 0 {
			// Items dropped together are picked up within a few ticks.
			if _, more := nearestItem(s, skip); !more || i > 60 {
				return Input{}, true, Result{OK: true, Note: fmt.Sprintf("picked up %g item(s)", got)}
			}
		}
		it, ok := nearestItem(s, skip)
		if !ok {
			if i == 0 {
				return Input{}, true, Result{Note: "no drops within 8 blocks"}
			}
			return Input{}, true, Result{Note: "the drops vanished"}
		}
		if i >= 100 {
			return Input{}, true, Result{Note: "could not reach the drops"}
		}
		p := it.Pos
		d := math.Hypot(p.X-s.Pos.X, p.Z-s.Pos.Z)
		if d < best-0.2 {
			best, bestAt = d, i
		}
		if i-bestAt > 30 {
			return Input{}, true, Result{Note: fmt.Sprintf("blocked %.1f blocks from the drops", d)}
		}
		yaw := normYaw(math.Atan2(-(p.X-s.Pos.X), p.Z-s.Pos.Z) * 180 / math.Pi)
		dx, dy, ey, _ := c.turn(s, yaw, 30)
		in := Input{DX: dx, DY: dy, Forward: math.Abs(ey) < 40 && d > 0.3, Frame: i == 8}
		in.Jump = in.Forward && i > 3 && math.Hypot(s.Vel.X, s.Vel.Z) < 0.5 && p.Y > s.Pos.Y+0.6
		return in, false, Result{}
	})
}

// nearestItem is the dropped item nearest to the player.
func nearestItem(s Raw, skip func(Item) bool) (Item, bool) {
	var best Item
	bd := math.Inf(1)
	for _, it := range s.Items {
		if skip != nil && skip(it) {
			continue
		}
		if d := math.Hypot(it.Pos.X-s.Pos.X, it.Pos.Z-s.Pos.Z) + math.Abs(it.Pos.Y-s.Pos.Y); d < bd {
			best, bd = it, d
		}
	}
	return best, bd < math.Inf(1)
}

// Elapsed is the time since the controller started.
func (c *Controller) Elapsed() time.Duration { return time.Since(c.Stats.Started) }

// DigOut digs out the solid block the eye is inside (the state's
// entombed): it holds the dig button, aiming at the block, until the eye
// is free. It fails when the eye is not entombed or the block does not
// break in 10 s (too hard for the tool in hand).
func (c *Controller) DigOut() (Result, error) {
	t, ok := c.Cur.EntombedIn()
	return c.Run(harness.Call{Kind: "dig_out", Args: args("block", shortName(t.Node))}, 100, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if !ok {
			return Input{}, true, Result{Note: "not entombed: the eye is free"}
		}
		now, still := s.EntombedIn()
		if !still {
			return Input{}, true, Result{OK: true, Note: "dug out of " + shortName(t.Node)}
		}
		if i >= 100 {
			return Input{}, true, Result{Note: fmt.Sprintf("still inside %s after 10 s (too hard for %s?)", shortName(now.Node), shortName(s.Wielded))}
		}
		// The eye is inside the block: the crosshair points at it in any
		// direction; a level view keeps the next block in reach too.
		dx, dy, _, _ := c.turn(s, s.Yaw, 0)
		return Input{DX: dx / 2, DY: dy / 2, Dig: true, Frame: i == 5}, false, Result{}
	})
}

func round0(f float64) float64 { return math.Floor(f + 0.5) }
