package audit

import (
	"os"
	"path/filepath"
	"testing"
)

const handChain = `{"name": "hand",
 "stages": [
  {"id": "log", "verifier": "inventory.log >= 1"},
  {"id": "planks", "verifier": "inventory.planks >= 4"},
  {"id": "sticks", "verifier": "inventory.stick >= 2"},
  {"id": "table", "verifier": "'crafting_table' in milestones"}],
 "edges": [
  {"from": "log", "to": "planks", "weight": 2},
  {"from": "planks", "to": "sticks", "weight": 1},
  {"from": "log", "to": "sticks", "weight": 5, "strict": false},
  {"from": "sticks", "to": "table", "weight": 1}],
 "milestones": [
  {"id": "two_sticks", "verifier": "inventory.stick >= 2"},
  {"id": "diamond"},
  {"id": "nether", "eligible": false}]}`

func smp(step int64, inv map[string]any, miles ...any) Sample {
	return Sample{Step: step, Env: map[string]any{"inventory": inv, "milestones": miles, "step": step}}
}

// TestHandChain: samples log@10, sticks@20, planks@30 (sticks before
// planks), no table.
//
//	TSR = 3 passed / 4 planned = 0.75
//	WGP: strict edges log>planks (2, planks after log: yes), planks>sticks
//	     (1, sticks before planks: no), sticks>table (1, table never: no);
//	     log>sticks is not strict. 2 / (2+1+1) = 0.5
//	VMP: eligible two_sticks (reached), diamond (not); nether not
//	     eligible. 1/2 = 0.5
func TestHandChain(t *testing.T) {
	c, err := ParseChain([]byte(handChain))
	if err != nil {
		t.Fatal(err)
	}
	samples := []Sample{
		smp(10, map[string]any{"log": 1.0}),
		smp(20, map[string]any{"stick": 2.0}),
		smp(30, map[string]any{"planks": 4.0}),
	}
	cases := []struct {
		name          string
		samples       []Sample
		tsr, wgp, vmp float64
	}{
		{"out of order", samples, 0.75, 0.5, 0.5},
		{"in order with table and diamond", []Sample{samples[0], samples[2], samples[1], smp(40, map[string]any{}, "crafting_table", "diamond")}, 1, 1, 1},
		{"nothing", nil, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Evaluate(tc.name, tc.samples)
			if r.TSR != tc.tsr || r.WGP != tc.wgp || r.VMP != tc.vmp {
				t.Errorf("TSR %v WGP %v VMP %v, want %v %v %v", r.TSR, r.WGP, r.VMP, tc.tsr, tc.wgp, tc.vmp)
			}
		})
	}
}

func TestParseChainErrors(t *testing.T) {
	for _, bad := range []string{
		`{}`, `{"stages": [{"id": "a"}]}`, `{"stages": [{"id": "a", "verifier": "x <<< 1"}]}`,
		`{"stages": [{"id": "a", "verifier": "true"}, {"id": "a", "verifier": "true"}]}`,
		`{"stages": [{"id": "a", "verifier": "true"}], "edges": [{"from": "a", "to": "b", "weight": 1}]}`,
		`{"stages": [{"id": "a", "verifier": "true"}], "edges": [{"from": "a", "to": "a", "weight": 0}]}`,
		`{"stages": [{"id": "a", "verifier": "true"}], "bogus": 1}`,
	} {
		if _, err := ParseChain([]byte(bad)); err == nil {
			t.Errorf("ParseChain(%s): no error", bad)
		}
	}
}

// TestPaperRun audits the paper's recorded run with docs' example chain.
func TestPaperRun(t *testing.T) {
	c, err := LoadChain("testdata/paper-run-chain.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(c, "paper", "../testdata/paper-run/store")
	if err != nil {
		t.Fatal(err)
	}
	// the run fetched water and made sticks, never a table or a pickaxe
	got := map[string]bool{}
	for _, s := range r.Stages {
		got[s.ID] = s.Passed
	}
	if !got["water"] || !got["sticks"] || got["crafting_table"] || got["wooden_pickaxe"] {
		t.Errorf("stages %+v", r.Stages)
	}
	if !r.Milestones["water_1"] || !r.Milestones["log_1"] || r.Milestones["water_2"] != true {
		t.Errorf("milestones %v", r.Milestones)
	}
	t.Logf("paper run: TSR %.3f WGP %.3f VMP %.3f over %d samples", r.TSR, r.WGP, r.VMP, r.Samples)
}

// FuzzParseChain: any input parses or fails cleanly; a parsed chain
// evaluates without panic.
func FuzzParseChain(f *testing.F) {
	f.Add([]byte(handChain))
	if b, err := os.ReadFile(filepath.Join("testdata", "paper-run-chain.json")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseChain(b)
		if err != nil {
			return
		}
		r := c.Evaluate("fuzz", []Sample{smp(1, map[string]any{"log": 1.0}, "x")})
		if r.TSR < 0 || r.TSR > 1 || r.WGP < 0 || r.WGP > 1 || r.VMP < 0 || r.VMP > 1 {
			t.Fatalf("metrics out of range: %+v", r)
		}
	})
}
