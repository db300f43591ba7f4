package luanti

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// liveGame starts the real game with a start kit and returns a controller
// recording into a fresh store. Under CI=true a game that cannot start
// fails the test; elsewhere it skips.
func liveGame(t *testing.T, kit []string) (*Controller, *episodes.Store) {
	t.Helper()
	requireGame(t)
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Second)
	t.Cleanup(cancel)
	dir := t.TempDir()
	g, err := Start(ctx, Config{Dir: filepath.Join(dir, "game"), StartKit: kit, Nice: 5})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(g.Stop)
	s, err := episodes.Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := harness.NewRecorder(s, harness.Options{Frames: true, Task: "live atom test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c, err := NewController(g, r)
	if err != nil {
		t.Fatal(err)
	}
	c.Ctx = ctx
	if err := c.Calibrate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Initial(); err != nil {
		t.Fatal(err)
	}
	return c, s
}

// must fails the test when an atom errs or reports failure:
// must(t, "what")(c.Atom(...)).
func must(t *testing.T, what string) func(Result, error) Result {
	return func(r Result, err error) Result {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !r.OK {
			t.Fatalf("%s failed: %s", what, r.Note)
		}
		t.Logf("%s: %s", what, r.Note)
		return r
	}
}

// TestLiveSpawnAndEntombed checks the spawn (firm ground under open sky)
// and that a head inside a block is reported in the state and dug out.
func TestLiveSpawnAndEntombed(t *testing.T) {
	c, _ := liveGame(t, []string{"default:pick_stone", "default:axe_stone"})
	s := c.Cur
	t.Logf("spawn: %s; below %s, headroom %g", s.Spawn, s.Below, s.Headroom)
	if s.Headroom < 16 {
		t.Errorf("spawned with %g free blocks overhead, want open sky (16)", s.Headroom)
	}
	if _, ok := s.EntombedIn(); ok {
		t.Fatalf("entombed at spawn: %v", s.Entombed)
	}
	must(t, "select pick")(c.Select("default:pick_stone"))
	// Bury the head: a dirt block where the eye is.
	eye := Vec{X: round0(s.Pos.X), Y: round0(s.Pos.Y + EyeHeight), Z: round0(s.Pos.Z)}
	must(t, "setnode")(c.Command("setnode", map[string]any{"pos": map[string]float64{"x": eye.X, "y": eye.Y, "z": eye.Z}, "node": "default:dirt"}))
	tomb, ok := c.Cur.EntombedIn()
	if !ok || tomb.Node != "default:dirt" {
		t.Fatalf("after burying the head: entombed = %v", c.Cur.Entombed)
	}
	if got := c.State(c.Cur).Extra["entombed"]; got != "dirt" {
		t.Fatalf("harness state entombed = %v, want dirt", got)
	}
	must(t, "dig_out")(c.DigOut())
	if _, ok := c.Cur.EntombedIn(); ok {
		t.Fatalf("still entombed after dig_out: %v", c.Cur.Entombed)
	}
	// The scripted player digs itself out before anything else.
	eye = Vec{X: round0(c.Cur.Pos.X), Y: round0(c.Cur.Pos.Y + EyeHeight), Z: round0(c.Cur.Pos.Z)}
	must(t, "setnode")(c.Command("setnode", map[string]any{"pos": eye, "node": "default:stone"}))
	if _, ok := c.Cur.EntombedIn(); !ok {
		t.Fatalf("stone at the eye is not reported as entombed: %v", c.Cur.Entombed)
	}
	a := &Agent{C: c}
	if err := a.Play(context.Background(), c.Stats.Episodes+1); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Cur.EntombedIn(); ok || !strings.Contains(c.LastRow.Summary, "dig_out") {
		t.Fatalf("the scripted player's next episode %q left it entombed: %v", c.LastRow.Summary, c.Cur.Entombed)
	}
	t.Logf("scripted player: %s", c.LastRow.Summary)
	if got := c.State(c.Cur).Extra["entombed"]; got != "" {
		t.Fatalf("harness state entombed = %v after dig_out, want empty", got)
	}
}

// TestLiveFallInOneEpisode walks off a 13-block dirt tower: the episode of
// the go_to that steps off ends after landing and holds the fall damage.
func TestLiveFallInOneEpisode(t *testing.T) {
	c, _ := liveGame(t, []string{"default:dirt 20"})
	must(t, "select dirt")(c.Select("default:dirt"))
	must(t, "pillar_up 13")(c.PillarUp(13))
	top := c.Cur.Pos.Y
	// Step off where nothing is within reach below (no canopy beside the
	// tower to land on).
	clear := false
	for k := 0; k < 8 && !clear; k++ {
		must(t, "look down")(c.LookAbs(float64(45*k), 50))
		clear = c.Cur.PointedAt() == nil
	}
	if !clear {
		t.Fatalf("leaves or ground within reach below the tower in every direction")
	}
	must(t, "look level")(c.LookAbs(c.Cur.Yaw, 20))
	yaw := c.Cur.Yaw * math.Pi / 180
	r, err := c.GoTo(c.Cur.Pos.X-2.5*math.Sin(yaw), c.Cur.Pos.Z+2.5*math.Cos(yaw), 0.7)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("go_to off the tower: ok=%v %s; events %v", r.OK, r.Note, c.LastEvents)
	if airborne(c.Cur) {
		t.Fatalf("the episode ended in the air: velocity %v", c.Cur.Vel)
	}
	if drop := top - c.Cur.Pos.Y; drop < 5 {
		t.Fatalf("the episode ended %.1f below the top, want a landing well below it", drop)
	}
	hurt := false
	for _, e := range c.LastEvents {
		hurt = hurt || strings.HasPrefix(e, "hurt fall")
	}
	if !hurt || !strings.Contains(r.Note, "hurt") {
		t.Fatalf("no fall damage in the episode that fell: events %v, note %q", c.LastEvents, r.Note)
	}
}

// TestLiveTechAtoms plays the tech-tree atoms for real from a start kit:
// the inventory GUI, a furnace crafted, placed and used to smelt iron, a
// dummy attacked, a hoe used on the ground; and a craft without inputs
// fails with what is missing.
func TestLiveTechAtoms(t *testing.T) {
	c, _ := liveGame(t, []string{"default:cobble 8", "default:iron_lump 2", "default:coal_lump 2", "farming:hoe_stone", "default:apple 2"})
	inv := func(item string) float64 { return c.Cur.Inventory[fullName(item)] }

	must(t, "open_inventory")(c.OpenInventory())
	if st := c.State(c.Cur); !st.GUIOpen {
		t.Fatalf("state after open_inventory: GUIOpen false")
	}
	must(t, "close_inventory")(c.CloseInventory())
	if r, err := c.CloseInventory(); err != nil || r.OK {
		t.Fatalf("close_inventory with no GUI open: ok=%v err=%v, want a failure", r.OK, err)
	}

	r, err := c.Craft("pick_wood", 1)
	if err != nil || r.OK || !strings.Contains(r.Note, "missing") {
		t.Fatalf("craft pick_wood from nothing: ok=%v note=%q err=%v, want a failure naming what is missing", r.OK, r.Note, err)
	}
	t.Logf("craft pick_wood from nothing fails: %s", r.Note)

	must(t, "craft furnace")(c.Craft("furnace", 1))
	if inv("furnace") != 1 || inv("cobble") != 0 {
		t.Fatalf("after crafting a furnace: furnace %g, cobble %g (want 1, 0)", inv("furnace"), inv("cobble"))
	}
	must(t, "place furnace")(c.PlaceItem("furnace"))
	if inv("furnace") != 0 {
		t.Fatalf("the furnace is still in the inventory after placing it")
	}
	if _, ok := c.Cur.FurnaceAhead(); !ok {
		must(t, "look at the furnace")(c.LookAbs(c.Cur.Yaw, 40))
	}
	must(t, "smelt")(c.Smelt("iron_lump", "coal_lump", 1, 1))
	if inv("steel_ingot") != 1 || inv("iron_lump") != 1 || inv("coal_lump") != 1 {
		t.Fatalf("after smelting: steel_ingot %g, iron_lump %g, coal_lump %g (want 1, 1, 1)", inv("steel_ingot"), inv("iron_lump"), inv("coal_lump"))
	}

	// Turn away from the furnace, put a dummy ahead and punch it.
	must(t, "turn around")(c.LookAbs(c.Cur.Yaw+180, 15))
	must(t, "spawn_dummy")(c.Command("spawn_dummy", nil))
	m, _ := c.LastData.(map[string]any)
	feet := vec(m["pos"])
	yaw, pitch := angleTo(c.Cur, Vec{feet.X, feet.Y + 1, feet.Z})
	must(t, "look at the dummy")(c.LookAbs(yaw, pitch))
	if o, ok := c.Cur.PointedObject(); !ok || o.Name != "mfm_state:dummy" {
		t.Fatalf("the dummy at %v is not in the crosshair: %v", feet, c.Cur.PointedObj)
	}
	must(t, "attack")(c.Attack(3))
	if o, ok := c.Cur.PointedObject(); ok && o.HP >= 10 {
		t.Fatalf("the dummy still has %g hp after the attack", o.HP)
	}

	// Use an apple: eaten (its on_use), one fewer in the inventory.
	must(t, "equip apple")(c.Equip("apple"))
	r = must(t, "use apple")(c.Use())
	if inv("apple") != 1 || !strings.Contains(r.Note, "eat apple") {
		t.Fatalf("use apple: %q, %g apples left, want it eaten", r.Note, inv("apple"))
	}
	// Till the ground with the hoe (left click: its on_use).
	must(t, "equip hoe")(c.Equip("farming:hoe_stone"))
	must(t, "look at the ground")(c.LookAbs(c.Cur.Yaw+90, 60))
	if p := c.Cur.PointedAt(); p != nil && p.Soft {
		must(t, "cut the plant")(c.MineAhead())
	}
	p := c.Cur.PointedAt()
	if p == nil {
		t.Fatalf("no ground in reach")
	}
	// The hoe tills only under air: clear a plant the ray passed by.
	must(t, "clear above")(c.Command("setnode", map[string]any{"pos": p.Above, "node": "air"}))
	r = must(t, "use hoe")(c.Use())
	if !strings.Contains(r.Note, "soil") {
		t.Fatalf("use hoe: %q, want the ground tilled to soil", r.Note)
	}
}

// TestLiveGraphExport exports minetest_game's task-state graph from the
// running game and checks it against the committed export
// (testdata/minetest_game_graph.json; MFM_WRITE_GRAPH=1 rewrites it).
func TestLiveGraphExport(t *testing.T) {
	requireGame(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	g, err := Start(ctx, Config{Dir: filepath.Join(t.TempDir(), "game"), ExportGraph: true, Nice: 5})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer g.Stop()
	live, err := g.Graph()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exported %d items, %d recipes", len(live.Items), len(live.Recipes))
	const committed = "testdata/minetest_game_graph.json"
	if os.Getenv("MFM_WRITE_GRAPH") == "1" {
		b, err := os.ReadFile(filepath.Join(g.cfg.Dir, "world", GraphFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(committed, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := LoadGraph(committed)
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Items) != len(want.Items) || len(live.Recipes) != len(want.Recipes) {
		t.Fatalf("live export: %d items, %d recipes; committed: %d, %d", len(live.Items), len(live.Recipes), len(want.Items), len(want.Recipes))
	}
	checkGraphFacts(t, live)
}
