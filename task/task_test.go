package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/harness"
)

func TestParsePredicate(t *testing.T) {
	cases := []struct {
		src  string
		want []Clause
		err  string
	}{
		{src: "tree>=1", want: []Clause{{Kind: ClauseInv, Name: "tree", Op: ">=", Value: 1}}},
		{src: "inv:depth >= 2", want: []Clause{{Kind: ClauseInv, Name: "depth", Op: ">=", Value: 2}}},
		{src: "crafted:wood=4", want: []Clause{{Kind: ClauseCrafted, Name: "wood", Op: "==", Value: 4}}},
		{src: "depth>=8 and alive", want: []Clause{{Kind: ClauseDepth, Name: "depth", Op: ">=", Value: 8}, {Kind: ClauseAlive}}},
		{src: "y<-5.5", want: []Clause{{Kind: ClauseCoord, Name: "y", Op: "<", Value: -5.5}}},
		{src: "near -70,12,189 r=4", want: []Clause{{Kind: ClauseNear, X: -70, Y: 12, Z: 189, R: 4}}},
		{src: "near -70, 189 r=2.5", want: []Clause{{Kind: ClauseNear, X: -70, Z: 189, R: 2.5, Flat: true}}},
		{src: "near start r=3 and hurt<=0", want: []Clause{{Kind: ClauseNear, R: 3, Flat: true, FromStart: true}, {Kind: ClauseHurt, Name: "hurt", Op: "<=", Value: 0}}},
		{src: "farming:bread>=1", want: []Clause{{Kind: ClauseInv, Name: "farming:bread", Op: ">=", Value: 1}}},
		{src: "", err: "empty condition"},
		{src: "tree", err: "not a comparison"},
		{src: "tree >= many", err: "not a comparison"},
		{src: "Tree>=1", err: "not an item name"},
		{src: "near 1 r=2", err: "near X,Y,Z"},
		{src: "near 1,2 r=", err: "near X,Y,Z"},
		{src: "tree>=1 and ", err: "empty clause"},
	}
	for _, c := range cases {
		p, err := ParsePredicate(c.src)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.src, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if len(p.Clauses) != len(c.want) {
			t.Errorf("%q: %+v, want %+v", c.src, p.Clauses, c.want)
			continue
		}
		for i := range c.want {
			if p.Clauses[i] != c.want[i] {
				t.Errorf("%q clause %d: %+v, want %+v", c.src, i, p.Clauses[i], c.want[i])
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ json, err string }{
		{`{"instruction": "x", "budget": 10, "milestones": [{"name": "a", "when": "tree>=1"}]}`, ""},
		{`{"instruction": "x", "budget": 10, "milestones": [{"name": "a", "when": "tree>=1"}], "bogus": 1}`, `unknown field "bogus"`},
		{`{"instruction": "", "budget": 10, "milestones": [{"name": "a", "when": "tree>=1"}]}`, `"instruction" is empty`},
		{`{"instruction": "x", "budget": 0, "milestones": [{"name": "a", "when": "tree>=1"}]}`, `"budget" 0`},
		{`{"instruction": "x", "budget": 5, "milestones": []}`, `no "milestones"`},
		{`{"instruction": "x", "budget": 5, "milestones": [{"name": "a", "when": "tree>=1"}, {"name": "a", "when": "alive"}]}`, `named twice`},
		{`{"instruction": "x", "budget": 5, "milestones": [{"name": "a", "when": "tree>>1"}]}`, `milestones[0] a: condition "tree>>1"`},
		{`{"instruction": "x", "budget": 5, "start_kit": {"dirt": 0}, "milestones": [{"name": "a", "when": "alive"}]}`, `count 0`},
		{`{"instruction": "x", "budget": 5, "milestones": [{"name": "a", "when": "alive"}]} {}`, `more than one JSON value`},
		{`[1]`, `not a task object`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.json))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.json, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.json, err, c.err)
		}
	}
}

func st(step int64, x, y, z float64, hp float64, inv map[string]int) Observation {
	return Observation{Step: step, State: harness.State{Step: step, X: x, Y: y, Z: z, Health: hp, Inventory: inv}}
}

