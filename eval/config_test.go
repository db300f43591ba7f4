package eval

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const goodConfig = `{"name": "x", "world": "sim", "target": ["sim-logs"], "related": ["a", "b", "c"], "unrelated": ["u"],
 "ablations": ["flat", "direct"], "seeds": [1, 2], "source_steps": 100, "agent_cmd": "agent"}`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(goodConfig), "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Conditions, Conditions) || c.AblationCondition != Related || c.AgentTimeout != "10m" || c.tasksDir() != "/cfg/tasks" {
		t.Errorf("defaults: %+v", c)
	}
	if got := c.Source(Shuffled); !slices.Equal(got, []string{"c", "b", "a"}) || !slices.Equal(c.Related, []string{"a", "b", "c"}) {
		t.Errorf("shuffled %v, related %v: want the related sequence reversed, related untouched", got, c.Related)
	}
	if c.Source(NoPrior) != nil {
		t.Error("no-prior has a source")
	}
	bad := []struct{ edit, want string }{
		{`"name": "x"`, `"name": "a b"`},
		{`"world": "sim"`, `"world": "minecraft"`},
		{`"target": ["sim-logs"]`, `"target": []`},
		{`"seeds": [1, 2]`, `"seeds": [1, 1]`},
		{`"seeds": [1, 2]`, `"seeds": []`},
		{`"source_steps": 100`, `"source_steps": 0`},
		{`"agent_cmd": "agent"`, `"agent_cmd": " "`},
		{`"ablations": ["flat", "direct"]`, `"ablations": ["flat", "flat"]`},
		{`"ablations": ["flat", "direct"]`, `"ablations": ["no-memory"]`},
		{`"related": ["a", "b", "c"], `, ``},
		{`"unrelated": ["u"],`, `"unrelated": ["u"], "extra": 1,`},
		{`"target": ["sim-logs"]`, `"target": ["../x"]`},
		{`"ablations": ["flat", "direct"]`, `"ablations": ["no-consolidation"]`},
		{`"source_steps": 100`, `"source_steps": 100, "consolidate_every": -1`},
	}
	for _, tc := range bad {
		src := strings.Replace(goodConfig, tc.edit, tc.want, 1)
		if _, err := ParseConfig([]byte(src), "/cfg"); err == nil {
			t.Errorf("%s: accepted", tc.want)
		}
	}
}

func TestPlan(t *testing.T) {
	c, err := ParseConfig([]byte(goodConfig), "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	units := c.Plan()
	// per seed: 3 sources (related, unrelated, shuffled), 4 conditions, 2 ablations
	if len(units) != 2*(3+4+2) {
		t.Fatalf("%d units", len(units))
	}
	pos := map[string]int{}
	for i, u := range units {
		if _, dup := pos[u.ID]; dup {
			t.Errorf("unit %s twice", u.ID)
		}
		pos[u.ID] = i
	}
	for _, u := range units {
		if u.Kind != KindTarget {
			continue
		}
		if (u.Condition == NoPrior) != (u.Source == "") {
			t.Errorf("%s: source %q", u.ID, u.Source)
		}
		if u.Source != "" && pos[u.Source] > pos[u.ID] {
			t.Errorf("%s runs before its source %s", u.ID, u.Source)
		}
	}
	if u := units[pos["target/related+flat/seed-2"]]; u.Source != "source/related/seed-2" || u.Seed != 2 {
		t.Errorf("ablation unit %+v", u)
	}
}

// TestConsolidationArms: with consolidate_every, every play consolidates
// except the no-consolidation arm (its own source too, and offers only)
// and direct; the ablation switches go to the targets only.
func TestConsolidationArms(t *testing.T) {
	src := strings.Replace(goodConfig, `"ablations": ["flat", "direct"]`, `"ablations": ["flat", "no-consolidation", "direct"], "consolidate_every": 3`, 1)
	c, err := ParseConfig([]byte(src), "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string][]string{}
	source := map[string]string{}
	for _, u := range c.Plan() {
		if u.Seed == 1 {
			flags[u.ID] = c.playFlags(u)
			source[u.ID] = u.Source
		}
	}
	consolidate := []string{"--consolidate-every", "3"}
	want := map[string][]string{
		"source/related/seed-1":                  consolidate,
		"source/related+no-consolidation/seed-1": {"--adapt"},
		"source/unrelated/seed-1":                consolidate,
		"target/no-prior/seed-1":                 consolidate,
		"target/related/seed-1":                  consolidate,
		"target/related+flat/seed-1":             {"--consolidate-every", "3", "--ablate", "flat"},
		"target/related+no-consolidation/seed-1": {"--adapt"},
		"target/related+direct/seed-1":           {"--ablate", "direct"},
	}
	for id, w := range want {
		got, ok := flags[id]
		if !ok {
			t.Errorf("no unit %s in %v", id, flags)
			continue
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: flags %q, want %q", id, got, w)
		}
	}
	if s := source["target/related+no-consolidation/seed-1"]; s != "source/related+no-consolidation/seed-1" {
		t.Errorf("the no-consolidation target reads %q", s)
	}
	if s := source["target/related+flat/seed-1"]; s != "source/related/seed-1" {
		t.Errorf("the flat target reads %q", s)
	}
	// without consolidate_every nothing consolidates
	c.ConsolidateEvery = 0
	if f := c.playFlags(Unit{Kind: KindTarget, Condition: Related}); len(f) != 0 {
		t.Errorf("flags %q without consolidate_every", f)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(goodConfig))
	f.Add([]byte(`{"name": "n", "target": ["t"], "conditions": ["no-prior"], "seeds": [0], "agent_cmd": "a"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"name": "n", "target": ["t"], "related": ["r"], "ablations": ["no-consolidation"], "consolidate_every": 2, "source_steps": 9, "seeds": [0], "agent_cmd": "a"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b, "/d")
		if err != nil {
			return
		}
		if len(c.Target) == 0 || len(c.Seeds) == 0 || c.AgentCmd == "" {
			t.Fatalf("accepted an incomplete config: %+v", c)
		}
		for _, u := range c.Plan() {
			if u.Kind == KindTarget && u.Condition != NoPrior && u.Source == "" {
				t.Fatalf("target %s without a source", u.ID)
			}
		}
	})
}

// TestCommittedExperimentsLoad: every committed experiment's config
// loads (with its chain) under the current rules.
func TestCommittedExperimentsLoad(t *testing.T) {
	paths, err := filepath.Glob("../examples/eval/*/experiment.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed experiment (%v)", err)
	}
	for _, p := range paths {
		if _, err := LoadConfig(p); err != nil {
			t.Error(err)
		}
	}
}
