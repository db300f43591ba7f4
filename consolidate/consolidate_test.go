package consolidate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// row is a constructed index row.
func row(n int, kind string, x float64, extra string, tags ...string) string {
	t := `"` + strings.Join(tags, `", "`) + `"`
	if len(tags) == 0 {
		t = ""
	}
	return fmt.Sprintf(`{"action_kind": "%s", "first_step": %d, "id": "ep_%06d", "kind": "episode", "last_step": %d, "path": "episodes/ep_%06d", "summary": "", "tags": [%s], "x": %v, "y": 64.0, "z": 0.0%s}`,
		kind, n*10, n, n*10+10, n, t, x, extra)
}

func constructed(t *testing.T) *episodes.Store {
	t.Helper()
	s, err := episodes.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"action_kind": null, "first_step": 0, "id": "ep_000000", "kind": "initial", "last_step": 0, "path": "episodes/ep_000000", "summary": "initial state", "tags": ["initial"], "x": 0.0, "y": 64.0, "z": 0.0}`,
		row(1, "harvest_tree", 0, `, "inventory_delta": {"log": 2}`, "inventory_changed"),
		row(2, "harvest_tree", 0, `, "inventory_delta": {"log": 2}`, "inventory_changed"),
		row(3, "go_to", 0, "", "stuck"),
		row(4, "go_to", 0, "", "stuck"),
		row(5, "go_to", 0, "", "stuck"),
		row(6, "pillar_up", 0, `, "inventory_delta": {"dirt": -1}, "events": ["MILESTONE high_1 verified"]`, "milestone"),
		row(7, "go_to", 20, ""),
	}
	// Walks east, 10 blocks an episode; the last one goes nowhere.
	for n := 8; n <= 14; n++ {
		lines = append(lines, row(n, "go_to", float64(n-5)*10, ""))
	}
	if err := os.WriteFile(s.Path("index.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(s.Path("mine"), 0o755)
	os.WriteFile(s.Path("mine", "notes.md"), []byte("stuck at ep_000003 and episodes/ep_4/frames/000041.png; life 1 step 65; ep_000099 is gone\n"), 0o644)
	return s
}

func TestMonitorInduceCurate(t *testing.T) {
	s := constructed(t)
	cfg := DefaultConfig()
	fb, err := Monitor(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		fail     string
		success  bool
		progress float64
		stagnant bool
	}{
		{"", true, 0.267, false}, {"", true, 0.267, false},
		{FailNavStuck, false, 0, true}, {FailNavStuck, false, 0, true}, {FailNavStuck, false, 0, true},
		// pillar_up: |Δv|₁=1 → 0.4·0.5, milestone → 0.2; moved 20 to ep 7: Var=100 → 0.4·100/101
		{"", true, 0.796, false},
		// go_to 10 blocks: Var (10/2)² = 25 → 0.4·25/26
		{"", true, 0.385, false}, {"", true, 0.385, false}, {"", true, 0.385, false}, {"", true, 0.385, false},
		{"", true, 0.385, false}, {"", true, 0.385, false}, {"", true, 0.385, false},
		{FailNoEffect, false, 0, true},
	}
	if len(fb) != len(want) {
		t.Fatalf("%d feedback, want %d", len(fb), len(want))
	}
	for i, w := range want {
		f := fb[i]
		if f.Failure != w.fail || f.Success != w.success || f.Progress != w.progress || f.Stagnant != w.stagnant {
			t.Errorf("ep %d: got %s %v %v %v, want %+v", i+1, f.Failure, f.Success, f.Progress, f.Stagnant, w)
		}
	}
	acc, rej := Curate(Induce(fb, cfg), Known(s, fb))
	var names []string
	for _, c := range acc {
		names = append(names, c.Kind+":"+c.Name+":"+c.Verify+strings.Join(c.Repair, ""))
	}
	got := strings.Join(names, " ")
	for _, w := range []string{"skill:get_log:inv_ge log 4", "remedy:nav_stuck_after_go_to:pillar_upgo_to"} {
		if !strings.Contains(got, w) {
			t.Errorf("accepted %q lacks %q", got, w)
		}
	}
	var reasons []string
	for _, c := range rej {
		reasons = append(reasons, c.Reason)
	}
	if !strings.Contains(strings.Join(reasons, "|"), "no repair action") {
		t.Errorf("rejections %q: want the NO_EFFECT remedy without repair", reasons)
	}
	// A hand-made vague candidate and an unknown step are rejected with reasons.
	bad := []Candidate{
		{Kind: KindRemedy, Name: "x", FailureType: FailNavStuck, Trigger: map[string]string{"call": "go_to"}, Repair: []string{"try again"}, Support: []Ref{{1, "ep_000003", false}}, Confidence: 0.9},
		{Kind: KindSkill, Name: "y", Trigger: map[string]string{"colour": "red"}, Steps: []string{"go_to"}, Verify: "inv_ge log 1", Support: []Ref{{1, "ep_000003", false}}, Confidence: 0.9},
		{Kind: KindSkill, Name: "z", Trigger: map[string]string{"call": "go_to"}, Steps: []string{"teleport"}, Verify: "inv_ge log 1", Support: []Ref{{1, "ep_000003", false}}, Confidence: 0.9},
	}
	_, rej2 := Curate(bad, Known(s, fb))
	for i, w := range []string{"not specific", "not a state field", "not a known atom"} {
		if i >= len(rej2) || !strings.Contains(rej2[i].Reason, w) {
			t.Errorf("rejection %d: %+v, want %q", i, rej2, w)
		}
	}
	// Retrieval: the remedy for go_to/NAV_STUCK fits; a budget of 1 fits nothing.
	ctx, err := ParseContext("call=go_to,failure=NAV_STUCK,budget=400")
	if err != nil {
		t.Fatal(err)
	}
	if r := Retrieve(acc, ctx); len(r) != 1 || r[0].Kind != KindRemedy {
		t.Errorf("retrieve: %+v", r)
	}
	ctx.Budget = 1
	if r := Retrieve(acc, ctx); len(r) != 0 {
		t.Errorf("budget 1: %+v", r)
	}
}

func TestCitations(t *testing.T) {
	s := constructed(t)
	cs, err := Citations(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Dir+"|"+c.Missing)
	}
	want := "episodes/ep_000003||episodes/ep_000004||episodes/ep_000006||ep_000099 does not exist"
	if !strings.Contains(strings.Join(got, "|"), "episodes/ep_000003||episodes/ep_000004||episodes/ep_000006|") || !strings.Contains(strings.Join(got, "|"), "episode ep_000099 does not exist") {
		t.Errorf("citations %q, want like %q", got, want)
	}
	b, _ := CitedBy(s, "episodes/ep_000004")
	if string(b) != "mine/notes.md\n" {
		t.Errorf("cited-by %q", b)
	}
}

// TestRecordUntouched runs consolidation with --apply over a copy of each
// fixture and checks the record is byte-identical.
func TestRecordUntouched(t *testing.T) {
	for _, fx := range []string{"paper-run", "paper-run-diamond"} {
		dir := filepath.Join(t.TempDir(), "store")
		if out, err := exec.Command("cp", "-r", filepath.Join("..", "testdata", fx, "store"), dir).CombinedOutput(); err != nil {
			t.Fatal(err, string(out))
		}
		snap := func() map[string][]byte {
			m := map[string][]byte{}
			filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
				rel, _ := filepath.Rel(dir, p)
				if err == nil && !info.IsDir() && !strings.HasPrefix(rel, ".mfm") && !strings.HasPrefix(rel, "mine") {
					m[rel], _ = os.ReadFile(p)
				}
				return nil
			})
			return m
		}
		before := snap()
		s, _ := episodes.Open(dir)
		res, err := Compute(s, DefaultConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(s, res); err != nil {
			t.Fatal(err)
		}
		if _, err := Apply(s, res); err != nil {
			t.Fatal(err)
		}
		after := snap()
		if len(after) != len(before) {
			t.Errorf("%s: %d files before, %d after", fx, len(before), len(after))
		}
		for k, v := range before {
			if !bytes.Equal(v, after[k]) {
				t.Errorf("%s: %s changed", fx, k)
			}
		}
		tr := &Tree{Store: s, Config: DefaultConfig()}
		if _, _, err := tr.Open(context.Background(), "digest.md"); err != nil {
			t.Error(err)
		}
		if _, _, err := tr.Open(context.Background(), "nope"); err == nil {
			t.Error("missing path opened")
		}
	}
}

func FuzzParseCitations(f *testing.F) {
	f.Add([]byte("Step 1812 near (3165,66,1416) ep_000003 previous/life_2/episodes/ep_7/frames/000001.png life 2 step 5000"))
	f.Add([]byte("ada: agents/ada/episodes/ep_12, agents/ada/previous/life_2/episodes/ep_3 and my ep_4"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range ParseCitations(b) {
			if c.ID == "" && c.Step < 0 {
				t.Fatalf("empty citation %+v", c)
			}
			if c.ID != "" && (c.Step >= 0 || c.StepTo >= 0) || c.StepTo >= 0 && c.StepTo == c.Step {
				t.Fatalf("citation %+v: an id with steps, or a range of one step", c)
			}
		}
	})
}

func FuzzParseContext(f *testing.F) {
	f.Add("call=go_to,failure=NAV_STUCK,budget=300")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseContext(s)
		if err == nil && (c.Budget < 1 || c.Budget > 100000) {
			t.Fatalf("budget %d", c.Budget)
		}
	})
}

// TestResolverFollowsIndex: a Resolver reads only what was appended to an
// index since its last call, reads a replaced index whole, and sees a
// new note at once; its answers are those of a fresh Citations call.
func TestResolverFollowsIndex(t *testing.T) {
	s := constructed(t)
	rs := &Resolver{Store: s}
	same := func(when string) []Resolved {
		t.Helper()
		got, err := rs.Citations()
		if err != nil {
			t.Fatal(err)
		}
		want, err := Citations(s)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: resolver %+v, fresh %+v", when, got, want)
		}
		return got
	}
	dirOf99 := func(rs []Resolved) string {
		for _, r := range rs {
			if r.ID == "ep_000099" {
				return r.Dir
			}
		}
		return "?"
	}
	if d := dirOf99(same("start")); d != "" {
		t.Fatalf("ep_000099 resolved to %q before it exists", d)
	}
	index := s.Path("index.jsonl")
	cache := func() *lifeCache { return rs.lives[index] }
	readTo := cache().readTo

	// An appended row (and a torn tail, not yet a row).
	f, err := os.OpenFile(index, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(row(99, "go_to", 0, "") + "\n" + `{"id": "ep_0001`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if d := dirOf99(same("after an append")); d != "episodes/ep_000099" {
		t.Errorf("ep_000099 after its row was appended: %q", d)
	}
	if c := cache(); c.readTo <= readTo || len(c.li.ranges) != 16 {
		t.Errorf("after an append: read to %d (was %d), %d rows; want only the new row read", c.readTo, readTo, len(c.li.ranges))
	}

	// A replaced index (a new file renamed over it) is read whole.
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	tmp := index + ".tmp"
	if err := os.WriteFile(tmp, b[:bytes.Index(b, []byte(`{"action_kind": "go_to", "first_step": 99`))], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, index); err != nil {
		t.Fatal(err)
	}
	if d := dirOf99(same("after a replace")); d != "" {
		t.Errorf("ep_000099 after its row was dropped: %q", d)
	}

	// A new note counts at once.
	if err := os.WriteFile(s.Path("mine", "more.md"), []byte("see ep_000007\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := rs.CitedBy("episodes/ep_000007"); err != nil || string(b) != "mine/more.md\n" {
		t.Errorf("cited-by of ep_000007 after a new note: %q, %v", b, err)
	}
}

