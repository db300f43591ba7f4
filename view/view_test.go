package view

import (
	"image"
	"image/color"
	"strings"
	"testing"
)

func TestZoomNearestPixels(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	src.SetNRGBA(2, 1, color.NRGBA{255, 0, 0, 255})
	lim := DefaultLimits()
	img, err := Apply(src, FrameOps{Crop: image.Rect(1, 1, 4, 3), Zoom: 4}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect.Dx() != 12 || img.Rect.Dy() != 8 {
		t.Fatalf("size %v", img.Rect)
	}
	for _, p := range []struct {
		x, y int
		red  bool
	}{{4, 0, true}, {7, 3, true}, {3, 0, false}, {8, 0, false}, {4, 4, false}} {
		if got := img.NRGBAAt(p.x, p.y).R == 255; got != p.red {
			t.Errorf("pixel %d,%d red=%v want %v", p.x, p.y, got, p.red)
		}
	}
}

func TestParseCanonical(t *testing.T) {
	for _, c := range []struct {
		in, err string
		ok      bool
	}{
		{"episodes/ep_000001/observation/image@crop=1,2,3,4@zoom=4@grid.png", "", true},
		{"episodes/ep_000001/observation/image@zoom=04.png", "image@zoom=4.png", true},
		{"episodes/ep_000001/observation/image@blur.png", "unknown operation", true},
		{"episodes/ep_000001/sheet@steps=1..5.png", "", true},
		{"map/at=-3,4@r=8.txt", "", true},
		{"episodes/ep_000001/observation/image.png", "", false},
		{"../x@zoom=2.png", "", false},
	} {
		_, ok, err := Parse(c.in)
		if ok != c.ok || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Parse(%q) = %v, %v", c.in, ok, err)
		}
	}
}
