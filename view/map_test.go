package view

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// handGrid is a small grid with one cell of every kind around 1,0.
const handGrid = `{"cell": [0, 0, 0], "kind": "walked", "step": 1}
{"cell": [1, 0, 0], "kind": "walked", "step": 2}
{"cell": [2, 0, 0], "kind": "blocked", "step": 3}
{"cell": [0, 0, 1], "kind": "placed", "item": "dirt", "step": 4}
{"cell": [1, 0, 1], "kind": "opened", "step": 5}
{"cell": [2, 0, 1], "kind": "hazard", "amount": 2.0, "step": 6}
{"cell": [0, 0, -1], "kind": "water", "step": 7}
{"cell": [1, 0, -1], "kind": "lava", "step": 8}
{"cell": [0, 3, 2], "kind": "walked", "step": 9}
{"cell": [0, 0, 2], "kind": "hazard", "step": 10}
{"cell": [3, 9, -2], "kind": "blocked", "step": 11}
{"cell": [9, 0, 9], "kind": "walked", "step": 12}
not json
{"cell": [1, 0], "kind": "walked", "step": 13}
`

const handIndex = `{"id": "ep_000001", "x": 0.5, "y": 0.0, "z": 0.5, "first_step": 0, "last_step": 2}
{"id": "ep_000002", "x": 1.2, "y": 0.0, "z": -0.7, "first_step": 3, "last_step": 8}
{"id": "ep_000003", "x": 1.9, "y": 0.0, "z": 0.1, "first_step": 9, "last_step": 12}
`

// handViewer is a Viewer over a store holding only handGrid and handIndex.
func handViewer(t *testing.T) (*Viewer, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{"grid.jsonl": handGrid, "index.jsonl": handIndex} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(s, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, dir
}

func golden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	return want
}

func TestMapTextGolden(t *testing.T) {
	v, _ := handViewer(t)
	for _, c := range []struct{ view, golden string }{
		{"map/at=1,0@r=2.txt", "map/at=1,0@r=2.txt"},
		{"map/at=1,0@r=2@y=0..0@north=+z.txt", "map/at=1,0@r=2@y=0..0@north=+z.txt"},
		{"map/here@r=1.txt", "map/here@r=1.txt"},
	} {
		got, ok, err := v.View(context.Background(), c.view)
		if !ok || err != nil {
			t.Fatalf("%s: ok=%v err=%v", c.view, ok, err)
		}
		if want := golden(t, c.golden, got); !bytes.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant (testdata/%s):\n%s", c.view, got, c.golden, want)
		}
	}
}

// TestMapTextCells checks the characters at known cells, independent of
// the golden file.
func TestMapTextCells(t *testing.T) {
	v, _ := handViewer(t)
	b, _, err := v.View(context.Background(), "map/at=1,0@r=2.txt")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // "z=N" -> the cells between the borders
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "z=") {
			z, cells, _ := strings.Cut(l, " |")
			rows[strings.TrimSpace(z)] = strings.TrimSuffix(cells, "|")
		}
	}
	// Columns are x=-1..3; rows z=-2..2 (north=-z: z grows downwards).
	want := map[string]string{
		"z=-2": "    #", // y=9 blocked at 3,-2
		"z=-1": " ~?  ", // water; lava (an unknown kind) outranks ep_000002's mark
		"z=0":  " *@# ",
		"z=1":  " +o! ",
		"z=2":  " !   ",
	}
	for z, w := range want {
		if rows[z] != w {
			t.Errorf("row %s = %q, want %q\n%s", z, rows[z], w, b)
		}
	}
	// The walked cell at 0,3,2 is under the hazard at 0,0,2: three columns hold walked, two show it.
	if !strings.Contains(string(b), "): walked 3 (2 shown) placed 1 opened 1 blocked 2 hazard 2 water 1 lava 1\n") {
		t.Errorf("counts line wrong:\n%s", b)
	}
	if !strings.Contains(string(b), "x=0 z=0: ep_000001") || !strings.Contains(string(b), "x=1 z=0: ep_000003") {
		t.Errorf("episode list wrong:\n%s", b)
	}
}

