package view

import (
	"context"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

const benchView = "episodes/ep_000011/observation/image@crop=64,48,64,48@zoom=4.png"

func benchViewer(b *testing.B) *Viewer {
	s, err := episodes.Open("../examples/runs/luanti-forest/store")
	if err != nil {
		b.Skip(err)
	}
	v, err := New(s, DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	return v
}

// BenchmarkCropZoomCold decodes, crops, zooms and encodes every time.
func BenchmarkCropZoomCold(b *testing.B) {
	lim := DefaultLimits()
	lim.FrameCacheBytes, lim.RenderCacheBytes = 1, 1
	s, _ := episodes.Open("../examples/runs/luanti-forest/store")
	v, err := New(s, lim)
	if err != nil {
		b.Skip(err)
	}
	defer v.Close()
	for b.Loop() {
		if _, _, err := v.View(context.Background(), benchView); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCropZoomCached serves the rendered bytes from the cache.
func BenchmarkCropZoomCached(b *testing.B) {
	v := benchViewer(b)
	v.View(context.Background(), benchView)
	for b.Loop() {
		if _, _, err := v.View(context.Background(), benchView); err != nil {
			b.Fatal(err)
		}
	}
}

// sheet16 is 16 observation frames of the Luanti run and their labels.
func sheet16() (frames, labels []string) {
	for i := 1; i <= 16; i++ {
		id := episodes.EpisodeID(int64(i))
		frames = append(frames, "episodes/"+id+"/observation/image.png")
		labels = append(labels, id)
	}
	return
}

// BenchmarkSheet16Cold decodes 16 frames and tiles them into a labelled
// 4x4 contact sheet (240 px tiles), PNG, caches off.
func BenchmarkSheet16Cold(b *testing.B) {
	lim := DefaultLimits()
	lim.FrameCacheBytes, lim.RenderCacheBytes = 1, 1
	s, err := episodes.Open("../examples/runs/luanti-forest/store")
	if err != nil {
		b.Skip(err)
	}
	v, err := New(s, lim)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	frames, labels := sheet16()
	for b.Loop() {
		if _, err := v.Sheet(context.Background(), frames, labels); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSheet16Cached serves the same sheet from the rendered cache
// (16 stats of the sources + an LRU hit).
func BenchmarkSheet16Cached(b *testing.B) {
	v := benchViewer(b)
	frames, labels := sheet16()
	v.Sheet(context.Background(), frames, labels)
	for b.Loop() {
		if _, err := v.Sheet(context.Background(), frames, labels); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMapHere renders map/here.png and map/here.txt of the Luanti
// grid (1381 rows), render cache off (the followed grid stays parsed).
func BenchmarkMapHere(b *testing.B) {
	lim := DefaultLimits()
	lim.RenderCacheBytes = 1
	s, err := episodes.Open("../examples/runs/luanti-forest/store")
	if err != nil {
		b.Skip(err)
	}
	v, err := New(s, lim)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	for _, name := range []string{"map/here.png", "map/here.txt"} {
		b.Run(name[4:], func(b *testing.B) {
			for b.Loop() {
				if _, _, err := v.View(context.Background(), name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
