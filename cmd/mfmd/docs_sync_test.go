package main

import (
	"bufio"
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
	"github.com/mfm-project/mfm/harness"
)

// recordOne records an initial and one ordinary episode, with frames,
// notes, events, an inventory change and milestones, so that every field
// the recorder can write is written.
func recordOne(t *testing.T) *episodes.Store {
	t.Helper()
	s, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := harness.NewRecorder(s, harness.Options{Frames: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	st := func(step int64, x float64, inv int) harness.State {
		return harness.State{Step: step, X: x, Y: 10, Z: 5, Health: 20, Inventory: map[string]int{"dirt": inv}, Milestones: []string{"wood_1"}}
	}
	if _, err := r.Initial(st(0, 0, 1), img); err != nil {
		t.Fatal(err)
	}
	r.Begin(harness.Call{Kind: "go_to", Args: []harness.Arg{{Name: "x", Value: 3}}, Budget: 10})
	r.Step(harness.Step{Action: map[string]any{"forward": 1}, State: st(1, 1, 1), Frame: img})
	r.Step(harness.Step{Action: map[string]any{"forward": 1}, State: st(2, 3, 2), Events: []string{"hurt fall 3"}, Frame: img})
	r.Note("go_to: arrived")
	if _, err := r.End(); err != nil {
		t.Fatal(err)
	}
	return s
}

// jsonKeys are the keys of the first JSON object in each line of file
// (all lines' keys together), and of the object under sub in them.
func jsonKeys(t *testing.T, file, sub string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, part := range strings.Split(sub, ".") {
			if part == "" {
				continue
			}
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(m[part], &inner); err != nil {
				t.Fatalf("%s: .%s: %v", file, sub, err)
			}
			m = inner
		}
		for k := range m {
			seen[k] = true
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestDocsFollowTheCode: every field the recorder writes in an index row
// and in steps.jsonl (with the state under .state and the position under
// .state.pos), and every top-level entry of the mount, is documented in
// the mount's generated README.md, in the agent brief (AGENTS.md) and in
// docs/ (STORE.md for files, MOUNT.md for the mount).
func TestDocsFollowTheCode(t *testing.T) {
	canMountView(t)
	s := recordOne(t)
	mnt := mountForTest(t, s, filepath.Join(t.TempDir(), "mnt"))
	readmeB, err := os.ReadFile(filepath.Join(mnt, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, brief, store, mount := string(readmeB), content.AgentBrief, doc("STORE.md"), doc("MOUNT.md")
	field := func(text, k string) bool {
		return strings.Contains(text, "`"+k+"`") || strings.Contains(text, `"`+k+`"`) || strings.Contains(text, "`"+k+" ") || strings.Contains(text, " "+k+"`")
	}
	ep := s.Path("episodes", "ep_000001")
	checks := []struct {
		what   string
		keys   []string
		docs   map[string]string
		prefix string
	}{
		{"index row field", jsonKeys(t, s.Path(episodes.IndexFileName), ""), map[string]string{"README.md": readme, "AGENTS.md": brief, "docs/STORE.md": store}, ""},
		{"steps.jsonl field", jsonKeys(t, filepath.Join(ep, "steps.jsonl"), ""), map[string]string{"README.md": readme, "AGENTS.md": brief, "docs/STORE.md": store}, ""},
		{"steps.jsonl .state field", jsonKeys(t, filepath.Join(ep, "steps.jsonl"), "state"), map[string]string{"README.md": readme, "docs/STORE.md": store}, ".state."},
		{"steps.jsonl .state.pos field", jsonKeys(t, filepath.Join(ep, "steps.jsonl"), "state.pos"), map[string]string{"README.md": readme, "docs/STORE.md": store}, ""},
	}
	for _, c := range checks {
		if len(c.keys) < 3 {
			t.Fatalf("%s: only %v recorded", c.what, c.keys)
		}
		for _, k := range c.keys {
			for name, text := range c.docs {
				if !field(text, k) && (c.prefix == "" || !strings.Contains(text, c.prefix+k)) {
					t.Errorf("%s %q is not documented in %s", c.what, k, name)
				}
			}
		}
	}
	if !strings.Contains(readme, "`.state.pos`") || !strings.Contains(brief, ".state.pos") {
		t.Error("README.md or AGENTS.md does not say the position is under .state.pos in steps.jsonl")
	}

	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{".errors"} // served, not listed
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) < 10 {
		t.Fatalf("the mount lists only %v", names)
	}
	for _, n := range names {
		if !strings.Contains(readme, "`"+n) {
			t.Errorf("top-level entry %q is not in the generated README.md", n)
		}
		if !strings.Contains(brief, "/mfm/"+n) {
			t.Errorf("top-level entry %q is not in AGENTS.md (as /mfm/%s)", n, n)
		}
		if !strings.Contains(mount, "`"+n) {
			t.Errorf("top-level entry %q is not in docs/MOUNT.md", n)
		}
	}
	for _, want := range []string{"mine/.check", "cited-by", "explain", "may be empty at first", "consolidate/"} {
		if !strings.Contains(readme, want) || !strings.Contains(brief, want) {
			t.Errorf("README.md and AGENTS.md should both say %q", want)
		}
	}
}
