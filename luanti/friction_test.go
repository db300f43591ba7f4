package luanti

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveFriction plays, in one game, what an LLM player ran into: a
// walk that stalls says what is in the way; water ahead and a cave under
// the floor are in the state's hazard; scan_around keeps a frame at each
// quarter; dig_down on a plant at the feet ends 20 ticks after the dig
// when the player did not go down, and says why; a worn pickaxe that
// breaks during dig_down stops the atom at once, saying so.
func TestLiveFriction(t *testing.T) {
	c, store := liveGame(t, []string{"default:pick_stone", "default:pick_wood 1 65000"})
	set := func(p Vec, node string) {
		t.Helper()
		must(t, "setnode "+node)(c.Command("setnode", map[string]any{"pos": p, "node": node}))
	}
	feet := func() Vec { return Vec{round0(c.Cur.Pos.X), round0(c.Cur.Pos.Y), round0(c.Cur.Pos.Z)} }
	steps := func(run func() (Result, error)) (Result, int64) {
		t.Helper()
		s0 := c.Step
		r, err := run()
		if err != nil {
			t.Fatal(err)
		}
		return r, c.Step - s0
	}

	// scan_around: four frames, one per quarter turn
	must(t, "scan_around")(c.ScanAround())
	life, err := store.CurrentLife()
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := filepath.Glob(filepath.Join(life.EpisodeDir(c.LastRow.ID), "frames", "*.png"))
	if len(frames) < 4 {
		t.Errorf("scan_around kept %d frames, want 4 (one per quarter)", len(frames))
	}

	// a wall ahead (+z): go_to says what blocks it
	must(t, "face +z")(c.LookAbs(0, 0))
	f := feet()
	for dx := -1.0; dx <= 1; dx++ {
		set(Vec{f.X + dx, f.Y, f.Z + 1}, "default:stone")
		set(Vec{f.X + dx, f.Y + 1, f.Z + 1}, "default:stone")
	}
	r, _ := steps(func() (Result, error) { return c.GoTo(f.X, f.Z+5, 0.5) })
	t.Logf("go_to into a wall: ok=%v %q", r.OK, r.Note)
	if r.OK || !strings.Contains(r.Note, "in the way: stone at feet level and stone at head level") {
		t.Errorf("go_to into a wall: ok=%v %q, want the wall named", r.OK, r.Note)
	}

	// water two blocks ahead (-z): a hazard ahead
	must(t, "face -z")(c.LookAbs(180, 0))
	f = feet()
	set(Vec{f.X, f.Y, f.Z - 2}, "default:water_source")
	h, _ := c.State(c.Cur).Extra["hazard"].(string)
	t.Logf("water two blocks ahead: hazard %q", h)
	if !strings.Contains(h, "water ahead") {
		t.Errorf("water two blocks ahead: hazard %q", h)
	}
	set(Vec{f.X, f.Y, f.Z - 2}, "air")

	// a cave under two blocks of floor
	set(Vec{f.X, f.Y - 1, f.Z}, "default:stone")
	set(Vec{f.X, f.Y - 2, f.Z}, "default:stone")
	set(Vec{f.X, f.Y - 3, f.Z}, "air")
	h, _ = c.State(c.Cur).Extra["hazard"].(string)
	t.Logf("a cave under the floor: hazard %q", h)
	if !strings.Contains(h, "open space (a cave) under 2 block(s) of floor") {
		t.Errorf("air under two blocks of floor: hazard %q", h)
	}
	set(Vec{f.X, f.Y - 3, f.Z}, "default:stone")

	// dig_down on a plant at the feet: the plant is cleared and not
	// counted; the one block under the feet is dug (four LLM players lost
	// a turn to a dig_down that counted the grass as a block)
	must(t, "equip pick_stone")(c.Equip("pick_stone"))
	set(f, "default:grass_1")
	y0 := c.Cur.Pos.Y
	r, n := steps(func() (Result, error) { return c.DigDown(1) })
	t.Logf("dig_down on a plant: ok=%v %q in %d steps", r.OK, r.Note, n)
	if !r.OK || !strings.Contains(r.Note, "cleared grass_1 at the feet first") || y0-c.Cur.Pos.Y < 0.5 || n > 60 {
		t.Errorf("dig_down 1 on a plant at the feet: ok=%v %q in %d steps, %.1f down; want the plant cleared and one block dug", r.OK, r.Note, n, y0-c.Cur.Pos.Y)
	}

	// a worn wooden pickaxe breaks on the first stone: dig_down stops
	must(t, "equip pick_wood")(c.Equip("pick_wood"))
	r, n = steps(func() (Result, error) { return c.DigDown(3) })
	t.Logf("dig_down with a worn pickaxe: ok=%v %q in %d steps", r.OK, r.Note, n)
	if r.OK || !strings.Contains(r.Note, "pick_wood in the hand broke") || n > 60 {
		t.Errorf("dig_down with a pickaxe that breaks: ok=%v %q in %d steps; want it to stop and say the pickaxe broke", r.OK, r.Note, n)
	}
	if c.Cur.Inventory["default:pick_wood"] != 0 {
		t.Errorf("the worn pickaxe did not break: %v", c.Cur.Inventory)
	}
}
