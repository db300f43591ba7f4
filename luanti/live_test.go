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
	if testing.Short() {
		t.Skip("live game: not in -short")
	}
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: the live harness must run: %v", err)
		}
		t.Skip(err)
	}
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
	c, _ := liveGame(t, []string{"default:pick_stone"})
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