// TestStepCitations: "step S" names the episode that took step S, and a
// range "steps A-B" (read like an index row's first_step..last_step) every
// episode that took a step after A up to B; cited-by and in:mine follow.
// In the constructed store ep_N covers first_step N*10 .. last_step N*10+10.
func TestStepCitations(t *testing.T) {
	s := constructed(t)
	tests := []struct {
		note    string
		dirs    string // the directories named, space-separated
		missing string
	}{
		{"step 40", "ep_000003", ""},
		{"step 41", "ep_000004", ""},
		{"steps 41", "ep_000004", ""},
		{"steps 30-50", "ep_000003 ep_000004", ""},
		{"the dig (steps 40-50)", "ep_000004", ""},
		{"Steps 35..36", "ep_000003", ""},
		{"steps 40 to 41", "ep_000004", ""},
		{"steps 40 – 60", "ep_000004 ep_000005", ""},
		{"steps 31-31", "ep_000003", ""},
		{"life 1 steps 10-20", "ep_000001", ""},
		{"life 1, step 20..30", "ep_000002", ""},
		{"steps 0-0", "ep_000000", ""},
		{"steps 500-600", "", "no episode of life 1 covers a step after 500 up to 600"},
		{"steps 50-30", "", "steps 50-30 run backwards"},
		{"step 500", "", "no episode of life 1 covers step 500"},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			if err := os.WriteFile(s.Path("mine", "notes.md"), []byte("- "+tt.note+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cs, err := Citations(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 {
				t.Fatalf("%d citations %+v, want 1", len(cs), cs)
			}
			var dirs []string
			for _, d := range cs[0].Dirs {
				dirs = append(dirs, strings.TrimPrefix(d, "episodes/"))
			}
			if got := strings.Join(dirs, " "); got != tt.dirs || !strings.Contains(cs[0].Missing, tt.missing) || (tt.missing == "") != (cs[0].Missing == "") {
				t.Errorf("names %q, missing %q; want %q, %q", got, cs[0].Missing, tt.dirs, tt.missing)
			}
			for _, d := range cs[0].Dirs {
				if b, _ := CitedBy(s, d); string(b) != "mine/notes.md\n" {
					t.Errorf("%s/cited-by = %q", d, b)
				}
			}
			mine, err := (&Resolver{Store: s}).InMine()(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(mine) != len(cs[0].Dirs) {
				t.Errorf("in:mine cites %+v, want %v", mine, cs[0].Dirs)
			}
		})
	}
}

// TestCheckUnder: a report narrowed to a file or directory of mine/
// counts only its citations, and keeps the procedures only for
// mine/procedures or what holds it.
func TestCheckUnder(t *testing.T) {
	s := constructed(t)
	os.WriteFile(s.Path("mine", "other.md"), []byte("steps 500-600 and ep_000003\n"), 0o644)
	os.MkdirAll(s.Path("mine", "procedures"), 0o755)
	os.WriteFile(s.Path("mine", "procedures", "dig.sh"), []byte("#!/bin/sh\necho '{\"actions\": []}'\n"), 0o755)
	rep, err := Check(s, &Resolver{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		under                   string
		citations, missing, nod int
	}{
		{"", 6, 2, 1},
		{"mine", 6, 2, 1},
		{"mine/", 6, 2, 1},
		{"mine/notes.md", 4, 1, 0},
		{"mine/other.md", 2, 1, 0},
		{"mine/other", 0, 0, 0},
		{"mine/procedures", 0, 0, 1},
		{"mine/procedures/dig.sh", 0, 0, 1},
		{"mine/procedures/other.sh", 0, 0, 0},
	}
	for _, tt := range tests {
		r := rep.Under(tt.under)
		if r.Citations != tt.citations || len(r.Missing) != tt.missing || len(r.NoDescription) != tt.nod {
			t.Errorf("Under(%q): %d citations, %d missing, %d without description; want %d, %d, %d\n%s",
				tt.under, r.Citations, len(r.Missing), len(r.NoDescription), tt.citations, tt.missing, tt.nod, r.Text())
		}
	}
}

// TestOtherAgentCitations: a path under agents/ cites another agent's
// episode (a shared mount): it is neither missing nor one of this store's
// episodes (the bare id inside it is not read as this agent's), and the
// check counts it apart.
func TestOtherAgentCitations(t *testing.T) {
	s := constructed(t)
	note := "- ada's shaft (agents/ada/episodes/ep_000012, agents/Ada/previous/life_2/episodes/ep_7/frames/000003.png) matches mine, ep_000003\n"
	if err := os.WriteFile(s.Path("mine", "notes.md"), []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := Citations(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, fmt.Sprintf("%s %s %v %q", c.Agent, c.Dir, c.Dirs, c.Missing))
	}
	want := []string{
		`ada agents/ada/episodes/ep_000012 [] ""`,
		`ada agents/ada/previous/life_2/episodes/ep_000007 [] ""`,
		` episodes/ep_000003 [episodes/ep_000003] ""`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("citations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b, _ := CitedBy(s, "episodes/ep_000012"); len(b) != 0 {
		t.Errorf("ada's ep_000012 counted as this store's: cited-by %q", b)
	}
	r, err := Check(s, &Resolver{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if text := string(r.Text()); !strings.Contains(text, "3 citation(s), 0 to missing episodes, 2 to other agents' episodes (2 not checked: no shared mount here);") {
		t.Errorf("check:\n%s", text)
	}
	// On a shared mount they are checked against what it holds of ada.
	rs := &Resolver{Store: s}
	rs.SetOthers(func(agent string, life int, id string) (bool, bool) {
		return agent == "ada" && life == 0 && id == "ep_000012", agent == "ada"
	})
	r, err = Check(s, rs)
	if err != nil {
		t.Fatal(err)
	}
	text := string(r.Text())
	for _, want := range []string{
		`mine/notes.md:1: "agents/Ada/previous/life_2/episodes/ep_7/frames/000003.png": agent ada has no episode ep_000007 in life 2`,
		"3 citation(s), 1 to missing episodes, 2 to other agents' episodes;",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("check on a shared mount lacks %q:\n%s", want, text)
		}
	}
	os.WriteFile(s.Path("mine", "notes.md"), []byte("carl's agents/carl/episodes/ep_000001\n"), 0o644)
	if r, _ := Check(s, rs); !strings.Contains(string(r.Text()), "no agent carl shares memory here") {
		t.Errorf("an unknown agent:\n%s", r.Text())
	}
}
