package view

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNowFrameWithoutNowDir: with no now/ directory, now/frame.png is the
// last episode's frame (as the mount serves it), so its views render from
// that frame; then-and-now shows it as the now side.
func TestNowFrameWithoutNowDir(t *testing.T) {
	frame := pngBytes(t, pattern(6, 4))
	v, dir := frameStore(t, map[string][]byte{
		"episodes/ep_000000/observation/image.png": pngBytes(t, pattern(3, 3)),
		"episodes/ep_000001/observation/image.png": frame,
		"index.jsonl": []byte(`{"id": "ep_000000", "image": "episodes/ep_000000/observation/image.png"}` + "\n" +
			`{"id": "ep_000001", "image": "episodes/ep_000001/observation/image.png"}` + "\n"),
	}, DefaultLimits())
	if _, err := os.Stat(filepath.Join(dir, "now")); !os.IsNotExist(err) {
		t.Fatalf("the store has a now/ directory: %v", err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		view string
		w, h int
	}{
		{"now/frame@zoom=2.png", 12, 8},
		{"now/frame@crop=1,1,2,2@zoom=3.png", 6, 6},
	} {
		b, ok, err := v.View(ctx, c.view)
		if !ok || err != nil {
			t.Fatalf("%s: ok=%v err=%v", c.view, ok, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds().Dx() != c.w || img.Bounds().Dy() != c.h {
			t.Errorf("%s: %v, want %dx%d", c.view, img.Bounds(), c.w, c.h)
		}
	}
	// the harness's now/frame.png, once written, wins
	if err := os.MkdirAll(filepath.Join(dir, "now"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Same size as the last episode's frame (84 bytes each) and, as when
	// both are written within one tick of the file clock, the same mtime:
	// the cache must still tell the two files apart.
	nowPNG := pngBytes(t, pattern(5, 5))
	if len(nowPNG) != len(frame) {
		t.Fatalf("now/frame.png is %d bytes, the episode's frame %d: the case needs them equal", len(nowPNG), len(frame))
	}
	nowPath := filepath.Join(dir, "now", "frame.png")
	if err := os.WriteFile(nowPath, nowPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := os.Stat(filepath.Join(dir, "episodes/ep_000001/observation/image.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(nowPath, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	b, ok, err := v.View(ctx, "now/frame@zoom=2.png")
	if !ok || err != nil {
		t.Fatalf("with now/frame.png: ok=%v err=%v", ok, err)
	}
	if img, err := png.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dx() != 10 {
		t.Errorf("with now/frame.png: %v %v, want 10 wide", img.Bounds(), err)
	}
}

// TestCropMessages: a crop outside the grammar's bounds says which value
// is wrong and what is accepted.
func TestCropMessages(t *testing.T) {
	base := "episodes/ep_000001/observation/image@"
	for _, c := range []struct{ op, want string }{
		{"crop=4294967295,0,1,1", "X 4294967295 is more than 1048576"},
		{"crop=0,99999999999999999999,1,1", "Y 99999999999999999999 is more than 1048576"},
		{"crop=0,0,1048577,1", "W 1048577 is more than 1048576"},
		{"crop=0,0,0,1", "W is 0: W and H are at least 1"},
		{"crop=0,0,1,00", "H is 0: W and H are at least 1"},
		{"crop=-1,0,1,1", `X "-1" is not a whole number from 0`},
		{"crop=0,0,1", "3 value(s), want 4"},
	} {
		_, ok, err := Parse(base + c.op + ".png")
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "each a whole number from 0 to 1048576") {
			t.Errorf("%s: ok=%v err=%v, want %q", c.op, ok, err, c.want)
		}
	}
}
