package view

import (
	"fmt"
	"image"
	"math"

	xdraw "golang.org/x/image/draw"
)

// Tile is one frame of a contact sheet; a nil Img is drawn as a
// placeholder saying Missing.
type Tile struct {
	Img     *image.NRGBA
	Label   string
	Missing string // why there is no image, e.g. "no frame"
}

// SheetLayout sizes a contact sheet.
type SheetLayout struct {
	Cols  int    // 0: about square, at most 8
	TileW int    // tile width in pixels; 0: DefaultTileW
	Title string // optional line above the tiles
}

// DefaultTileW is a contact sheet's tile width when none is given.
const DefaultTileW = 240

const (
	gap    = 2
	labelH = lineH + 2*padText
)

// autoCols is the default column count for n tiles.
func autoCols(n int) int {
	return min(max(int(math.Ceil(math.Sqrt(float64(n)))), 1), 8)
}

// sheetSize returns the sheet's geometry for n tiles.
func sheetSize(n int, l SheetLayout, aspect float64) (cols, rows, tw, th, top, w, h int) {
	cols = l.Cols
	if cols <= 0 {
		cols = autoCols(n)
	}
	cols = min(cols, max(n, 1))
	rows = (n + cols - 1) / cols
	tw = l.TileW
	if tw <= 0 {
		tw = DefaultTileW
	}
	th = max(int(math.Round(float64(tw)*aspect)), 1)
	if l.Title != "" {
		top = labelH + gap
	}
	w = gap + cols*(tw+gap)
	h = top + gap + rows*(th+labelH+gap)
	return
}

// RenderSheet tiles frames into a labelled contact sheet: each tile keeps
// its frame's aspect ratio, with its label in a bar beneath.
func RenderSheet(tiles []Tile, l SheetLayout, lim *Limits) (*image.NRGBA, error) {
	if len(tiles) == 0 {
		return nil, fmt.Errorf("contact sheet: no frames")
	}
	if len(tiles) > lim.MaxTiles {
		return nil, fmt.Errorf("contact sheet: %d frames, at most %d tiles: choose fewer (a step range)", len(tiles), lim.MaxTiles)
	}
	aspect := 0.75
	for _, t := range tiles {
		if t.Img != nil {
			aspect = float64(t.Img.Rect.Dy()) / float64(t.Img.Rect.Dx())
			break
		}
	}
	cols, _, tw, th, top, w, h := sheetSize(len(tiles), l, aspect)
	if err := checkOut(w, h, lim); err != nil {
		return nil, fmt.Errorf("contact sheet: %w", err)
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	fill(dst, dst.Rect, colBG)
	if l.Title != "" {
		drawText(dst, gap+padText, gap+padText, fitText(l.Title, w-2*gap), colText)
	}
	for i, t := range tiles {
		x := gap + (i%cols)*(tw+gap)
		y := top + gap + (i/cols)*(th+labelH+gap)
		cell := image.Rect(x, y, x+tw, y+th)
		if t.Img == nil {
			fill(dst, cell, colMissing)
			msg := fitText(t.Missing, tw-4)
			drawText(dst, x+(tw-textWidth(msg))/2, y+(th-lineH)/2, msg, colText)
		} else {
			fitInto(dst, cell, t.Img)
		}
		drawText(dst, x+padText, y+th+padText, fitText(t.Label, tw-2*padText), colText)
	}
	return dst, nil
}

// fitInto scales src into r keeping its aspect ratio, centred: whole-factor
// nearest-neighbour when it grows, bilinear when it shrinks.
func fitInto(dst *image.NRGBA, r image.Rectangle, src *image.NRGBA) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	k := math.Min(float64(r.Dx())/float64(sw), float64(r.Dy())/float64(sh))
	w, h := max(int(float64(sw)*k), 1), max(int(float64(sh)*k), 1)
	x, y := r.Min.X+(r.Dx()-w)/2, r.Min.Y+(r.Dy()-h)/2
	fill(dst, r, colMissing)
	t := image.Rect(x, y, x+w, y+h)
	if w == sw && h == sh {
		copyNRGBA(dst, t.Min, src)
		return
	}
	// x/image/draw's fast paths write *image.RGBA: scale into one, then
	// copy it in.
	tmp := image.NewRGBA(image.Rect(0, 0, w, h))
	if w >= sw {
		xdraw.NearestNeighbor.Scale(tmp, tmp.Rect, src, src.Rect, xdraw.Src, nil)
	} else {
		xdraw.ApproxBiLinear.Scale(tmp, tmp.Rect, src, src.Rect, xdraw.Src, nil)
	}
	copyRGBA(dst, t.Min, tmp)
}

