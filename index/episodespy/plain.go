package episodespy

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
)

// plainRenderer is the fallback Renderer when none is given: unlabelled
// nearest-neighbour tiles, dark grey for a missing or unreadable frame.
// Package view draws the real, labelled images.
type plainRenderer struct{}

const tileW, tileH, sheetCols = 160, 90, 6

func (plainRenderer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	cols := min(len(frames), sheetCols)
	rows := (len(frames) + cols - 1) / max(cols, 1)
	dst := image.NewRGBA(image.Rect(0, 0, max(cols, 1)*tileW, max(rows, 1)*tileH))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.Black), image.Point{}, draw.Src)
	for i, f := range frames {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := image.Rect((i%cols)*tileW, (i/cols)*tileH, (i%cols+1)*tileW, (i/cols+1)*tileH)
		drawTile(dst, r.Inset(1), f)
	}
	var b bytes.Buffer
	err := png.Encode(&b, dst)
	return b.Bytes(), err
}

func (plainRenderer) ThenNow(ctx context.Context, then, now, thenLabel, nowLabel string) ([]byte, error) {
	dst := image.NewRGBA(image.Rect(0, 0, 2*2*tileW, 2*tileH))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.Black), image.Point{}, draw.Src)
	drawTile(dst, image.Rect(0, 0, 2*tileW, 2*tileH).Inset(1), then)
	drawTile(dst, image.Rect(2*tileW, 0, 4*tileW, 2*tileH).Inset(1), now)
	var b bytes.Buffer
	err := png.Encode(&b, dst)
	return b.Bytes(), err
}

func drawTile(dst *image.RGBA, r image.Rectangle, path string) {
	src := loadFrame(path)
	if src == nil {
		draw.Draw(dst, r, image.NewUniform(color.Gray{Y: 48}), image.Point{}, draw.Src)
		return
	}
	sb := src.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		sy := sb.Min.Y + (y-r.Min.Y)*sb.Dy()/r.Dy()
		for x := r.Min.X; x < r.Max.X; x++ {
			sx := sb.Min.X + (x-r.Min.X)*sb.Dx()/r.Dx()
			dst.Set(x, y, src.At(sx, sy))
		}
	}
}

func loadFrame(path string) image.Image {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil || cfg.Width*cfg.Height > 64<<20 {
		return nil
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil
	}
	img, _, err := image.Decode(f)
	if err != nil {
		return nil
	}
	return img
}
