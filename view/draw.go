package view

import (
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Text is drawn with basicfont's 7x13 face: ASCII only (other runes show
// as '?'), stateless and so safe for concurrent renders.
var face = basicfont.Face7x13

const (
	charW   = 7
	lineH   = 13
	ascent  = 11
	padText = 2
)

var (
	colBG       = color.NRGBA{16, 16, 16, 255}
	colLabelBG  = color.NRGBA{0, 0, 0, 190}
	colText     = color.NRGBA{255, 255, 255, 255}
	colGrid     = color.NRGBA{255, 230, 0, 150}
	colGridText = color.NRGBA{255, 240, 120, 255}
	colMissing  = color.NRGBA{60, 60, 60, 255}
)

// textWidth is the width of s in pixels.
func textWidth(s string) int { return len([]rune(s)) * charW }

// asciiOnly replaces what the face cannot draw.
func asciiOnly(s string) string {
	r := []rune(s)
	for i, c := range r {
		if c < 0x20 || c > 0x7e {
			r[i] = '?'
		}
	}
	return string(r)
}

// fitText cuts s to at most w pixels, ending in "..." when cut.
func fitText(s string, w int) string {
	s = asciiOnly(s)
	n := w / charW
	if len(s) <= n {
		return s
	}
	if n <= 3 {
		return s[:max(n, 0)]
	}
	return s[:n-3] + "..."
}

// drawText draws s with its top-left corner at (x, y).
func drawText(dst draw.Image, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: face,
		Dot: fixed.P(x, y+ascent)}
	d.DrawString(asciiOnly(s))
}

// drawLabel draws s on a translucent dark box whose top-left corner is
// (x, y); it returns the box.
func drawLabel(dst draw.Image, x, y int, s string, fg color.Color) image.Rectangle {
	r := image.Rect(x, y, x+textWidth(s)+2*padText, y+lineH+2*padText)
	draw.Draw(dst, r, image.NewUniform(colLabelBG), image.Point{}, draw.Over)
	drawText(dst, x+padText, y+padText, s, fg)
	return r
}

// fill paints r with c (no blending). image/draw has no fast path for an
// NRGBA destination, so NRGBA is filled here a row at a time.
func fill(dst draw.Image, r image.Rectangle, c color.Color) {
	m, ok := dst.(*image.NRGBA)
	if !ok {
		draw.Draw(dst, r, image.NewUniform(c), image.Point{}, draw.Src)
		return
	}
	r = r.Intersect(m.Rect)
	if r.Empty() {
		return
	}
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	px := [4]uint8{n.R, n.G, n.B, n.A}
	first := m.Pix[m.PixOffset(r.Min.X, r.Min.Y) : m.PixOffset(r.Max.X-1, r.Min.Y)+4]
	for i := 0; i < len(first); i += 4 {
		copy(first[i:i+4], px[:])
	}
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		copy(m.Pix[m.PixOffset(r.Min.X, y):], first)
	}
}

// blend paints r with c over what is there (Porter-Duff over, in
// non-premultiplied colour, done here for NRGBA as for fill).
func blend(dst draw.Image, r image.Rectangle, c color.Color) {
	m, ok := dst.(*image.NRGBA)
	if !ok {
		draw.Draw(dst, r, image.NewUniform(c), image.Point{}, draw.Over)
		return
	}
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	if n.A == 255 {
		fill(dst, r, n)
		return
	}
	r = r.Intersect(m.Rect)
	sa := uint32(n.A)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := m.Pix[m.PixOffset(r.Min.X, y) : m.PixOffset(r.Min.X, y)+4*r.Dx()]
		for i := 0; i < len(row); i += 4 {
			da := uint32(row[i+3])
			if da == 255 { // the common case: an opaque canvas
				row[i] = uint8((uint32(n.R)*sa + uint32(row[i])*(255-sa) + 127) / 255)
				row[i+1] = uint8((uint32(n.G)*sa + uint32(row[i+1])*(255-sa) + 127) / 255)
				row[i+2] = uint8((uint32(n.B)*sa + uint32(row[i+2])*(255-sa) + 127) / 255)
				continue
			}
			// out alpha (x255): sa*255 + da*(255-sa), colours weighted alike.
			oa := sa*255 + da*(255-sa)
			if oa == 0 {
				continue
			}
			mix := func(sc, dc uint8) uint8 { return uint8((uint32(sc)*sa*255 + uint32(dc)*da*(255-sa) + oa/2) / oa) }
			row[i], row[i+1], row[i+2], row[i+3] = mix(n.R, row[i]), mix(n.G, row[i+1]), mix(n.B, row[i+2]), uint8((oa+127)/255)
		}
	}
}

// wrapText splits s into lines of at most w pixels, at spaces when it can.
func wrapText(s string, w int) []string {
	s = asciiOnly(s)
	n := max(w/charW, 1)
	var lines []string
	for len(s) > n {
		cut := n
		for i := n; i > n/2; i-- {
			if s[i] == ' ' {
				cut = i
				break
			}
		}
		lines = append(lines, s[:cut])
		s = s[cut:]
		if len(s) > 0 && s[0] == ' ' {
			s = s[1:]
		}
	}
	return append(lines, s)
}