func TestMapImagePixels(t *testing.T) {
	v, _ := handViewer(t)
	b, _, err := v.View(context.Background(), "map/at=1,0@r=2.png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.buildMap(Spec{Kind: MapView, Map: MapOps{X: 1, Z: 0, R: 2}})
	if err != nil {
		t.Fatal(err)
	}
	ml, mt := m.origin()
	const cell = DefaultMapCell
	// at returns the colour one pixel in from the cell's top-left corner
	// (clear of the grid lines and of the episode dot in the middle).
	at := func(x, z, dx, dy int) color.NRGBA {
		c, j := x+1, z+2
		return color.NRGBAModel.Convert(img.At(ml+c*cell+dx, mt+j*cell+dy)).(color.NRGBA)
	}
	kind := func(name string) color.NRGBA { return kindOf(kindIndex(name)).col }
	for _, c := range []struct {
		x, z int
		want color.NRGBA
	}{
		{0, 0, kind("walked")}, {2, 0, kind("blocked")}, {0, 1, kind("placed")}, {1, 1, kind("opened")},
		{2, 1, kind("hazard")}, {0, -1, kind("water")}, {1, -1, otherKind.col}, {0, 2, kind("hazard")},
		{3, -2, kind("blocked")}, {-1, -2, colMapBG}, {3, 2, colMapBG},
	} {
		if got := at(c.x, c.z, 2, 2); got != c.want {
			t.Errorf("cell %d,%d: %v, want %v", c.x, c.z, got, c.want)
		}
	}
	// Episode dots in the middle of their cells; the centre outlined.
	if got := at(0, 0, cell/2, cell/2); got != colMapEp {
		t.Errorf("episode dot at 0,0: %v", got)
	}
	if got := at(1, 0, -1, cell/2); got != colMapCentre {
		t.Errorf("centre outline at 1,0: %v", got)
	}
	// The y band drops the y=9 blocked cell and the y=3 walked one.
	b2, _, _ := v.View(context.Background(), "map/at=1,0@r=2@y=0..0.png")
	img2, _ := png.Decode(bytes.NewReader(b2))
	if got := color.NRGBAModel.Convert(img2.At(ml+4*cell+2, mt+0*cell+2)); got != colMapBG {
		t.Errorf("y band: 3,-2 is %v, want background", got)
	}
	// Golden: the whole image, pixel for pixel.
	want := golden(t, "map/at=1,0@r=2.png", b)
	wimg, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if d := pixelDiff(img, wimg); d != "" {
		t.Errorf("map/at=1,0@r=2.png differs from testdata: %s", d)
	}
}

func TestMapNorthPlusZ(t *testing.T) {
	v, _ := handViewer(t)
	m, err := v.buildMap(Spec{Kind: MapView, Map: MapOps{X: 1, Z: 0, R: 2, NorthPlusZ: true}})
	if err != nil {
		t.Fatal(err)
	}
	// North (+z) up: the top row is z=2, where the hazard at 0,2 is.
	if got := m.kinds[0*m.n+1]; kindOf(got).name != "hazard" {
		t.Errorf("top row, x=0: %q, want hazard", kindOf(got).name)
	}
}

func TestMapErrors(t *testing.T) {
	v, dir := handViewer(t)
	ctx := context.Background()
	for _, c := range []struct{ view, want string }{
		{"map/at=1,0@r=300.png", "r=300: at most 256"},
		{"map/at=1,0@r=200@cell=64.png", "larger than allowed"},
		{"map/at=1,0@cell=4.txt", "a .txt map has one character per block"},
		{"map/at=1,0@r=16.png", `write it as "map/at=1,0.png"`},
		{"map/here@north=up.png", "want north=+z"},
	} {
		_, ok, err := v.View(ctx, c.view)
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ok=%v err=%v, want %q", c.view, ok, err, c.want)
		}
	}
	// No position anywhere: here is an error saying what to use instead.
	os.Remove(filepath.Join(dir, "index.jsonl"))
	if _, _, err := v.View(ctx, "map/here.txt"); err == nil || !strings.Contains(err.Error(), "use map/at=X,Z.png") {
		t.Errorf("here without a position: %v", err)
	}
	// now/state.json, when present, is the current position.
	os.MkdirAll(filepath.Join(dir, "now"), 0o755)
	os.WriteFile(filepath.Join(dir, "now", "state.json"), []byte(`{"step": 99, "pos": {"x": 2.5, "y": 0, "z": 1.5}}`), 0o644)
	b, _, err := v.View(ctx, "map/here@r=1.txt")
	if err != nil || !strings.Contains(string(b), "now/state.json, step 99") || !strings.Contains(string(b), "z=1 |o@ |") {
		t.Errorf("here from now/state.json: %v\n%s", err, b)
	}
}

