package view

import (
	"fmt"
	"image"
	"strconv"

	"github.com/disintegration/imaging"
)

// FrameOps are the operations of a frame view, always applied in this
// order: crop (in frame pixels), zoom, grid overlay, then-and-now.
type FrameOps struct {
	Crop     image.Rectangle // empty: the whole frame
	Zoom     int             // 0 or 1: no zoom
	Smooth   bool            // zoom with Lanczos instead of nearest-neighbour
	Grid     int             // 0: no grid; -1: default spacing; else spacing in frame pixels
	ThenNow  bool            // put the result beside the same view of now/frame.png
	Question string          // written under a then-and-now
}

// geom maps output pixels back to frame pixels: frame = off + out/scale.
type geom struct {
	off   image.Point
	scale int
}

// checkOut refuses an output of w x h beyond the limits.
func checkOut(w, h int, lim *Limits) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("empty output %dx%d", w, h)
	}
	if w > lim.MaxOutSide || h > lim.MaxOutSide || w*h > lim.MaxOutPixels {
		return fmt.Errorf("output %dx%d is larger than allowed (%d per side, %d pixels): crop a smaller region or zoom less",
			w, h, lim.MaxOutSide, lim.MaxOutPixels)
	}
	return nil
}

// applyFrame runs crop, zoom and grid on src (never modified).
func applyFrame(src *image.NRGBA, op FrameOps, lim *Limits) (*image.NRGBA, geom, error) {
	g := geom{scale: 1}
	img := src
	b := src.Bounds()
	if !op.Crop.Empty() {
		if !op.Crop.In(b) {
			return nil, g, fmt.Errorf("crop=%d,%d,%d,%d does not lie inside the %dx%d frame",
				op.Crop.Min.X, op.Crop.Min.Y, op.Crop.Dx(), op.Crop.Dy(), b.Dx(), b.Dy())
		}
		img = imaging.Crop(img, op.Crop)
		g.off = op.Crop.Min
	}
	if op.Zoom > 1 {
		if op.Zoom > lim.MaxZoom {
			return nil, g, fmt.Errorf("zoom=%d: at most %d", op.Zoom, lim.MaxZoom)
		}
		w, h := img.Rect.Dx()*op.Zoom, img.Rect.Dy()*op.Zoom
		if err := checkOut(w, h, lim); err != nil {
			return nil, g, err
		}
		if op.Smooth {
			img = imaging.Resize(img, w, h, imaging.Lanczos)
		} else {
			img = zoomNearest(img, op.Zoom)
		}
		g.scale = op.Zoom
	} else if err := checkOut(img.Rect.Dx(), img.Rect.Dy(), lim); err != nil {
		return nil, g, err
	}
	if op.Grid != 0 {
		if img == src {
			img = imaging.Clone(src)
		}
		drawGrid(img, g, op.Grid)
	}
	return img, g, nil
}

// zoomNearest magnifies by a whole factor, each pixel becoming an n x n
// block (the same pixels as ImageMagick's -sample).
func zoomNearest(src *image.NRGBA, n int) *image.NRGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dst := image.NewNRGBA(image.Rect(0, 0, sw*n, sh*n))
	for y := 0; y < sh; y++ {
		srow := src.Pix[y*src.Stride : y*src.Stride+sw*4]
		drow := dst.Pix[y*n*dst.Stride : y*n*dst.Stride+sw*n*4]
		for x := 0; x < sw; x++ {
			p := srow[x*4 : x*4+4 : x*4+4]
			d := drow[x*n*4 : (x+1)*n*4]
			for k := 0; k < n; k++ {
				copy(d[k*4:k*4+4], p)
			}
		}
		for k := 1; k < n; k++ {
			copy(dst.Pix[(y*n+k)*dst.Stride:], drow)
		}
	}
	return dst
}

// defaultGridStep picks the smallest step (frame pixels) whose lines are at
// least 40 output pixels apart.
func defaultGridStep(scale int) int {
	for _, s := range []int{8, 16, 32, 64, 128} {
		if s*scale >= 40 {
			return s
		}
	}
	return 256
}

// drawGrid draws lines every step frame pixels (step -1: the default),
// labelled with their frame coordinates along the top and left edges.
func drawGrid(img *image.NRGBA, g geom, step int) {
	if step < 0 {
		step = defaultGridStep(g.scale)
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	first := func(off int) int { return (off + step - 1) / step * step } // first multiple >= off
	// Vertical lines and x labels.
	lastLabel := -1 << 30
	for fx := first(g.off.X); ; fx += step {
		ox := (fx - g.off.X) * g.scale
		if ox >= w {
			break
		}
		blend(img, image.Rect(ox, 0, ox+1, h), colGrid)
		s := strconv.Itoa(fx)
		if ox+2 >= lastLabel && ox+2+textWidth(s)+2*padText <= w {
			r := drawLabel(img, ox+2, 0, s, colGridText)
			lastLabel = r.Max.X + 2
		}
	}
	lastLabel = -1 << 30
	for fy := first(g.off.Y); ; fy += step {
		oy := (fy - g.off.Y) * g.scale
		if oy >= h {
			break
		}
		blend(img, image.Rect(0, oy, w, oy+1), colGrid)
		s := strconv.Itoa(fy)
		top := max(oy+2, lineH+2*padText+1) // below the x labels
		if top >= lastLabel && top+lineH+2*padText <= h && oy > 0 {
			r := drawLabel(img, 0, top, s, colGridText)
			lastLabel = r.Max.Y + 2
		}
	}
}

// Apply runs the crop, zoom and grid of op on src (never modified; a
// then-and-now needs two frames: see RenderThenNow).
func Apply(src *image.NRGBA, op FrameOps, lim *Limits) (*image.NRGBA, error) {
	img, _, err := applyFrame(src, op, lim)
	return img, err
}
