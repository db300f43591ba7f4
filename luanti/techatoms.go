package luanti

import (
	"fmt"
	"math"
	"strings"

	"github.com/jezek/xgb/xproto"

	"github.com/mfm-project/mfm/harness"
)

// fullName gives an item name its mod prefix: "wood" is "default:wood";
// names with a colon are kept.
func fullName(item string) string {
	if item == "" || strings.Contains(item, ":") {
		return item
	}
	return "default:" + item
}

// Craft crafts item until at least n of it were made, through the game's
// own recipe engine: the state mod fills a crafting grid from the
// inventory for one of the item's registered recipes ("group:wood" takes
// any planks), asks minetest.get_craft_result, takes the inputs and gives
// the output. It is a mod craft, not mouse input on the inventory GUI. The
// atom is OK when the logged inventory holds n more of the item; it fails
// with the mod's reason (no recipe, what is missing, no room).
func (c *Controller) Craft(item string, n int) (Result, error) {
	item = fullName(item)
	if n < 1 {
		n = 1
	}
	before := c.Cur.Inventory[item]
	w := &awaitCommand{g: c.G, name: "craft", fields: map[string]any{"item": item, "n": n}}
	return c.Run(harness.Call{Kind: "craft", Args: args("item", shortName(item), "n", n)}, commandWait+10, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if !w.step(i, s) {
			return Input{}, false, Result{}
		}
		if w.err != nil || !w.result.OK {
			return Input{}, true, Result{Note: w.failNote()}
		}
		got := s.Inventory[item] - before
		if got >= float64(n) {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("%s; %s now %g", w.result.Note, shortName(item), s.Inventory[item])}
		}
		if i > w.sentAt+commandWait {
			return Input{}, true, Result{Note: fmt.Sprintf("the game said %q but the inventory holds %g more %s", w.result.Note, got, shortName(item))}
		}
		return Input{}, false, Result{}
	})
}

// Equip puts item in hand: when it is not in the hotbar the state mod
// moves it there (an inventory move, not the GUI), then its number key
// selects it. OK when the logged wielded item is item.
func (c *Controller) Equip(item string) (Result, error) {
	item = fullName(item)
	var w *awaitCommand
	if c.Cur.Inventory[item] > 0 && !inHotbar(c.Cur, item) {
		w = &awaitCommand{g: c.G, name: "hotbar", fields: map[string]any{"item": item}}
	}
	pressedAt := -10
	return c.Run(harness.Call{Kind: "equip", Args: args("item", shortName(item))}, commandWait+20, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if s.Wielded == item {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("holding %s (%g)", shortName(item), s.Inventory[item])}
		}
		if s.Inventory[item] == 0 {
			return Input{}, true, Result{Note: "no " + shortName(item) + " in the inventory"}
		}
		if w != nil && !w.step(i, s) {
			return Input{}, false, Result{}
		}
		if w != nil && (w.err != nil || !w.result.OK) {
			return Input{}, true, Result{Note: w.failNote()}
		}
		if i >= commandWait+15 {
			return Input{}, true, Result{Note: "the hotbar slot did not become the wielded one"}
		}
		slot := hotbarSlot(s, item)
		if slot >= 0 && i-pressedAt >= 4 {
			pressedAt = i
			return Input{Tap: keyDigit(slot)}, false, Result{}
		}
		return Input{}, false, Result{}
	})
}

func keyDigit(slot int) xproto.Keysym { return xproto.Keysym('1' + slot) }

func inHotbar(s Raw, item string) bool { return hotbarSlot(s, item) >= 0 }

func hotbarSlot(s Raw, item string) int {
	for i, h := range s.Hotbar {
		if h == item {
			return i
		}
	}
	return -1
}

