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