// TestMapHereFollowsNow: map/here follows now/state.json as the harness
// replaces it (by rename), even when the new file has the same size and
// mtime, as two states written within one tick of the file clock have.
func TestMapHereFollowsNow(t *testing.T) {
	v, dir := handViewer(t)
	ctx := context.Background()
	now := filepath.Join(dir, "now", "state.json")
	if err := os.MkdirAll(filepath.Dir(now), 0o755); err != nil {
		t.Fatal(err)
	}
	var first os.FileInfo
	for i, c := range []struct{ state, want string }{
		{`{"step": 99, "pos": {"x": 2.5, "y": 0, "z": 1.5}}`, "now/state.json, step 99"},
		{`{"step": 98, "pos": {"x": 0.5, "y": 0, "z": 1.5}}`, "now/state.json, step 98"},
	} {
		tmp := now + ".tmp"
		if err := os.WriteFile(tmp, []byte(c.state), 0o644); err != nil {
			t.Fatal(err)
		}
		if first != nil {
			if err := os.Chtimes(tmp, first.ModTime(), first.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(tmp, now); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(now)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = st
		} else if st.Size() != first.Size() || !st.ModTime().Equal(first.ModTime()) {
			t.Fatalf("the case needs the same size and mtime: %v, %v", st, first)
		}
		b, _, err := v.View(ctx, "map/here@r=1.txt")
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("state %d: %v\n%s\nwant %q", i, err, b, c.want)
		}
	}
}

// TestMapFollowsGrowth: rows appended to grid.jsonl show in the next map.
func TestMapFollowsGrowth(t *testing.T) {
	v, dir := handViewer(t)
	ctx := context.Background()
	b1, _, err := v.View(ctx, "map/at=1,0@r=2.txt")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "grid.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"cell": [-1, 0, 2], "kind": "opened", "step": 20}` + "\n")
	f.Close()
	b2, _, err := v.View(ctx, "map/at=1,0@r=2.txt")
	if err != nil || bytes.Equal(b1, b2) || !strings.Contains(string(b2), "z=2  |o!   |") {
		t.Errorf("appended row not shown: %v\n%s", err, b2)
	}
}

// pixelDiff describes the first difference between two images, or "".
func pixelDiff(a, b image.Image) string {
	if a.Bounds() != b.Bounds() {
		return "size " + a.Bounds().String() + " vs " + b.Bounds().String()
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ca := color.NRGBAModel.Convert(a.At(x, y))
			cb := color.NRGBAModel.Convert(b.At(x, y))
			if ca != cb {
				return image.Pt(x, y).String() + ": " + colorString(ca) + " vs " + colorString(cb)
			}
		}
	}
	return ""
}