// PlaceItem places a block of item (a crafted furnace, a torch, …) on the
// ground in front: it equips the item, looks down at the ground ahead
// (pitch 50) and presses the place button once. OK on the mod's place
// event; it fails when the item is missing, nothing is in reach to place
// on, or the game refused the placement (the spot is taken or overlaps
// the player).
func (c *Controller) PlaceItem(item string) (Result, error) {
	item = fullName(item)
	if c.Cur.Wielded != item {
		if r, err := c.Equip(item); err != nil || !r.OK {
			if err == nil {
				r.Note = "place " + shortName(item) + ": " + r.Note
			}
			return r, err
		}
	}
	pressed := -1
	return c.Run(harness.Call{Kind: "place", Args: args("item", shortName(item))}, 40, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		for _, e := range s.Events {
			if e.Type == "place" && e.Pos != nil {
				return Input{}, true, Result{OK: true, Note: fmt.Sprintf("placed %s at %g,%g,%g", shortName(e.Node), e.Pos.X, e.Pos.Y, e.Pos.Z)}
			}
		}
		if s.Wielded != item {
			return Input{}, true, Result{Note: "not holding " + shortName(item)}
		}
		if pressed >= 0 && i-pressed > 8 {
			return Input{}, true, Result{Note: placeWhy(s, item)}
		}
		if i >= 39 {
			return Input{}, true, Result{Note: "could not aim at the ground ahead"}
		}
		dx, dy, ey, ep := c.turn(s, s.Yaw, 50)
		if pressed < 0 && math.Abs(ep) < 4 && math.Abs(ey) < 4 {
			p := s.PointedAt()
			if p == nil {
				return Input{}, true, Result{Note: placeWhy(s, item)}
			}
			pressed = i
			return Input{Click: 3, Frame: true}, false, Result{}
		}
		return Input{DX: dx, DY: dy}, false, Result{}
	})
}

// placeWhy says why placing item left nothing, from the state: nothing
// in reach (in water the crosshair looks through it), the spot where the
// player stands, a spot in water or lava, or a spot already taken.
func placeWhy(s Raw, item string) string {
	p := s.PointedAt()
	if p == nil {
		if l := s.inLiquid(); l != "" {
			return fmt.Sprintf("nothing in reach to place on: you are in %s, the crosshair looks through it and the ground is out of reach; get onto solid ground first", l)
		}
		return "nothing in reach to place on (within 5 blocks)"
	}
	at := fmt.Sprintf("%v,%v,%v", p.Above.X, p.Above.Y, p.Above.Z)
	feet := Vec{math.Floor(s.Pos.X + 0.5), math.Floor(s.Pos.Y + 0.5), math.Floor(s.Pos.Z + 0.5)}
	switch {
	case isLiquid(p.AboveNode):
		return fmt.Sprintf("nothing was placed on %s: the spot %s is in %s (a %s is washed away there; place it on dry ground)", shortName(p.Node), at, liquidName(p.AboveNode), shortName(item))
	case p.AboveNode != "" && p.AboveNode != "air":
		return fmt.Sprintf("nothing was placed on %s: the spot %s is taken by %s", shortName(p.Node), at, shortName(p.AboveNode))
	case p.Above.X == feet.X && p.Above.Z == feet.Z && (p.Above.Y == feet.Y || p.Above.Y == feet.Y+1):
		return fmt.Sprintf("nothing was placed on %s: the spot %s is where you stand (the block would overlap you); step back a block or look further ahead", shortName(p.Node), at)
	}
	return fmt.Sprintf("nothing was placed on %s at %s (the block would overlap the player, or the game refused it: a torch needs a solid block to stand on or hang from)", shortName(p.Node), at)
}

