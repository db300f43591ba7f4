package main

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

// canMountView skips unless this process can mount; under CI=true it fails.
func canMountView(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := os.Stat("/dev/fuse"); err != nil {
		why = "no /dev/fuse"
	} else if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			why = "not root and no fusermount3"
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI: the mount tests must run: %s", why)
	}
	t.Skip(why)
}

// mountForTest mounts store at mnt (created if need be) with the hooks
// mfmd mount uses and no access log; the mount is undone, and the hooks
// closed, when the test ends.
func mountForTest(t *testing.T, store *episodes.Store, mnt string) string {
	t.Helper()
	hooks, _, closeHooks, err := setupHooks(store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeHooks)
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	srv, err := mfmfs.Mount(context.Background(), store, mnt, mfmfs.Options{Hooks: hooks, NoAccessLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount(); srv.Wait() }) // runs before closeHooks
	return mnt
}

// TestMountViews mounts a small store with the real viewer (the hooks
// mfmd mount uses) and reads views through the kernel: pixels of a crop
// and zoom, a text map that follows the grid as it grows, and errors.
func TestMountViews(t *testing.T) {
	canMountView(t)
	dir := t.TempDir()
	store, err := episodes.Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	frame := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			frame.SetNRGBA(x, y, color.NRGBA{uint8(x * 4), uint8(y * 5), 9, 255})
		}
	}
	var pb bytes.Buffer
	png.Encode(&pb, frame)
	write := func(rel, data string) {
		p := filepath.Join(store.Root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("episodes/ep_000001/observation/image.png", pb.String())
	write("episodes/ep_000001/state/state.json", `{"step": 1, "pos": {"x": 0.5, "y": 0, "z": 0.5}}`)
	write("index.jsonl", `{"id": "ep_000001", "path": "episodes/ep_000001", "image": "episodes/ep_000001/observation/image.png", "kind": "episode", "first_step": 1, "last_step": 2, "action_kind": "walk", "summary": "walk", "tags": [], "x": 0.5, "y": 0.0, "z": 0.5, "gui_open": false}`+"\n")
	write("grid.jsonl", `{"cell": [0, 0, 0], "kind": "walked", "step": 1}`+"\n"+`{"cell": [1, 0, 0], "kind": "blocked", "step": 2}`+"\n")

	mnt := mountForTest(t, store, filepath.Join(dir, "mnt"))

	// Crop 8,4,16,8 zoomed x2: output pixel x,y is frame pixel 8+x/2, 4+y/2.
	b, err := os.ReadFile(filepath.Join(mnt, "episodes/ep_000001/observation/image@crop=8,4,16,8@zoom=2.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 32 || img.Bounds().Dy() != 16 {
		t.Fatalf("view size %v", img.Bounds())
	}
	for _, p := range []image.Point{{0, 0}, {31, 15}, {5, 9}} {
		want := frame.NRGBAAt(8+p.X/2, 4+p.Y/2)
		if got := color.NRGBAModel.Convert(img.At(p.X, p.Y)); got != want {
			t.Errorf("view pixel %v = %v, want %v", p, got, want)
		}
	}

	// A text map through the mount, live as the grid grows.
	b, err = os.ReadFile(filepath.Join(mnt, "map/here@r=1.txt"))
	if err != nil || !strings.Contains(string(b), "z=0  | @#|") {
		t.Fatalf("map/here@r=1.txt: %v\n%s", err, b)
	}
	f, _ := os.OpenFile(filepath.Join(store.Root, "grid.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"cell": [-1, 0, 0], "kind": "hazard", "step": 3}` + "\n")
	f.Close()
	b, _ = os.ReadFile(filepath.Join(mnt, "map/here@r=1.txt"))
	if !strings.Contains(string(b), "z=0  |!@#|") {
		t.Errorf("map after the grid grew:\n%s", b)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "map/here.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("map/here.png: %v", err)
	}

	// Views are not listed; a malformed one is EINVAL with the reason in /.errors.
	ents, _ := os.ReadDir(filepath.Join(mnt, "map"))
	if len(ents) != 0 {
		t.Errorf("map/ lists %d entries", len(ents))
	}
	_, err = os.ReadFile(filepath.Join(mnt, "map/here@r=999.txt"))
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("r=999: %v, want EINVAL", err)
	}
	if e, _ := os.ReadFile(filepath.Join(mnt, ".errors")); !strings.Contains(string(e), "r=999: at most 256 blocks") {
		t.Errorf("/.errors does not say why:\n%s", e)
	}
	if _, err := os.Stat(filepath.Join(mnt, "episodes/ep_000009/observation/image@zoom=2.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a view of a missing frame: %v, want ENOENT", err)
	}
}

// TestMountPreviousLifeViews: an earlier life's maps (previous/life_N/map/)
// are drawn from that life's grid.jsonl and index.jsonl, and views beside
// its frames render its pixels, through the real viewer and a real mount.
func TestMountPreviousLifeViews(t *testing.T) {
	canMountView(t)
	dir := t.TempDir()
	store, err := episodes.Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, data string) {
		p := filepath.Join(store.Root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	framePNG := func(c color.NRGBA) string {
		img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
		for i := range img.Pix {
			img.Pix[i] = []uint8{c.R, c.G, c.B, c.A}[i%4]
		}
		var b bytes.Buffer
		png.Encode(&b, img)
		return b.String()
	}
	row := func(x, z string) string {
		return `{"id": "ep_000001", "path": "episodes/ep_000001", "image": "episodes/ep_000001/observation/image.png", "kind": "episode", "first_step": 1, "last_step": 2, "action_kind": "walk", "summary": "walk", "tags": [], "x": ` + x + `, "y": 0.0, "z": ` + z + `, "gui_open": false}` + "\n"
	}
	cur, old := color.NRGBA{10, 20, 30, 255}, color.NRGBA{200, 100, 50, 255}
	write("episodes/ep_000001/observation/image.png", framePNG(cur))
	write("index.jsonl", row("0.5", "0.5"))
	write("grid.jsonl", `{"cell": [0, 0, 0], "kind": "walked", "step": 1}`+"\n")
	write("previous/life_1/episodes/ep_000001/observation/image.png", framePNG(old))
	write("previous/life_1/index.jsonl", row("10.5", "20.5"))
	write("previous/life_1/grid.jsonl", `{"cell": [10, 0, 20], "kind": "walked", "step": 1}`+"\n"+`{"cell": [9, 0, 20], "kind": "hazard", "step": 2}`+"\n")
	write("previous/life_1/logs.txt", "")

	mnt := mountForTest(t, store, filepath.Join(dir, "mnt"))

	for i := 0; i < 2; i++ { // the second read is the kernel-cached one
		b, err := os.ReadFile(filepath.Join(mnt, "previous/life_1/map/here@r=1.txt"))
		if err != nil || !strings.Contains(string(b), "the @ is x=10 z=20") || !strings.Contains(string(b), "|!@ |") || !strings.Contains(string(b), "hazard 1") {
			t.Fatalf("previous/life_1/map/here@r=1.txt (read %d): %v\n%s", i, err, b)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "previous/life_1/map/at=10,20.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("previous/life_1/map/at=10,20.png: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "map/here@r=1.txt")); err != nil || !strings.Contains(string(b), "the @ is x=0 z=0") || strings.Contains(string(b), "hazard 1") {
		t.Errorf("the current life's map: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(mnt, "previous/life_1/map/here@r=999.txt")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("malformed earlier-life map: %v, want EINVAL", err)
	}
	for _, c := range []struct {
		rel  string
		want color.NRGBA
	}{
		{"previous/life_1/episodes/ep_000001/observation/image@crop=0,0,8,8@zoom=2.png", old},
		{"episodes/ep_000001/observation/image@crop=0,0,8,8@zoom=2.png", cur},
	} {
		b, err := os.ReadFile(filepath.Join(mnt, c.rel))
		if err != nil {
			t.Errorf("%s: %v", c.rel, err)
			continue
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || img.Bounds().Dx() != 16 {
			t.Errorf("%s: %v %v", c.rel, err, img)
			continue
		}
		if got := color.NRGBAModel.Convert(img.At(3, 3)); got != c.want {
			t.Errorf("%s: pixel %v, want %v", c.rel, got, c.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "previous/life_1/episodes/ep_000001/sheet.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("an earlier life's episode sheet: %v", err)
	}
}