// copyNRGBA copies src into dst with src's top-left corner at at.
func copyNRGBA(dst *image.NRGBA, at image.Point, src *image.NRGBA) {
	r := image.Rectangle{at, at.Add(src.Rect.Size())}.Intersect(dst.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		so := src.PixOffset(src.Rect.Min.X+r.Min.X-at.X, src.Rect.Min.Y+y-at.Y)
		copy(dst.Pix[dst.PixOffset(r.Min.X, y):dst.PixOffset(r.Min.X, y)+4*r.Dx()], src.Pix[so:so+4*r.Dx()])
	}
}

// copyRGBA copies the premultiplied src into dst with src's top-left
// corner at at, un-premultiplying where it is not opaque.
func copyRGBA(dst *image.NRGBA, at image.Point, src *image.RGBA) {
	r := image.Rectangle{at, at.Add(src.Rect.Size())}.Intersect(dst.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		so := src.PixOffset(src.Rect.Min.X+r.Min.X-at.X, src.Rect.Min.Y+y-at.Y)
		s := src.Pix[so : so+4*r.Dx()]
		d := dst.Pix[dst.PixOffset(r.Min.X, y) : dst.PixOffset(r.Min.X, y)+4*r.Dx()]
		copy(d, s)
		for i := 0; i < len(d); i += 4 {
			if a := uint32(d[i+3]); a != 255 && a != 0 {
				d[i], d[i+1], d[i+2] = uint8(uint32(d[i])*255/a), uint8(uint32(d[i+1])*255/a), uint8(uint32(d[i+2])*255/a)
			}
		}
	}
}

// RenderThenNow puts then beside now (scaled to then's size when they
// differ), each labelled in its top-left corner, with question written
// beneath when given. A nil image is a placeholder saying so.
func RenderThenNow(then, now *image.NRGBA, thenLabel, nowLabel, question string, lim *Limits) (*image.NRGBA, error) {
	ref := then
	if ref == nil {
		ref = now
	}
	pw, ph := 320, 240
	if ref != nil {
		pw, ph = ref.Rect.Dx(), ref.Rect.Dy()
	}
	const mid = 4
	w := 2*pw + mid
	var qlines []string
	if question != "" {
		qlines = wrapText("Q: "+question, w-2*padText)
	}
	h := ph
	if len(qlines) > 0 {
		h += len(qlines)*lineH + 2*padText
	}
	if err := checkOut(w, h, lim); err != nil {
		return nil, fmt.Errorf("then-and-now: %w", err)
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	fill(dst, dst.Rect, colBG)
	panel := func(img *image.NRGBA, r image.Rectangle, label, missing string) {
		if img == nil {
			fill(dst, r, colMissing)
			drawText(dst, r.Min.X+(r.Dx()-textWidth(missing))/2, r.Min.Y+(r.Dy()-lineH)/2, missing, colText)
		} else if img.Rect.Dx() == r.Dx() && img.Rect.Dy() == r.Dy() {
			copyNRGBA(dst, r.Min, img)
		} else {
			fitInto(dst, r, img)
		}
		drawLabel(dst, r.Min.X, r.Min.Y, fitText(label, r.Dx()-2*padText), colText)
	}
	panel(then, image.Rect(0, 0, pw, ph), thenLabel, "no frame then")
	panel(now, image.Rect(pw+mid, 0, w, ph), nowLabel, "no frame now")
	for i, l := range qlines {
		drawText(dst, padText, ph+padText+i*lineH, l, colText)
	}
	return dst, nil
}
