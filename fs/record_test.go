package fs

import (
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// testRecorder appends episodes to a store the way the harness does,
// while it is mounted.
type testRecorder struct {
	t    testing.TB
	r    *harness.Recorder
	step int64
	img  image.Image
}

func newTestRecorder(t testing.TB, s *episodes.Store, frames bool) *testRecorder {
	t.Helper()
	r, err := harness.NewRecorder(s, harness.Options{Frames: frames})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	img.Set(1, 1, color.RGBA{200, 30, 30, 255})
	tr := &testRecorder{t: t, r: r, img: img, step: 100000}
	return tr
}

// episode records one episode of one step and returns its row.
func (tr *testRecorder) episode(note string) episodes.Row {
	tr.t.Helper()
	if err := tr.r.Begin(harness.Call{Kind: "go_to", Args: []harness.Arg{{Name: "x", Value: tr.step}}}); err != nil {
		tr.t.Fatal(err)
	}
	tr.step++
	st := harness.State{Step: tr.step, X: float64(tr.step%97) + 0.5, Y: 64, Z: 0.5, Health: 20, Inventory: map[string]int{}}
	if err := tr.r.Step(harness.Step{Action: map[string]any{"forward": 1}, State: st, Frame: tr.img}); err != nil {
		tr.t.Fatal(err)
	}
	if note != "" {
		tr.r.Note(note)
	}
	row, err := tr.r.End()
	if err != nil {
		tr.t.Fatal(err)
	}
	return row
}

// treeHash hashes every path, mode, link target and file content below
// dir, skipping the daemon's own .mfm/ (the access log) and the writer lock.
func treeHash(t testing.TB, dir string) (string, []string) {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".mfm" || strings.HasPrefix(rel, ".mfm/") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := rel + " " + fi.Mode().String()
		switch {
		case fi.Mode()&iofs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			line += " -> " + l
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			line += " " + hex.EncodeToString(h[:8])
			line += " mtime=" + fi.ModTime().String()
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:]), lines
}

// addPreviousLife freezes a copy of the store's first n episodes as
// previous/life_<life>/ (same layout as a real life change).
func addPreviousLife(t testing.TB, store string, life, n int) {
	t.Helper()
	lifeDir := filepath.Join(store, episodes.PreviousDir, episodes.LifeName(life))
	if err := os.MkdirAll(filepath.Join(lifeDir, episodes.EpisodesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(store, episodes.IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(idx), "\n")
	var keep []string
	for _, l := range lines[:min(n, len(lines))] {
		r, err := episodes.ParseRow([]byte(strings.TrimSpace(l)))
		if err != nil {
			continue
		}
		keep = append(keep, l)
		copyTree(t, filepath.Join(store, r.Path), filepath.Join(lifeDir, r.Path))
	}
	for name, data := range map[string]string{
		episodes.IndexFileName: strings.Join(keep, ""),
		episodes.LogFileName:   "[NOTE] an earlier life\n",
		episodes.GridFileName:  `{"cell": [1, 64, 1], "kind": "walked", "step": 1}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(lifeDir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
