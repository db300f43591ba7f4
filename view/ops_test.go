package view

import (
	"image"
	"image/color"
	"image/draw"
	"testing"
)

// pattern is a w x h frame whose pixel x,y is (x, y, 77): every pixel
// says where it came from.
func pattern(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 77, 255})
		}
	}
	return m
}

func solid(w, h int, c color.NRGBA) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	fill(m, m.Rect, c)
	return m
}

var (
	red   = color.NRGBA{255, 0, 0, 255}
	green = color.NRGBA{0, 255, 0, 255}
	blue  = color.NRGBA{0, 0, 255, 255}
	black = color.NRGBA{0, 0, 0, 255}
	white = color.NRGBA{255, 255, 255, 255}
)

func TestCropPixels(t *testing.T) {
	lim := DefaultLimits()
	img, err := Apply(pattern(64, 48), FrameOps{Crop: image.Rect(10, 5, 30, 15)}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect != image.Rect(0, 0, 20, 10) {
		t.Fatalf("size %v, want 20x10", img.Rect)
	}
	for _, p := range []image.Point{{0, 0}, {19, 9}, {7, 3}} {
		want := color.NRGBA{uint8(10 + p.X), uint8(5 + p.Y), 77, 255}
		if got := img.NRGBAAt(p.X, p.Y); got != want {
			t.Errorf("crop pixel %v = %v, want %v", p, got, want)
		}
	}
	if _, err := Apply(pattern(64, 48), FrameOps{Crop: image.Rect(60, 40, 70, 50)}, &lim); err == nil {
		t.Error("a crop past the frame's edge is not an error")
	}
}

func TestZoomNearestMapsBack(t *testing.T) {
	lim := DefaultLimits()
	const n = 3
	img, err := Apply(pattern(64, 48), FrameOps{Crop: image.Rect(4, 2, 14, 10), Zoom: n}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect.Dx() != 30 || img.Rect.Dy() != 24 {
		t.Fatalf("size %v", img.Rect)
	}
	for y := 0; y < 24; y++ {
		for x := 0; x < 30; x++ {
			want := color.NRGBA{uint8(4 + x/n), uint8(2 + y/n), 77, 255}
			if got := img.NRGBAAt(x, y); got != want {
				t.Fatalf("zoomed pixel %d,%d = %v, want %v (frame pixel %d,%d)", x, y, got, want, 4+x/n, 2+y/n)
			}
		}
	}
}

func TestZoomSmoothPixels(t *testing.T) {
	lim := DefaultLimits()
	// Left half black, right half white: smooth zoom keeps the flat parts
	// and grades the edge; nearest has only the two values.
	src := solid(16, 8, black)
	fill(src, image.Rect(8, 0, 16, 8), white)
	sm, err := Apply(src, FrameOps{Zoom: 4, Smooth: true}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Rect.Dx() != 64 || sm.Rect.Dy() != 32 {
		t.Fatalf("size %v", sm.Rect)
	}
	if got := sm.NRGBAAt(8, 16); got.R > 2 {
		t.Errorf("flat black part: %v", got)
	}
	if got := sm.NRGBAAt(56, 16); got.R < 253 {
		t.Errorf("flat white part: %v", got)
	}
	grey := 0
	for x := 24; x < 40; x++ {
		if r := sm.NRGBAAt(x, 16).R; r > 10 && r < 245 {
			grey++
		}
	}
	if grey < 2 {
		t.Errorf("smooth zoom: only %d graded pixels across the edge", grey)
	}
	nn, _ := Apply(src, FrameOps{Zoom: 4}, &lim)
	if nn.NRGBAAt(31, 16) != black || nn.NRGBAAt(32, 16) != white {
		t.Errorf("nearest zoom edge: %v %v", nn.NRGBAAt(31, 16), nn.NRGBAAt(32, 16))
	}
}

// gridOver is the grid line colour drawn over c.
func gridOver(c color.NRGBA) color.NRGBA {
	a := uint32(colGrid.A)
	mix := func(s, d uint8) uint8 { return uint8((uint32(s)*a + uint32(d)*(255-a) + 127) / 255) }
	return color.NRGBA{mix(colGrid.R, c.R), mix(colGrid.G, c.G), mix(colGrid.B, c.B), 255}
}

func near(a, b color.NRGBA) bool {
	d := func(x, y uint8) bool { return x-y <= 2 || y-x <= 2 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

func TestGridPixels(t *testing.T) {
	lim := DefaultLimits()
	// No zoom: lines at every multiple of 16 frame pixels.
	img, err := Apply(solid(96, 96, black), FrameOps{Grid: 16}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	line := gridOver(black)
	for _, c := range []struct {
		x, y int
		want color.NRGBA
	}{{48, 60, line}, {49, 60, black}, {47, 60, black}, {80, 90, line}, {60, 32, line}, {60, 33, black}} {
		if got := img.NRGBAAt(c.x, c.y); !near(got, c.want) {
			t.Errorf("grid pixel %d,%d = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	// The x label "16" is drawn just right of its line, in the top band.
	if !anyPixel(img, image.Rect(18, 0, 18+2*charW+2*padText, lineH+2*padText), func(c color.NRGBA) bool { return c.R > 200 && c.G > 200 }) {
		t.Error("no label text beside the x=16 line")
	}
	// Crop at 5,5 and zoom 4: the x=16 line lands at (16-5)*4 = 44.
	img, err = Apply(solid(96, 96, black), FrameOps{Crop: image.Rect(5, 5, 45, 45), Zoom: 4, Grid: 16}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.NRGBAAt(44, 120); !near(got, line) {
		t.Errorf("zoomed grid line at 44: %v", got)
	}
	if got := img.NRGBAAt(45, 120); got != black {
		t.Errorf("beside the zoomed grid line: %v", got)
	}
	if got := img.NRGBAAt(120, (32-5)*4); !near(got, line) {
		t.Errorf("zoomed y=32 line: %v", got)
	}
}

func anyPixel(img *image.NRGBA, r image.Rectangle, f func(color.NRGBA) bool) bool {
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if f(img.NRGBAAt(x, y)) {
				return true
			}
		}
	}
	return false
}

func TestSheetPixels(t *testing.T) {
	lim := DefaultLimits()
	tiles := []Tile{
		{Img: solid(40, 30, red), Label: "ep_000001 @1"},
		{Img: solid(40, 30, green), Label: "ep_000001 @2"},
		{Img: solid(40, 30, blue), Label: "ep_000002 @3"},
		{Missing: "no frame", Label: "ep_000003"},
	}
	img, err := RenderSheet(tiles, SheetLayout{TileW: 80}, &lim)
	if err != nil {
		t.Fatal(err)
	}
	// 2 columns of 80x60 tiles, each with a label bar beneath.
	const tw, th = 80, 60
	if w, h := gap+2*(tw+gap), gap+2*(th+labelH+gap); img.Rect.Dx() != w || img.Rect.Dy() != h {
		t.Fatalf("size %v, want %dx%d", img.Rect, w, h)
	}
	tile := func(i int) image.Point { return image.Pt(gap+(i%2)*(tw+gap), gap+(i/2)*(th+labelH+gap)) }
	for i, want := range []color.NRGBA{red, green, blue, colMissing} {
		o := tile(i)
		for _, p := range []image.Point{{1, 1}, {tw / 2, th / 4}, {tw - 1, th - 1}} {
			if got := img.NRGBAAt(o.X+p.X, o.Y+p.Y); got != want {
				t.Errorf("tile %d pixel %v = %v, want %v", i, p, got, want)
			}
		}
		bar := image.Rect(o.X, o.Y+th, o.X+tw, o.Y+th+labelH)
		if !anyPixel(img, bar, func(c color.NRGBA) bool { return c == colText }) {
			t.Errorf("tile %d: no label text", i)
		}
	}
	if got := img.NRGBAAt(0, 0); got != colBG {
		t.Errorf("background %v", got)
	}
	// Scaled down: a 160x120 frame in an 80-wide tile keeps its corners.
	q := solid(160, 120, red)
	fill(q, image.Rect(80, 60, 160, 120), blue)
	img, _ = RenderSheet([]Tile{{Img: q}}, SheetLayout{TileW: 80}, &lim)
	if got := img.NRGBAAt(gap+10, gap+10); got != red {
		t.Errorf("scaled tile top-left %v", got)
	}
	if got := img.NRGBAAt(gap+70, gap+50); got != blue {
		t.Errorf("scaled tile bottom-right %v", got)
	}
	// A title moves the tiles down by a label bar.
	img, _ = RenderSheet(tiles, SheetLayout{TileW: 80, Title: "ep_000001"}, &lim)
	if got := img.NRGBAAt(gap+1, labelH+gap+gap+1); got != red {
		t.Errorf("titled sheet, first tile: %v", got)
	}
}

func TestThenNowPixels(t *testing.T) {
	lim := DefaultLimits()
	img, err := RenderThenNow(solid(100, 60, red), solid(100, 60, blue), "THEN ep_000001", "NOW", "", &lim)
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect.Dx() != 204 || img.Rect.Dy() != 60 {
		t.Fatalf("size %v", img.Rect)
	}
	for _, c := range []struct {
		x, y int
		want color.NRGBA
	}{{80, 50, red}, {99, 59, red}, {102, 30, colBG}, {104, 59, blue}, {203, 30, blue}} {
		if got := img.NRGBAAt(c.x, c.y); got != c.want {
			t.Errorf("pixel %d,%d = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	if !anyPixel(img, image.Rect(0, 0, 100, labelH), func(c color.NRGBA) bool { return c == colText }) {
		t.Error("no THEN label")
	}
	if !anyPixel(img, image.Rect(104, 0, 204, labelH), func(c color.NRGBA) bool { return c == colText }) {
		t.Error("no NOW label")
	}
	// A question adds wrapped text lines beneath; a missing now is grey.
	img, err = RenderThenNow(solid(100, 60, red), nil, "THEN", "NOW", "is the door still open after the fire?", &lim)
	if err != nil {
		t.Fatal(err)
	}
	lines := len(wrapText("Q: is the door still open after the fire?", 204-2*padText))
	if img.Rect.Dy() != 60+lines*lineH+2*padText {
		t.Errorf("height %d with %d question line(s)", img.Rect.Dy(), lines)
	}
	if !anyPixel(img, image.Rect(0, 60, 204, img.Rect.Dy()), func(c color.NRGBA) bool { return c == colText }) {
		t.Error("no question text")
	}
	if got := img.NRGBAAt(150, 50); got != colMissing {
		t.Errorf("missing now panel: %v", got)
	}
}

// TestFastPathsMatchImageDraw: the NRGBA fill, blend and palette
// conversion give image/draw's pixels (within rounding).
func TestFastPathsMatchImageDraw(t *testing.T) {
	pal := color.Palette{red, color.NRGBA{10, 20, 30, 128}, blue}
	p := image.NewPaletted(image.Rect(3, 2, 9, 6), pal)
	for i := range p.Pix {
		p.Pix[i] = uint8(i % 3)
	}
	got := toNRGBA(p)
	want := image.NewNRGBA(image.Rect(0, 0, 6, 4))
	draw.Draw(want, want.Rect, p, p.Rect.Min, draw.Src)
	if d := pixelDiff(got, want); d != "" {
		t.Errorf("paletted to NRGBA: %s", d)
	}
	for _, base := range []color.NRGBA{black, {200, 100, 50, 255}, {200, 100, 50, 90}} {
		a, b := solid(5, 5, base), solid(5, 5, base)
		blend(a, image.Rect(1, 1, 4, 4), colGrid)
		draw.Draw(b, image.Rect(1, 1, 4, 4), image.NewUniform(colGrid), image.Point{}, draw.Over)
		for y := 0; y < 5; y++ {
			for x := 0; x < 5; x++ {
				if ga, gb := a.NRGBAAt(x, y), b.NRGBAAt(x, y); !near(ga, gb) {
					t.Errorf("blend over %v at %d,%d: %v, image/draw %v", base, x, y, ga, gb)
				}
			}
		}
	}
	a := solid(7, 3, black)
	fill(a, image.Rect(2, -1, 9, 2), green)
	if a.NRGBAAt(1, 0) != black || a.NRGBAAt(2, 0) != green || a.NRGBAAt(6, 1) != green || a.NRGBAAt(6, 2) != black {
		t.Errorf("fill clipped wrong")
	}
}
