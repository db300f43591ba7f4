package harness

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
)

// frame640 is a 640x360 frame with some structure, so PNG compression has
// work to do.
func frame640() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 640, 360))
	for y := 0; y < 360; y++ {
		for x := 0; x < 640; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 7 / 5), uint8(y * 3), uint8((x ^ y) & 0xff), 255})
		}
	}
	return img
}

func benchRecord(b *testing.B, frames bool, steps int) {
	s := newStore(b)
	r, err := NewRecorder(s, Options{Frames: frames})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	img := frame640()
	r.Initial(st(0, 0, 64, 0), img)
	step := int64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Begin(Call{Kind: "go_to", Args: []Arg{{"x", float64(i)}}})
		for j := 0; j < steps; j++ {
			step++
			if err := r.Step(Step{Action: map[string]any{"forward": 1}, State: st(step, float64(step)*0.2, 64, 0), Frame: img}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.End(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
}

// BenchmarkRecordEpisode: one episode of 10 steps, each with a 640x360
// image.Image frame (PNG-encoded by the recorder, now/ updated per step);
// only the first frame is kept (observation/image.png).
func BenchmarkRecordEpisode(b *testing.B) { benchRecord(b, false, 10) }

// BenchmarkRecordEpisodeAllFrames keeps all 10 frames (frames/ +
// steps.jsonl).
func BenchmarkRecordEpisodeAllFrames(b *testing.B) { benchRecord(b, true, 10) }

// BenchmarkBaselinePlainFiles is the baseline: per episode, encode the
// same 10 frames to PNG and write one of them plus three small JSON files
// with os.WriteFile (no temp dir, no fsync, no index).
func BenchmarkBaselinePlainFiles(b *testing.B) {
	dir := b.TempDir()
	img := frame640()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := filepath.Join(dir, "ep", string(rune('a'+i%26)))
		os.MkdirAll(d, 0o755)
		var first []byte
		for j := 0; j < 10; j++ {
			p, _ := encodePNG(img)
			if j == 0 {
				first = p
			}
		}
		os.WriteFile(filepath.Join(d, "image.png"), first, 0o644)
		for _, f := range []string{"state.json", "action.json", "outcome.json"} {
			os.WriteFile(filepath.Join(d, f), []byte(`{"x": 1.0}`), 0o644)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
}