func TestEvaluate(t *testing.T) {
	task, err := Parse([]byte(`{"instruction": "x", "budget": 100, "milestones": [
		{"name": "log", "when": "tree>=1"},
		{"name": "planks", "when": "crafted:wood>=4"},
		{"name": "deep", "when": "depth>=3 and alive"},
		{"name": "far", "when": "away>=10"},
		{"name": "home", "when": "near start r=2 and hurt<=0 and apple>=1"},
		{"name": "spot", "when": "near 5,0,5 r=1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	seq := []Observation{
		st(0, 0, 10, 0, 20, nil),
		st(1, 1, 10, 0, 20, map[string]int{"tree": 1}),
		{Step: 2, State: harness.State{Step: 2, X: 1, Y: 10, Health: 20, Inventory: map[string]int{"wood": 4}}, Events: []string{"craft default:wood 4"}},
		st(3, 1, 7, 0, 20, nil),  // depth 3
		st(4, 12, 7, 0, 20, nil), // far; hurt resets
		{Step: 5, State: harness.State{Step: 5, X: 0.5, Y: 10, Health: 17, Inventory: map[string]int{"apple": 1}}, Events: []string{"hurt fall 3"}}, // home, but hurt
		st(6, 5, 0.5, 5, 17, nil),                       // spot
		st(7, 0, 10, 1, 17, map[string]int{"apple": 1}), // home, no hurt since "spot"
	}
	got := Evaluate(task, seq)
	want := map[string]int64{"log": 1, "planks": 2, "deep": 3, "far": 4, "spot": 6, "home": 7}
	if len(got) != len(want) {
		t.Fatalf("reached %+v, want %v", got, want)
	}
	for _, r := range got {
		if want[r.Name] != r.Step {
			t.Errorf("%s reached at step %d, want %d", r.Name, r.Step, want[r.Name])
		}
	}
	// A dead player is not alive: "deep" is not reached at a depth with
	// health 0.
	dead := Evaluate(task, []Observation{st(0, 0, 10, 0, 20, nil), st(1, 0, 5, 0, 0, nil)})
	for _, r := range dead {
		if r.Name == "deep" {
			t.Errorf("deep reached while dead: %+v", dead)
		}
	}
}

func TestEvaluateOrdered(t *testing.T) {
	task, err := Parse([]byte(`{"instruction": "x", "budget": 100, "ordered": true, "milestones": [
		{"name": "far", "when": "away>=10"},
		{"name": "back", "when": "near start r=2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker(task)
	// at the start the player is near the start, but "back" is not live yet
	if r := tr.Observe(st(0, 0, 0, 0, 20, nil)); len(r) != 0 {
		t.Fatalf("reached at the start: %+v", r)
	}
	if r := tr.Observe(st(5, 11, 0, 0, 20, nil)); len(r) != 1 || r[0].Name != "far" {
		t.Fatalf("step 5: %+v", r)
	}
	if p := tr.Pending(); len(p) != 1 || p[0].Name != "back" {
		t.Fatalf("pending %+v", p)
	}
	if r := tr.Observe(st(9, 1, 0, 0, 20, nil)); len(r) != 1 || r[0].Step != 9 || !tr.Done() {
		t.Fatalf("step 9: %+v done=%v", r, tr.Done())
	}
}

// TestCatalog parses every task of the catalog in tasks/.
func TestCatalog(t *testing.T) {
	files, err := filepath.Glob("../tasks/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("catalog: %d files, %v", len(files), err)
	}
	tags := map[string]int{}
	for _, f := range files {
		tk, path, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if tk.Name != strings.TrimSuffix(filepath.Base(path), ".json") {
			t.Errorf("%s: name %q is not the file stem", f, tk.Name)
		}
		for _, tg := range tk.Tags {
			tags[tg]++
		}
	}
	for _, tg := range []string{"chain", "probe", "memory"} {
		if tags[tg] == 0 {
			t.Errorf("catalog has no %s task", tg)
		}
	}
	if _, _, err := Load("techtree-steel", "../tasks"); err != nil {
		t.Errorf("load by name: %v", err)
	}
	if _, _, err := Load("no-such-task", "../tasks"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing task: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../tasks/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := Parse(data)
		if err != nil {
			return
		}
		for _, m := range tk.Milestones {
			if len(m.Predicate().Clauses) == 0 {
				t.Fatalf("milestone %s parsed without clauses", m.Name)
			}
		}
		Evaluate(tk, []Observation{st(0, 0, 0, 0, 20, nil), st(1, 3, -4, 5, 0, map[string]int{"tree": 2})})
	})
}

func FuzzPredicate(f *testing.F) {
	for _, s := range []string{"tree>=1", "crafted:wood>=4 and alive", "near -70,12,189 r=4", "near start r=3", "depth>=8", "y<=-5.5", "hurt<=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := ParsePredicate(src)
		if err != nil {
			return
		}
		for _, c := range p.Clauses {
			if c.Kind == "" {
				t.Fatalf("%q: clause without kind", src)
			}
		}
	})
}
