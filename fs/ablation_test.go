package fs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAblationHides mounts a store under each ablation switch and checks
// that what the switch hides is neither listed nor found, and that the
// rest of the memory is still there.
func TestAblationHides(t *testing.T) {
	cases := []struct {
		name    string
		abl     Ablation
		hidden  []string
		present []string
	}{
		{"none", Ablation{},
			nil,
			[]string{"index.jsonl", "grid.jsonl", "q", "map", "now", "episodes/ep_000003/frames/000001.png", "episodes/ep_000003/observation/image.png", "mine/procedures/go_back.py"}},
		{"no-observations", Ablation{NoObservations: true},
			[]string{"map", "now", "episodes/ep_000003/frames", "episodes/ep_000003/frames/000001.png", "episodes/ep_000003/observation", "episodes/ep_000003/observation/image.png"},
			[]string{"index.jsonl", "q", "episodes/ep_000003/state/state.json", "mine/notes.md", "mine/procedures/go_back.py"}},
		{"flat", Ablation{Flat: true},
			[]string{"index.jsonl", "grid.jsonl", "q", "map"},
			[]string{"logs.txt", "episodes/ep_000003/frames/000001.png", "mine/notes.md", "mine/procedures/go_back.py"}},
		{"no-procedures", Ablation{NoProcedures: true},
			[]string{"mine/procedures", "mine/procedures/go_back.py"},
			[]string{"mine/notes.md", "index.jsonl", "q", "episodes/ep_000003/frames/000001.png"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixture(t)
			for _, f := range []string{"episodes/ep_000003/frames/000001.png", "episodes/ep_000003/observation/image.png", "mine/procedures/go_back.py"} {
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tm := mountStore(t, dir, Options{Ablation: tc.abl, Hooks: Hooks{Viewer: fakeViewer{}}})
			for _, rel := range tc.hidden {
				if _, err := os.Stat(tm.path(rel)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: stat gives %v, want it hidden (ENOENT)", rel, err)
				}
				if listed(t, tm.path(filepath.Dir(rel)), filepath.Base(rel)) {
					t.Errorf("%s is listed in its directory", rel)
				}
			}
			readme, err := os.ReadFile(tm.path("README.md"))
			if err != nil {
				t.Fatal(err)
			}
			if says := strings.Contains(string(readme), "## Hidden in this mount"); says != tc.abl.Active() {
				t.Errorf("README says what is hidden: %v, want %v", says, tc.abl.Active())
			}
			for _, rel := range tc.present {
				if _, err := os.Stat(tm.path(rel)); err != nil {
					t.Errorf("%s: %v, want it present", rel, err)
				}
			}
		})
	}
}

// listed reports whether dir's listing holds name (false when dir itself
// is absent).
func listed(t *testing.T, dir, name string) bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == name })
}
