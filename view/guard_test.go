package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// frameStore is a store with the given frame files (store-relative name
// -> bytes) and limits lim.
func frameStore(t *testing.T, files map[string][]byte, lim Limits) (*Viewer, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(s, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, dir
}

func pngBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hugeHeader is a PNG whose IHDR claims w x h and which has no image data
// at all: decoding it would fail, so an error naming the size shows the
// header was checked first.
func hugeHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	binary.Write(&b, binary.BigEndian, uint32(13))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

const ep1 = "episodes/ep_000001/observation/"

// TestViewerPixels renders through the Viewer (name -> PNG bytes) and checks
// the pixels map back to the frame.
func TestViewerPixels(t *testing.T) {
	v, _ := frameStore(t, map[string][]byte{ep1 + "image.png": pngBytes(t, pattern(64, 48))}, DefaultLimits())
	for _, c := range []struct {
		view string
		w, h int
		at   func(x, y int) (int, int) // output pixel -> frame pixel
	}{
		{ep1 + "image@crop=10,5,20,10.png", 20, 10, func(x, y int) (int, int) { return 10 + x, 5 + y }},
		{ep1 + "image@crop=10,5,20,10@zoom=4.png", 80, 40, func(x, y int) (int, int) { return 10 + x/4, 5 + y/4 }},
		{ep1 + "image@zoom=2.png", 128, 96, func(x, y int) (int, int) { return x / 2, y / 2 }},
	} {
		b, ok, err := v.View(context.Background(), c.view)
		if !ok || err != nil {
			t.Fatalf("%s: %v %v", c.view, ok, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds().Dx() != c.w || img.Bounds().Dy() != c.h {
			t.Fatalf("%s: size %v", c.view, img.Bounds())
		}
		for _, p := range []image.Point{{0, 0}, {c.w - 1, c.h - 1}, {c.w / 3, c.h / 2}} {
			fx, fy := c.at(p.X, p.Y)
			want := color.NRGBA{uint8(fx), uint8(fy), 77, 255}
			if got := color.NRGBAModel.Convert(img.At(p.X, p.Y)); got != want {
				t.Errorf("%s pixel %v = %v, want frame %d,%d %v", c.view, p, got, fx, fy, want)
			}
		}
	}
	// JPEG by extension.
	b, _, err := v.View(context.Background(), ep1+"image@zoom=2.jpg")
	if err != nil || !bytes.HasPrefix(b, []byte{0xff, 0xd8}) {
		t.Errorf("jpg view: %v, % x", err, b[:min(len(b), 4)])
	}
}

func TestGuardSources(t *testing.T) {
	good := pngBytes(t, pattern(64, 48))
	lim := DefaultLimits()
	lim.MaxSourceBytes = 1 << 20
	v, _ := frameStore(t, map[string][]byte{
		"episodes/ep_000001/observation/image.png": good[:len(good)/2],         // truncated
		"episodes/ep_000002/observation/image.png": []byte("this is no image"), // garbage
		"episodes/ep_000003/observation/image.png": hugeHeader(100000, 100000), // over the pixel cap
		"episodes/ep_000004/observation/image.png": hugeHeader(9000, 10),       // over the side cap
		"episodes/ep_000005/observation/image.png": append(good, make([]byte, 1<<20)...),
		"episodes/ep_000006/observation/image.png": {},
	}, lim)
	for _, c := range []struct{ ep, want string }{
		{"ep_000001", "corrupt image"},
		{"ep_000002", "not a readable image"},
		{"ep_000003", "100000x100000 is larger than allowed"},
		{"ep_000004", "9000x10 is larger than allowed"},
		{"ep_000005", "bytes, more than the 1048576 allowed"},
		{"ep_000006", "not a readable image"},
	} {
		view := "episodes/" + c.ep + "/observation/image@zoom=2.png"
		b, ok, err := v.View(context.Background(), view)
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) || b != nil {
			t.Errorf("%s: ok=%v err=%v, want an error with %q", view, ok, err, c.want)
		}
	}
	// A missing frame is not a view (ENOENT in the mount), not an error.
	if _, ok, err := v.View(context.Background(), "episodes/ep_000009/observation/image@zoom=2.png"); ok || err != nil {
		t.Errorf("missing frame: ok=%v err=%v", ok, err)
	}
}

func TestGuardOutputZoomTiles(t *testing.T) {
	lim := DefaultLimits()
	v, _ := frameStore(t, map[string][]byte{ep1 + "image.png": pngBytes(t, pattern(1000, 600))}, lim)
	ctx := context.Background()
	for _, c := range []struct{ view, want string }{
		{ep1 + "image@zoom=10.png", "output 10000x6000 is larger than allowed"},
		{ep1 + "image@zoom=20.png", "zoom=20: at most 16"},
		{ep1 + "image@zoom=65.png", "want zoom=N"},
		{ep1 + "image@crop=900,500,200,200.png", "does not lie inside"},
		{ep1 + "image@crop=0,0,600,600@zoom=16.png", "larger than allowed"},
	} {
		_, ok, err := v.View(ctx, c.view)
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ok=%v err=%v, want %q", c.view, ok, err, c.want)
		}
	}
	frames := make([]string, lim.MaxTiles+1)
	for i := range frames {
		frames[i] = ep1 + "image.png"
	}
	if _, err := v.Sheet(ctx, frames, nil); err == nil || !strings.Contains(err.Error(), "at most 64 tiles") {
		t.Errorf("sheet over the tile cap: %v", err)
	}
	if _, err := RenderSheet(make([]Tile, 65), SheetLayout{}, &lim); err == nil {
		t.Error("RenderSheet over the tile cap")
	}
	if _, err := RenderSheet([]Tile{{Missing: "x"}}, SheetLayout{TileW: 9000}, &lim); err == nil {
		t.Error("RenderSheet over the output cap")
	}
}

func TestGuardPool(t *testing.T) {
	p := newPool(1, 50*time.Millisecond)
	release := make(chan struct{})
	defer close(release)
	// A render slower than the timeout returns an error in time.
	start := time.Now()
	_, err := p.run(context.Background(), "slow", func() ([]byte, error) { <-release; return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "did not finish in time") || time.Since(start) > 2*time.Second {
		t.Fatalf("slow render: %v after %v", err, time.Since(start))
	}
	// Its worker is still busy: the next render fails fast as busy.
	start = time.Now()
	_, err = p.run(context.Background(), "next", func() ([]byte, error) { return []byte("x"), nil })
	if !errors.Is(err, ErrBusy) || time.Since(start) > 2*time.Second {
		t.Fatalf("busy pool: %v after %v", err, time.Since(start))
	}
	// A panic is an error, and frees its worker.
	q := newPool(1, time.Second)
	if _, err := q.run(context.Background(), "boom", func() ([]byte, error) { panic("boom") }); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("panic: %v", err)
	}
	if b, err := q.run(context.Background(), "after", func() ([]byte, error) { return []byte("ok"), nil }); err != nil || string(b) != "ok" {
		t.Fatalf("after a panic: %q %v", b, err)
	}
	// Through a Viewer: every worker held, a view answers busy, not a hang.
	lim := DefaultLimits()
	lim.Workers, lim.RenderTimeout = 1, 50*time.Millisecond
	v, _ := frameStore(t, map[string][]byte{ep1 + "image.png": pngBytes(t, pattern(64, 48))}, lim)
	held := make(chan struct{})
	go v.pool.run(context.Background(), "hold", func() ([]byte, error) { close(held); <-release; return nil, nil })
	<-held
	if _, ok, err := v.View(context.Background(), ep1+"image@zoom=2.png"); !ok || !errors.Is(err, ErrBusy) {
		t.Errorf("view with the pool full: ok=%v err=%v", ok, err)
	}
}

func TestGuardConfinement(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.png"), pngBytes(t, pattern(8, 8)), 0o644)
	os.MkdirAll(filepath.Join(outside, "ep", "observation"), 0o755)
	os.WriteFile(filepath.Join(outside, "ep", "observation", "image.png"), pngBytes(t, pattern(8, 8)), 0o644)
	v, dir := frameStore(t, map[string][]byte{"episodes/ep_000001/state/state.json": []byte("{}")}, DefaultLimits())
	// A frame that is a symlink out of the store, and an episode directory that is.
	os.MkdirAll(filepath.Join(dir, "episodes", "ep_000001", "observation"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(dir, "episodes", "ep_000001", "observation", "image.png")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(outside, "ep"), filepath.Join(dir, "episodes", "ep_000002"))
	os.Symlink(filepath.Join(outside, "grid.jsonl"), filepath.Join(dir, "grid.jsonl"))
	ctx := context.Background()
	for _, view := range []string{
		"episodes/ep_000001/observation/image@zoom=2.png",
		"episodes/ep_000002/observation/image@zoom=2.png",
	} {
		b, ok, err := v.View(ctx, view)
		if b != nil || (ok && err == nil) {
			t.Errorf("%s: rendered a file outside the store", view)
		}
		if ok && !strings.Contains(err.Error(), "escapes") {
			t.Errorf("%s: %v", view, err)
		}
	}
	// Names that leave the store are not views at all.
	for _, rel := range []string{"../x@zoom=2.png", "episodes/ep_000001/../../x@zoom=2.png", "/etc/x@zoom=2.png", "episodes/./ep_000001/observation/image@zoom=2.png"} {
		if b, ok, err := v.View(ctx, rel); ok || err != nil || b != nil {
			t.Errorf("%s: ok=%v err=%v", rel, ok, err)
		}
	}
	if _, err := v.open("../secret.png"); err == nil {
		t.Error("open ../ inside the viewer")
	}
	// A grid.jsonl that is a symlink out: the map refuses it.
	os.WriteFile(filepath.Join(outside, "grid.jsonl"), []byte(`{"cell": [0, 0, 0], "kind": "walked", "step": 1}`+"\n"), 0o644)
	if _, _, err := v.View(ctx, "map/at=0,0.txt"); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("map over a grid outside the store: %v", err)
	}
}

func TestGuardGridSize(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxGridBytes = 100
	v, _ := frameStore(t, map[string][]byte{"grid.jsonl": []byte(handGrid), "index.jsonl": []byte(handIndex)}, lim)
	if _, _, err := v.View(context.Background(), "map/at=0,0.txt"); err == nil || !strings.Contains(err.Error(), "more than the 100 a map reads") {
		t.Errorf("grid over the cap: %v", err)
	}
}
