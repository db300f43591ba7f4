package view

import (
	"context"
	"errors"
	"image"
	"os"
)

// Files renders contact sheets and then-and-now pairs from frame files
// named by plain paths (the paper's tools/episodes.py --sheet and
// --then-now, package index/episodespy's Renderer). It decodes under the
// same limits and keeps its own decoded-frame cache.
type Files struct {
	lim  Limits
	fr   *frames
	pool *pool
}

// NewFiles returns a Files renderer with limits lim.
func NewFiles(lim Limits) *Files {
	f := &Files{lim: lim, pool: newPool(lim.Workers, lim.RenderTimeout)}
	f.fr = newFrames(&f.lim, os.Open)
	return f
}

// tileFor loads one frame as a tile; a missing or unreadable frame is a
// placeholder saying why.
func tileFor(fr *frames, name, label string) Tile {
	img, _, err := fr.load(name)
	if err != nil {
		why := "unreadable frame"
		if errors.Is(err, ErrNoFrame) {
			why = "no frame"
		}
		return Tile{Label: label, Missing: why}
	}
	return Tile{Img: img, Label: label}
}

// Sheet tiles frames (paths) into a PNG contact sheet, tile i labelled
// labels[i]; missing or unreadable frames are grey placeholders.
func (f *Files) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	return f.pool.run(ctx, "contact sheet", func() ([]byte, error) {
		tiles := make([]Tile, len(frames))
		for i, name := range frames {
			tiles[i] = tileFor(f.fr, name, at(labels, i))
		}
		img, err := RenderSheet(tiles, SheetLayout{}, &f.lim)
		if err != nil {
			return nil, err
		}
		return Encode(img, PNG)
	})
}

// ThenNow renders the frame then beside the frame now as a PNG.
func (f *Files) ThenNow(ctx context.Context, then, now, thenLabel, nowLabel string) ([]byte, error) {
	return f.ThenNowQ(ctx, then, now, thenLabel, nowLabel, "")
}

// ThenNowQ is ThenNow with the question the pair answers written beneath.
func (f *Files) ThenNowQ(ctx context.Context, then, now, thenLabel, nowLabel, question string) ([]byte, error) {
	return f.pool.run(ctx, "then-and-now", func() ([]byte, error) {
		load := func(name string) *image.NRGBA {
			img, _, err := f.fr.load(name)
			if err != nil {
				return nil
			}
			return img
		}
		img, err := RenderThenNow(load(then), load(now), thenLabel, nowLabel, cutQuestion(question, f.lim.MaxQuestion), &f.lim)
		if err != nil {
			return nil, err
		}
		return Encode(img, PNG)
	})
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func cutQuestion(q string, n int) string {
	if len(q) > n {
		return q[:n] + "..."
	}
	return q
}
