package luanti

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/episodespy"
	"github.com/mfm-project/mfm/view"
)

// requireGame skips a live test under -short or when the game cannot
// start here; under CI=true a game that cannot start fails it.
func requireGame(t *testing.T) {
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
}

// TestLiveSmoke starts the real game, records at least 20 episodes with
// frames, mounts the store and finds them through the mount. Under CI=true
// a game that cannot start fails the test; elsewhere it skips.
func TestLiveSmoke(t *testing.T) {
	requireGame(t)
	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Second)
	defer cancel()
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	st, err := Record(ctx, RecordOptions{Store: storeDir, Episodes: 20, Seed: DefaultSeed, GameDir: filepath.Join(dir, "game"), Nice: 5})
	if err != nil {
		t.Fatalf("record: %v (%s)", err, st)
	}
	t.Logf("recorded: %s", st)
	if st.Episodes < 20 || st.Frames < 20 {
		t.Fatalf("want >= 20 episodes and frames, got %s", st)
	}
	s, err := episodes.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := episodes.Verify(s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("fsck: %v", rep.Issues)
	}
	hit := checkQueryAndView(t, ctx, s)
	if os.Geteuid() != 0 {
		t.Log("not root: skipping the mount part")
		return
	}
	mnt := filepath.Join(dir, "mnt")
	os.MkdirAll(mnt, 0o755)
	mctx, mcancel := context.WithCancel(context.Background())
	defer mcancel()
	v, err := view.New(s, view.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	hooks := mfmfs.Hooks{Viewer: v, Querier: &index.Querier{Searcher: index.Scan{Store: s}}}
	srv, err := mfmfs.Mount(mctx, s, mnt, mfmfs.Options{Hooks: hooks, NoAccessLog: true, PanicHandler: func(p any) { t.Errorf("panic in FUSE handler: %v", p) }})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() { srv.Unmount() })
	f, err := os.Open(filepath.Join(mnt, "index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, withFrame := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := episodes.ParseRow(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		rows++
		if strings.HasPrefix(r.Summary, "[ACTION]") {
			if _, err := os.Stat(filepath.Join(mnt, r.Image)); err == nil {
				withFrame++
			}
		}
	}
	if rows < 20 || withFrame < 19 {
		t.Fatalf("through the mount: %d rows, %d action rows with a frame", rows, withFrame)
	}
	// The same episodes found by a query through the mount, and a view of
	// the first one's frame rendered by the mount.
	b, err := os.ReadFile(filepath.Join(mnt, "q", "tag:broke", "results.jsonl"))
	if err != nil || !bytes.HasPrefix(b, hit.Raw) {
		t.Fatalf("q/tag:broke/results.jsonl: %v; want it to start with %s, got %.200s", err, hit.Raw, b)
	}
	if _, err := os.Readlink(filepath.Join(mnt, "q", "tag:broke", hit.ID)); err != nil {
		t.Errorf("q/tag:broke/%s: %v", hit.ID, err)
	}
	b, err = os.ReadFile(filepath.Join(mnt, strings.TrimSuffix(hit.Image, ".png")+"@crop=64,48,128,96@zoom=2.png"))
	if err != nil {
		t.Fatalf("view through the mount: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != 256 || img.Bounds().Dy() != 192 {
		t.Fatalf("view through the mount: %v %v", err, img.Bounds())
	}
	t.Logf("through the mount: %d rows, q/tag:broke/ starts with %s, a 256x192 view of its frame", rows, hit.ID)
}

// checkQueryAndView finds the recorded episodes that broke a block with the
// paper's query tool (mfmd episodes --tag broke --json) and renders views
// of one of their frames: a crop zoomed back to full size and the
// episode's contact sheet.
func checkQueryAndView(t *testing.T, ctx context.Context, s *episodes.Store) episodes.Row {
	t.Helper()
	var out, errb bytes.Buffer
	if code := episodespy.Main(ctx, []string{"--tag", "broke", "--json"}, episodespy.Env{Store: s.Root, Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("episodes --tag broke: exit %d: %s", code, errb.String())
	}
	var hit episodes.Row
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		r, err := episodes.ParseRow(line)
		if err != nil {
			t.Fatalf("episodes --json line %q: %v", line, err)
		}
		if n == 0 {
			hit = r
		}
		n++
	}
	if n == 0 {
		t.Fatalf("episodes --tag broke found nothing; the agent fells a tree first")
	}
	t.Logf("episodes --tag broke: %d episodes, first %s (%s)", n, hit.ID, hit.Summary)
	v, err := view.New(s, view.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	base := strings.TrimSuffix(hit.Image, ".png")
	for _, c := range []struct {
		rel  string
		w, h int
	}{
		{base + "@crop=64,48,128,96@zoom=2.png", 256, 192},
		{path.Join("episodes", hit.ID, "sheet.png"), 0, 0},
	} {
		b, ok, err := v.View(ctx, c.rel)
		if err != nil || !ok {
			t.Fatalf("view %s: ok=%v err=%v", c.rel, ok, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("view %s: %v", c.rel, err)
		}
		sz := img.Bounds().Size()
		if (c.w > 0 && (sz.X != c.w || sz.Y != c.h)) || sz.X < 64 || sz.Y < 48 {
			t.Fatalf("view %s: %v, want %dx%d", c.rel, sz, c.w, c.h)
		}
		t.Logf("view %s: %dx%d PNG, %d bytes", c.rel, sz.X, sz.Y, len(b))
	}
	return hit
}

// TestLiveTechChain plays the first links of the tech tree for real from a
// start kit of one axe: fell a tree and pick up its wood, craft planks,
// sticks and a wooden pickaxe, each checked against the logged inventory
// (the controller's state lines and the recorded episode's outcome.json).
func TestLiveTechChain(t *testing.T) {
	c, s := liveGame(t, []string{"default:axe_stone"})
	a := &Agent{C: c}
	inv := func(item string) int { return int(c.Cur.Inventory[fullName(item)]) }
	for round := 0; round < 6 && inv("tree") < 1; round++ {
		if _, ok := c.Cur.NearestTree(); !ok {
			t.Fatalf("no tree within 20 blocks of the spawn")
		}
		if err := a.fellTree(); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 8 && inv("tree") < 1 && a.dropsNearby(); k++ {
			if err := a.collect(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if inv("tree") < 1 {
		t.Fatalf("gathered no wood: inventory %v", c.Cur.Inventory)
	}
	t.Logf("gathered %d tree", inv("tree"))
	trees := inv("tree")
	must(t, "craft wood")(c.Craft("wood", 4))
	if inv("wood") != 4 || inv("tree") != trees-1 {
		t.Fatalf("after crafting planks: wood %d, tree %d (want 4, %d)", inv("wood"), inv("tree"), trees-1)
	}
	must(t, "craft stick")(c.Craft("stick", 4))
	if inv("stick") != 4 || inv("wood") != 3 {
		t.Fatalf("after crafting sticks: stick %d, wood %d (want 4, 3)", inv("stick"), inv("wood"))
	}
	must(t, "craft pick_wood")(c.Craft("pick_wood", 1))
	if inv("pick_wood") != 1 || inv("wood") != 0 || inv("stick") != 2 {
		t.Fatalf("after crafting the pickaxe: pick_wood %d, wood %d, stick %d (want 1, 0, 2)", inv("pick_wood"), inv("wood"), inv("stick"))
	}
	// The recorded episode of the last craft logs the same inventory.
	b, err := os.ReadFile(filepath.Join(s.Root, "episodes", c.LastRow.ID, "outcome.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		EndState struct {
			Inventory map[string]int `json:"inventory"`
		} `json:"end_state"`
		Delta map[string]int `json:"inventory_delta"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s outcome.json: %v", c.LastRow.ID, err)
	}
	if inv := out.EndState.Inventory; inv["pick_wood"] != 1 || inv["stick"] != 2 || inv["wood"] != 0 {
		t.Fatalf("%s outcome.json end inventory %v, want pick_wood 1, stick 2, no wood", c.LastRow.ID, inv)
	}
	if d := out.Delta; d["pick_wood"] != 1 || d["stick"] != -2 || d["wood"] != -3 {
		t.Fatalf("%s outcome.json inventory delta %v, want pick_wood +1, stick -2, wood -3", c.LastRow.ID, d)
	}
	if !strings.Contains(c.LastRow.Summary, "craft") {
		t.Errorf("last row summary %q does not name the craft", c.LastRow.Summary)
	}
	t.Logf("%s: %s", c.LastRow.ID, c.LastRow.Summary)
}
