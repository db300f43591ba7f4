package view_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/view"
)

// Render a view of a recorded frame: crop a 16x8 region at (8,4) and
// zoom it x2, by the name the view has in the mount.
func ExampleViewer_View() {
	dir, err := os.MkdirTemp("", "mfm-view-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := episodes.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	// A 64x48 frame whose pixel (x, y) has red 4x and green 5y.
	frame := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			frame.SetNRGBA(x, y, color.NRGBA{uint8(4 * x), uint8(5 * y), 0, 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, frame)
	name := store.Path("episodes", "ep_000001", "observation", "image.png")
	os.MkdirAll(filepath.Dir(name), 0o755)
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}

	v, err := view.New(store, view.DefaultLimits())
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	out, ok, err := v.View(context.Background(), "episodes/ep_000001/observation/image@crop=8,4,16,8@zoom=2.png")
	if !ok || err != nil {
		log.Fatal(ok, err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("size:", img.Bounds().Dx(), "x", img.Bounds().Dy())
	// Output pixel (x, y) is frame pixel (8+x/2, 4+y/2).
	fmt.Println("top left:", color.NRGBAModel.Convert(img.At(0, 0)))
	fmt.Println("bottom right:", color.NRGBAModel.Convert(img.At(31, 15)))
	// Output:
	// size: 32 x 16
	// top left: {32 20 0 255}
	// bottom right: {92 55 0 255}
}

// Parse view names: which kind each is, the file or directory it is
// drawn from, and whether the kernel may cache it. A name spelled other
// than the one canonical way is an error naming that way; a name
// without operations is no view at all.
func ExampleParse() {
	kinds := map[view.Kind]string{view.FrameView: "frame view", view.SheetView: "sheet", view.MapView: "map"}
	for _, name := range []string{
		"episodes/ep_000012/observation/image@crop=10,10,32,24@zoom=4.png",
		"episodes/ep_000012/sheet.png",
		"map/here@r=8.txt",
		"episodes/ep_000012/observation/image@zoom=4@crop=10,10,32,24.png",
		"episodes/ep_000012/observation/image.png",
	} {
		s, ok, err := view.Parse(name)
		switch {
		case !ok:
			fmt.Println("not a view:", name)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Printf("%s of %q, stable %v\n", kinds[s.Kind], s.Base, view.Stable(name))
		}
	}
	// Output:
	// frame view of "episodes/ep_000012/observation/image.png", stable true
	// sheet of "episodes/ep_000012", stable true
	// map of "", stable false
	// view "episodes/ep_000012/observation/image@zoom=4@crop=10,10,32,24.png": write it as "episodes/ep_000012/observation/image@crop=10,10,32,24@zoom=4.png" (one spelling per view)
	// not a view: episodes/ep_000012/observation/image.png
}

// Render a text map of the cells around the agent's last position (the
// last row of index.jsonl), one character per block, from grid.jsonl.
func ExampleViewer_View_textMap() {
	dir, err := os.MkdirTemp("", "mfm-view-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := episodes.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	grid := `{"cell": [0, 0, 0], "kind": "walked", "step": 1}
{"cell": [1, 0, 0], "kind": "blocked", "step": 2}
{"cell": [-1, 0, 1], "kind": "hazard", "step": 3}
`
	row := `{"id": "ep_000001", "path": "episodes/ep_000001", "kind": "episode", "first_step": 1, "last_step": 3, "action_kind": "go_to", "summary": "", "tags": [], "x": 0.5, "y": 0.0, "z": 0.5}` + "\n"
	os.WriteFile(store.Path("grid.jsonl"), []byte(grid), 0o644)
	os.WriteFile(store.Path("index.jsonl"), []byte(row), 0o644)

	v, err := view.New(store, view.DefaultLimits())
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	out, ok, err := v.View(context.Background(), "map/here@r=1.txt")
	if !ok || err != nil {
		log.Fatal(ok, err)
	}
	fmt.Print(string(out))
	// Output:
	// map here (ep_000001, step 3: 0.5,0.0,0.5)  r=1  all y  north=-z
	// 3x3 blocks; x grows to the right: column c (from 0, inside the |...| border) is x=-1+c; -z (north) is up, z grows downwards: row r is z=-1+r
	// the @ is x=0 z=0: walked
	// axes: north=-z, the default (the store declares no axes); positions in block floor(x), floor(z)
	//    x   0
	//        |
	// z=-1 |   |
	// z=0  | @#|
	// z=1  |!  |
	// legend: @ centre  * episode position (over walked, blocked or nothing)  . walked  + placed  o opened  # blocked  ! hazard  (space) nothing recorded
	// columns holding each kind (a column shows the most telling: ! o + ~ ? . #): walked 1 blocked 1 hazard 1
	// episode positions (index rows) in view: 1 cell(s)
	//   x=0 z=0: ep_000001
}