// Smelt smelts n of item with fuel in the furnace in the crosshair: the
// state mod moves the ore and fuel_n fuel from the inventory into the
// furnace's node inventory (its src and fuel lists, as the furnace GUI
// would) and starts the furnace; the atom waits, watching the furnace's
// output in the logged state, until n items are made, then takes the
// output. OK when the logged inventory holds the n products; it fails with
// why (no furnace in the crosshair, not smeltable, not a fuel, missing
// items, the fire went out before n were made).
func (c *Controller) Smelt(item, fuel string, n, fuelN int) (Result, error) {
	item, fuel = fullName(item), fullName(fuel)
	n, fuelN = max(n, 1), max(fuelN, 1)
	f0, ok := c.Cur.FurnaceAhead()
	load := &awaitCommand{g: c.G, name: "furnace_load", fields: map[string]any{"pos": f0.Pos, "item": item, "n": n, "fuel": fuel, "fuel_n": fuelN}}
	var take *awaitCommand
	output := ""
	budget := 100 + 40*n
	before := map[string]float64{}
	for k, v := range c.Cur.Inventory {
		before[k] = v
	}
	idle := 0
	call := harness.Call{Kind: "smelt", Args: args("item", shortName(item), "fuel", shortName(fuel), "n", n), Budget: int64(budget)}
	return c.Run(call, budget, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if !ok {
			what := "nothing"
			if p := s.PointedAt(); p != nil {
				what = shortName(p.Node)
			}
			return Input{}, true, Result{Note: "no furnace in the crosshair (pointing at " + what + "): place one and look at it"}
		}
		if !load.step(i, s) {
			return Input{}, false, Result{}
		}
		if load.err != nil || !load.result.OK {
			return Input{}, true, Result{Note: load.failNote()}
		}
		if output == "" {
			m, _ := load.result.Data.(map[string]any)
			output = str(m["output"])
		}
		if take == nil {
			f, still := s.FurnaceAhead()
			if !still {
				return Input{}, true, Result{Note: "lost sight of the furnace while it smelted"}
			}
			made := f.Dst[output]
			if made >= float64(n) || (len(f.Src) == 0 && made > 0) {
				take = &awaitCommand{g: c.G, name: "furnace_take", fields: map[string]any{"pos": f0.Pos}}
			} else {
				if !f.Active {
					idle++
				} else {
					idle = 0
				}
				if idle > 40 {
					return Input{}, true, Result{Note: fmt.Sprintf("the furnace went out with %g of %d %s made (more fuel?)", made, n, shortName(output))}
				}
				if i >= budget-10 {
					return Input{}, true, Result{Note: fmt.Sprintf("%g of %d %s made in %d s", made, n, shortName(output), budget/10)}
				}
				return Input{Frame: i == 30}, false, Result{}
			}
		}
		if !take.step(i, s) {
			return Input{}, false, Result{}
		}
		if take.err != nil || !take.result.OK {
			return Input{}, true, Result{Note: take.failNote()}
		}
		if got := s.Inventory[output] - before[output]; got >= float64(n) {
			return Input{}, true, Result{OK: true, Note: fmt.Sprintf("smelted %d %s into %s; %s", n, shortName(item), shortName(output), take.result.Note)}
		}
		if i-take.sentAt > 10 { // the inventory shows the take within a tick or two
			got := s.Inventory[output] - before[output]
			return Input{}, true, Result{Note: fmt.Sprintf("the furnace ran out of %s: %s, %g of %d in the inventory", shortName(item), take.result.Note, got, n)}
		}
		return Input{}, false, Result{}
	})
}

// OpenInventory presses the inventory key (I) and keeps frames of the GUI.
// It checks the GUI is open by moving the mouse: with a GUI open the
// cursor moves and the view does not turn. The state's GUIOpen is true
// until CloseInventory (or the next atom that needs the view, which
// closes it first).
func (c *Controller) OpenInventory() (Result, error) {
	var yaw0 float64
	return c.Run(harness.Call{Kind: "open_inventory"}, 20, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		switch {
		case c.GUI != "":
			return Input{}, true, Result{Note: "the " + c.GUI + " is already open"}
		case i == 0:
			return Input{Tap: KeyI}, false, Result{}
		case i < 4:
			return Input{Frame: i == 3}, false, Result{}
		case i == 4:
			yaw0 = s.Yaw
			return Input{DX: 80}, false, Result{}
		case i < 7:
			return Input{}, false, Result{}
		}
		if d := math.Abs(angleDiff(yaw0, s.Yaw)); d > 2 {
			return Input{}, true, Result{Note: fmt.Sprintf("no GUI opened: the mouse still turns the view (%.0f degrees)", d)}
		}
		c.GUI = "inventory"
		return Input{}, true, Result{OK: true, Note: "the inventory is open"}
	})
}

// CloseInventory presses Escape to close the open GUI and checks the
// mouse turns the view again. It fails without pressing anything when no
// GUI is open (Escape would open the pause menu).
func (c *Controller) CloseInventory() (Result, error) {
	var yaw0 float64
	return c.Run(harness.Call{Kind: "close_inventory"}, 20, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		switch {
		case c.GUI == "" && i == 0:
			return Input{}, true, Result{Note: "no GUI is open"}
		case i == 0:
			return Input{Tap: KeyEscape}, false, Result{}
		case i < 3:
			return Input{}, false, Result{}
		case i == 3:
			yaw0 = s.Yaw
			return Input{DX: 40}, false, Result{}
		case i < 6:
			return Input{}, false, Result{}
		}
		d := math.Abs(angleDiff(yaw0, s.Yaw))
		if d < 2 {
			return Input{}, true, Result{Note: "the GUI stayed open: the mouse does not turn the view"}
		}
		c.GUI = ""
		return Input{DX: -40}, true, Result{OK: true, Note: "closed the inventory"}
	})
}

