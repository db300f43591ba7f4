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
	hurt := st(2, 3, 2)
	hurt.Health = 17
	stopped := hurt
	stopped.Step = 3
	for _, step := range []harness.Step{
		{Action: map[string]any{"forward": 1}, State: st(1, 1, 1), Frame: img},
		{Action: map[string]any{"forward": 1}, State: hurt, Events: []string{"hurt fall 3"}, Frame: img,
			Cells: []harness.Cell{{X: 3, Y: 9, Z: 5, Kind: "placed", Item: "dirt"}}},
		{Action: map[string]any{"forward": 1}, State: stopped, Events: []string{"open chest"}, Frame: img},
	} {
		if err := r.Step(step); err != nil {
			t.Fatal(err)
		}
	}
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

// TestDocsFollowTheCode: every field the recorder writes in an index row,
// in steps.jsonl (with the state under .state and the position under
// .state.pos) and in grid.jsonl, every grid kind, and every top-level
// entry of the mount, is documented in the mount's generated README.md,
// in the agent brief (AGENTS.md) and in docs/ (STORE.md for files,
// MOUNT.md for the mount); every entry of consolidate/ in README.md and
// AGENTS.md; and what they say of first_step and steps.jsonl holds.
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

	// grid.jsonl: every kind the recorder wrote, and every field.
	var kinds []string
	if _, err := episodes.ReadGrid(s.Path(episodes.GridFileName), 0, func(g episodes.GridRow) error {
		if !slices.Contains(kinds, g.Kind) {
			kinds = append(kinds, g.Kind)
		}
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	slices.Sort(kinds)
	if want := []string{"blocked", "hazard", "opened", "placed", "walked"}; !slices.Equal(kinds, want) {
		t.Fatalf("the recorder wrote grid kinds %v, want %v", kinds, want)
	}
	gridDocs := map[string]string{"README.md": readme, "AGENTS.md": brief, "docs/STORE.md": store}
	for what, keys := range map[string][]string{"grid kind": kinds, "grid.jsonl field": jsonKeys(t, s.Path(episodes.GridFileName), "")} {
		for _, k := range keys {
			for name, text := range gridDocs {
				if !field(text, k) {
					t.Errorf("%s %q is not documented in %s", what, k, name)
				}
			}
		}
	}

	// first_step is the state before the episode's first step: steps.jsonl
	// starts at first_step+1 and ends at last_step, as the docs say.
	var row episodes.Row
	if _, err := episodes.ReadRows(s.Path(episodes.IndexFileName), 0, func(r episodes.Row, _ episodes.Line) error {
		if r.ID == "ep_000001" {
			row = r
		}
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	var steps []int64
	if err := episodes.ScanSteps(ep, func(st episodes.Step) error { steps = append(steps, st.Step); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if len(steps) == 0 || steps[0] != row.FirstStep+1 || steps[len(steps)-1] != row.LastStep {
		t.Errorf("steps.jsonl runs %v, first_step %d, last_step %d: the docs say first_step+1 … last_step", steps, row.FirstStep, row.LastStep)
	}
	for name, text := range map[string]string{"README.md": readme, "AGENTS.md": brief, "docs/STORE.md": store} {
		if !strings.Contains(text, "`first_step`+1") || !strings.Contains(text, "`state/state.json`") && name != "docs/STORE.md" {
			t.Errorf("%s does not say steps.jsonl begins at `first_step`+1, after state/state.json", name)
		}
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
	cons, err := os.ReadDir(filepath.Join(mnt, "consolidate"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cons) < 5 {
		t.Fatalf("consolidate/ lists only %v", cons)
	}
	for _, e := range cons {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		if !strings.Contains(readme, "`"+n) || !strings.Contains(brief, "`"+n) {
			t.Errorf("consolidate/%s is not described in both README.md and AGENTS.md", n)
		}
	}
	for _, want := range []string{"mine/.check", "cited-by", "explain", "may be empty at first", "consolidate/", "consolidate/retrieve/", "steps A-B"} {
		if !strings.Contains(readme, want) || !strings.Contains(brief, want) {
			t.Errorf("README.md and AGENTS.md should both say %q", want)
		}
	}
}