func colorString(c color.Color) string {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return strings.Join([]string{itoa(int(n.R)), itoa(int(n.G)), itoa(int(n.B)), itoa(int(n.A))}, ",")
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMapConcurrent renders maps from several goroutines while the grid
// grows (run with -race): every render sees a consistent prefix of rows.
func TestMapConcurrent(t *testing.T) {
	v, dir := handViewer(t)
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, _ := os.OpenFile(filepath.Join(dir, "grid.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
		defer f.Close()
		for i := 0; i < 200; i++ {
			f.WriteString(`{"cell": [` + strconv.Itoa(i%5-2) + `, 0, 2], "kind": "placed", "step": 100}` + "\n")
		}
	}()
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 20; i++ {
				name := "map/at=" + strconv.Itoa(g) + ",0@r=" + strconv.Itoa(1+i%4) + ".txt"
				if i%2 == 1 {
					name = strings.TrimSuffix(name, ".txt") + "@cell=2.png"
				}
				if _, _, err := v.View(ctx, name); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-done
	b, _, err := v.View(ctx, "map/at=0,0@r=2.txt")
	if err != nil || !strings.Contains(string(b), "z=2  |++!++|") {
		t.Errorf("after the writes: %v\n%s", err, b)
	}
}

// TestMapStoreAxes: a store that declares Luanti's axes gets maps with
// north at +z and episode positions in the nearest block, the block its
// grid cells name; a pillar column shows as placed, not as the wall
// bumped into beside it at another y; counts are per column.
func TestMapStoreAxes(t *testing.T) {
	dir := t.TempDir()
	s, err := episodes.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAxes(episodes.LuantiAxes); err != nil {
		t.Fatal(err)
	}
	grid := `{"cell": [-69, 10, 185], "kind": "placed", "step": 1}
{"cell": [-69, 11, 185], "kind": "placed", "step": 2}
{"cell": [-69, 12, 185], "kind": "blocked", "step": 3}
{"cell": [-69, 13, 185], "kind": "walked", "step": 4}
{"cell": [-70, 10, 185], "kind": "blocked", "step": 5}
{"cell": [-70, 11, 185], "kind": "walked", "step": 6}
{"cell": [-68, 10, 186], "kind": "walked", "step": 7}
{"cell": [-68, 11, 186], "kind": "placed", "step": 8}
`
	index := `{"id": "ep_000040", "x": -68.957, "y": 10.5, "z": 184.528, "first_step": 0, "last_step": 8}
`
	os.WriteFile(s.Path("grid.jsonl"), []byte(grid), 0o644)
	os.WriteFile(s.Path("index.jsonl"), []byte(index), 0o644)
	s, err = episodes.Open(dir) // as a mount opens it
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(s, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	b, _, err := v.View(context.Background(), "map/at=-69,185@r=1.txt")
	if err != nil {
		t.Fatal(err)
	}
	txt := string(b)
	for _, want := range []string{
		"north=+z (store axes)",
		"axes: north=+z as the store declares (mfm-store.json axes); positions in the nearest block (round), as the store declares",
		"z=186 |  +|", // north (+z) is up
		"z=185 |.@ |", // -70: walked over blocked; -69 the centre (placed over blocked and walked)
		"the @ is x=-69 z=185: placed",
		"): walked 3 (1 shown) placed 2 blocked 2 (0 shown)\n",
		"x=-69 z=185: ep_000040", // round(184.528) = 185, the tower's block; floor would be 184
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("lacks %q:\n%s", want, txt)
		}
	}
	// @north=-z overrides the store; the block of a position does not change.
	b, _, err = v.View(context.Background(), "map/at=-69,185@r=1@north=-z.txt")
	if err != nil {
		t.Fatal(err)
	}
	if txt := string(b); !strings.Contains(txt, "z=184 |   |\n") || strings.Index(txt, "z=184") > strings.Index(txt, "z=186") || !strings.Contains(txt, "north as @north= asks") {
		t.Errorf("@north=-z:\n%s", txt)
	}
	if err := s.SetAxes(episodes.Axes{North: "up"}); err == nil {
		t.Error("SetAxes accepts north=up")
	}
}