// Attack punches the entity in the crosshair n times (the dig button held
// for two ticks once a second: a full punch; a slow tick may land two), checking its hp in the logged
// state. OK when its hp dropped or it died; it fails when no entity is in
// reach in the crosshair or the punches did no harm.
func (c *Controller) Attack(n int) (Result, error) {
	n = max(n, 1)
	o0, ok := c.Cur.PointedObject()
	target := "nothing"
	if ok {
		target = o0.Name
	}
	hits, last := 0, o0.HP
	return c.Run(harness.Call{Kind: "attack", Args: args("target", target, "n", n)}, 10*n+10, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if !ok {
			what := "no block"
			if p := s.PointedAt(); p != nil {
				what = shortName(p.Node)
			}
			return Input{}, true, Result{Note: "no entity in reach in the crosshair (pointing at " + what + ")"}
		}
		for _, e := range s.Events {
			if e.Type == "kill" {
				return Input{}, true, Result{OK: true, Note: fmt.Sprintf("killed %s with %d hits", o0.Name, hits)}
			}
		}
		o, still := s.PointedObject()
		if still {
			last = o.HP
		}
		if hits >= n && i%10 >= 5 || !still {
			if last < o0.HP {
				gone := ""
				if !still {
					gone = ", then it left the crosshair"
				}
				return Input{}, true, Result{OK: true, Note: fmt.Sprintf("hit %s %d times: hp %g -> %g%s", o0.Name, hits, o0.HP, last, gone)}
			}
			if !still {
				return Input{}, true, Result{Note: fmt.Sprintf("%s left the crosshair after %d hits, unharmed", o0.Name, hits)}
			}
			return Input{}, true, Result{Note: fmt.Sprintf("hit %s %d times but its hp stayed %g", o.Name, hits, o.HP)}
		}
		if i%10 == 0 && hits < n {
			hits++
		}
		if i%10 < 2 && hits <= n && i < 10*n {
			// Held for two ticks, not clicked: the game deals punch
			// damage only while the button is down at a frame.
			return Input{Dig: true, Frame: i == 0}, false, Result{}
		}
		return Input{}, false, Result{}
	})
}

// Use uses the held item once on what the crosshair points at: a left
// press (held up to half a second) for items with a use action (food, hoes, buckets: the state's
// wielded_use is "use"), else a right click (place, open, activate). OK
// when something changed in the logged state (an event, the inventory, or
// the pointed block); it fails with "nothing changed".
func (c *Controller) Use() (Result, error) {
	item := shortName(c.Cur.Wielded)
	left := c.Cur.WieldedUse == "use"
	before := c.Cur
	var changes []string
	nodeChange := ""
	return c.Run(harness.Call{Kind: "use", Args: args("item", item)}, 15, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		for _, e := range s.Events {
			if l := c.eventLine(e); l != "" {
				changes = append(changes, l)
			}
		}
		// The pointed block's first change is kept as it happened (the
		// game may change it again: dry soil turns back to dirt).
		if p0, p := before.PointedAt(), s.PointedAt(); nodeChange == "" && p0 != nil && p != nil && p0.Under == p.Under && p0.Node != p.Node {
			nodeChange = fmt.Sprintf("%s became %s", shortName(p0.Node), shortName(p.Node))
			changes = append(changes, nodeChange)
		}
		if i >= 12 || (i >= 6 && len(changes) > 0) {
			for k, v := range s.Inventory {
				if d := v - before.Inventory[k]; d != 0 {
					changes = append(changes, fmt.Sprintf("%s %+g", shortName(k), d))
				}
			}
			for k, v := range before.Inventory {
				if _, ok := s.Inventory[k]; !ok {
					changes = append(changes, fmt.Sprintf("%s %+g", shortName(k), -v))
				}
			}
			on := "nothing in reach"
			if p := before.PointedAt(); p != nil {
				on = shortName(p.Node)
			}
			if len(changes) == 0 {
				return Input{}, true, Result{Note: "used " + item + " on " + on + ": nothing changed"}
			}
			return Input{}, true, Result{OK: true, Note: "used " + item + " on " + on + ": " + strings.Join(changes, ", ")}
		}
		// A left use needs the button down while the game draws a frame,
		// which can take longer than a tick on a busy machine: it is held
		// for half a second (an on_use runs once per press). A right click
		// is a click, so it cannot repeat.
		if left && i < 5 && len(changes) == 0 {
			return Input{Dig: true, Frame: i == 0}, false, Result{}
		}
		if !left && i == 0 {
			return Input{Click: 3, Frame: true}, false, Result{}
		}
		return Input{}, false, Result{}
	})
}
