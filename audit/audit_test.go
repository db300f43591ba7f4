package audit

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/luanti"
	"github.com/mfm-project/mfm/play"
)

func smp(step int64, inv map[string]any, miles ...any) Sample {
	return Sample{Step: step, Env: map[string]any{"inventory": inv, "milestones": miles, "step": step}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func mustChain(t *testing.T, src string) *Chain {
	t.Helper()
	c, err := ParseChain([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFigure1 is MC-EvoBench's Figure 1 worked example (TSR 0.25, WGP
// 0.19, VMP 0.67), reproduced with its stone-tool probe chain and the
// catalog's execution edges (testdata/figure1-chain.json): the agent gets
// an oak log and four planks, then no sticks.
//
//	TSR: 2 passed (collect_log, craft_planks) of 8 planned = 0.25
//	WGP: planned execution weight, stage by stage (requires + produces +
//	     consumes counts, 1 when none): log 1+1=2, planks 1+4+1=6,
//	     sticks 2+4=6 (abstracts_to does not count), table 4+1=5,
//	     wooden pickaxe 3+1+1+2+3=10, cobblestone 1+2=3 twice (enables
//	     does not count), stone pickaxe 3+2+1+1=7: 42. Passed: 2+6=8.
//	     8/42 = 0.1905
//	VMP: reported stages log, planks, sticks (the first failing one);
//	     their item states and largest counts: oak_log 1, oak_planks 4
//	     (max of 4 and 2), stick 4. The first snapshot is empty, so all 3
//	     are eligible; oak_log and oak_planks are reached: 2/3 = 0.667
func TestFigure1(t *testing.T) {
	c, err := LoadChain("testdata/figure1-chain.json")
	if err != nil {
		t.Fatal(err)
	}
	r := c.Evaluate("figure 1", []Sample{
		smp(0, map[string]any{}),
		smp(30, map[string]any{"oak_log": 1.0}),
		smp(90, map[string]any{"oak_planks": 4.0}),
		smp(400, map[string]any{"oak_planks": 2.0, "stick": 2.0}),
	})
	if r.Passed != 2 || r.Planned != 8 || !near(r.TSR, 0.25) {
		t.Errorf("TSR %d/%d = %v, want 2/8 = 0.25", r.Passed, r.Planned, r.TSR)
	}
	if r.WeightDone != 8 || r.WeightPlanned != 42 || !near(r.WGP, 8.0/42) || math.Round(r.WGP*100) != 19 {
		t.Errorf("WGP %v/%v = %v, want 8/42 = 0.19", r.WeightDone, r.WeightPlanned, r.WGP)
	}
	if r.Eligible != 3 || r.Reached != 2 || !near(r.VMP, 2.0/3) {
		t.Errorf("VMP %d/%d = %v, want 2/3; milestones %+v", r.Reached, r.Eligible, r.VMP, r.Milestones)
	}
	want := []string{StatusPassed, StatusPassed, StatusNotReached, StatusUnattempted, StatusUnattempted, StatusUnattempted, StatusUnattempted, StatusUnattempted}
	for i, s := range r.Stages {
		if s.Status != want[i] {
			t.Errorf("stage %d %s: %s, want %s", i, s.ID, s.Status, want[i])
		}
	}
}

// TestNoEdgesFallsBackToTSR: a chain that plans no execution-edge weight
// scores WGP = TSR (C.4), not 0.
func TestNoEdgesFallsBackToTSR(t *testing.T) {
	c := mustChain(t, `{"stages": [
	 {"id": "bucket", "verifier": "inventory.bucket >= 1 || inventory.water_bucket >= 1"},
	 {"id": "water", "verifier": "inventory.water_bucket >= 1"}]}`)
	// hand: bucket at 400, water at 2318: 2/2 passed, no edges: WGP = TSR = 1
	r := c.Evaluate("synthetic", []Sample{smp(0, map[string]any{}), smp(400, map[string]any{"bucket": 1.0}), smp(2318, map[string]any{"water_bucket": 1.0})})
	if r.TSR != 1 || r.WGP != 1 || !r.WGPFallback {
		t.Errorf("TSR %v WGP %v fallback %v, want 1 1 true", r.TSR, r.WGP, r.WGPFallback)
	}
	// the same chain on the paper's recorded run (bucket from step 400,
	// water_1 at 2318)
	r, err := Score(c, "../testdata/paper-run/store")
	if err != nil {
		t.Fatal(err)
	}
	if r.TSR != 1 || r.WGP != 1 || r.Stages[0].Step != 400 || r.Stages[1].Step != 2318 {
		t.Errorf("paper run: TSR %v WGP %v stages %+v, want 1, 1, bucket at 400, water at 2318", r.TSR, r.WGP, r.Stages)
	}
	// half the chain: TSR 0.5, WGP 0.5
	c2 := mustChain(t, `{"stages": [{"id": "w", "verifier": "inventory.water_bucket >= 1"}, {"id": "d", "verifier": "inventory.diamond >= 1"}]}`)
	if r, _ := Score(c2, "../testdata/paper-run/store"); r.TSR != 0.5 || r.WGP != 0.5 {
		t.Errorf("half chain: TSR %v WGP %v, want 0.5 0.5", r.TSR, r.WGP)
	}
}

// TestVMPSkipsInitiallySatisfied: states the first snapshot already
// meets are not eligible (C.5).
//
//	states: item:torch 4 (first snapshot 10: met), tool:pick_stone 1
//	(held: met), tool:pick_wood 1 (0, reached later), item:diamond 1
//	(never). Eligible pick_wood and diamond; reached pick_wood: 1/2 = 0.5
//	(counting the two met ones as reached would give 3/4 = 0.75).
func TestVMPSkipsInitiallySatisfied(t *testing.T) {
	c := mustChain(t, `{"stages": [
	 {"id": "wooden_pickaxe", "verifier": "inventory.pick_wood >= 1", "edges": [
	  {"relation": "requires", "state": "item:torch", "count": 4},
	  {"relation": "requires", "state": "tool:pick_stone"},
	  {"relation": "produces", "state": "tool:pick_wood"}]},
	 {"id": "diamond", "verifier": "inventory.diamond >= 1", "edges": [
	  {"relation": "produces", "state": "item:diamond"}]}]}`)
	kit := map[string]any{"torch": 10.0, "pick_stone": 1.0}
	r := c.Evaluate("kit", []Sample{smp(0, kit), smp(42, map[string]any{"torch": 10.0, "pick_stone": 1.0, "pick_wood": 1.0})})
	if r.Eligible != 2 || r.Reached != 1 || r.InitiallySatisfied != 2 || r.VMP != 0.5 {
		t.Errorf("VMP %d/%d (initially met %d) = %v, want 1/2 (2) = 0.5; %+v", r.Reached, r.Eligible, r.InitiallySatisfied, r.VMP, r.Milestones)
	}
}

// TestStepCapAndStop: a stage times out when its verifier holds only past
// its cap from where the previous stage passed; the chain stops there; a
// stage whose verifier already holds passes with zero steps.
func TestStepCapAndStop(t *testing.T) {
	c := mustChain(t, `{"max_stage_steps": 100, "stages": [
	 {"id": "a", "verifier": "inventory.a >= 1"},
	 {"id": "a_again", "verifier": "inventory.a >= 1"},
	 {"id": "b", "verifier": "inventory.b >= 1", "max_steps": 50},
	 {"id": "c", "verifier": "inventory.c >= 1"}]}`)
	samples := []Sample{
		smp(0, map[string]any{}),
		smp(80, map[string]any{"a": 1.0}),
		smp(120, map[string]any{"a": 1.0}),
		smp(140, map[string]any{"a": 1.0, "b": 1.0, "c": 1.0}),
	}
	// a at 80 (80 <= 100), a_again at 80 with 0 steps, b at 140: 60 > 50
	// after 80: timeout; c unattempted. TSR 2/4.
	r := c.Evaluate("cap", samples)
	got := []string{}
	for _, s := range r.Stages {
		got = append(got, s.Status)
	}
	want := []string{StatusPassed, StatusPassed, StatusTimeout, StatusUnattempted}
	if strings.Join(got, ",") != strings.Join(want, ",") || r.TSR != 0.5 || r.Stages[1].Steps != 0 || r.Stages[1].Step != 80 {
		t.Errorf("stages %+v TSR %v, want %v and 0.5", r.Stages, r.TSR, want)
	}
	if !strings.Contains(r.Stopped, "b (timeout") {
		t.Errorf("stopped %q", r.Stopped)
	}
	// without b's cap, b passes at 140 (60 <= 100), c too with 0 steps
	c.Stages[2].MaxSteps = 0
	if r := c.Evaluate("no cap", samples); r.TSR != 1 {
		t.Errorf("no cap: TSR %v, want 1 (%+v)", r.TSR, r.Stages)
	}
	// a stage that never holds stops the chain: not reached
	c2 := mustChain(t, `{"stages": [{"id": "x", "verifier": "inventory.x >= 1"}, {"id": "a", "verifier": "inventory.a >= 1"}]}`)
	if r := c2.Evaluate("stop", samples); r.TSR != 0 || r.Stages[0].Status != StatusNotReached || r.Stages[1].Status != StatusUnattempted {
		t.Errorf("stop: %+v", r.Stages)
	}
}

// TestDiamondRefused: the paper's Diamond run (run.json: 10 of 10
// milestones) keeps 7 of its 611 episode folders; a score over the 7
// would be about another run, so Score refuses and says why.
func TestDiamondRefused(t *testing.T) {
	c := mustChain(t, `{"stages": [{"id": "log", "verifier": "inventory.oak_log >= 1"}]}`)
	for _, dir := range []string{"../testdata/paper-run-diamond/store", "/work/shared/fixtures/paper-run-diamond/store"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		r, err := Score(c, dir)
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("%s: scored %+v, err %v; want a refusal", dir, r, err)
		}
		if !strings.Contains(err.Error(), "604 of the 611 episode folders") {
			t.Errorf("%s: %v", dir, err)
		}
	}
	// a store with no states at all is refused too
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Score(c, dir); !errors.Is(err, ErrUnsupported) {
		t.Errorf("empty store: err %v, want a refusal", err)
	}
}

// TestGraphEdges: "make" takes a stage's edges from the game's own
// definitions as the mod exported them.
func TestGraphEdges(t *testing.T) {
	c, err := LoadChain("testdata/techtree-steel-chain.json")
	if err != nil {
		t.Fatal(err)
	}
	edges := map[string]string{}
	for _, s := range c.Stages {
		var parts []string
		for _, e := range s.Edges {
			parts = append(parts, e.Relation+" "+e.State+" "+ftoa(e.Weight()))
		}
		edges[s.ID] = strings.Join(parts, ", ")
	}
	for id, want := range map[string]string{
		// default:wood: 1 default:tree -> 4
		"planks": "requires item:default:tree 1, consumes item:default:tree 1, produces item:default:wood 4",
		// default:pick_wood: 2 group:stick + 3 group:wood -> 1
		"wooden_pickaxe": "requires group:stick 2, consumes group:stick 2, requires group:wood 3, consumes group:wood 3, produces tool:default:pick_wood 1",
		// default:stone drops default:cobble; the pickaxe is named
		"cobblestone": "requires tool:default:pick_wood 1, produces item:default:cobble 3",
		// cooking an iron lump in the furnace
		"steel_ingot": "requires item:default:furnace 1, requires item:default:iron_lump 1, consumes item:default:iron_lump 1, produces item:default:steel_ingot 1",
	} {
		if edges[id] != want {
			t.Errorf("%s: %s\nwant %s", id, edges[id], want)
		}
	}
	g, err := luanti.LoadGraph("../luanti/testdata/minetest_game_graph.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"stages": [{"id": "p", "verifier": "true", "make": {"item": "default:wood"}}]}`,                                            // four recipes
		`{"stages": [{"id": "p", "verifier": "true", "make": {"item": "default:nonesuch"}}]}`,                                        // unknown
		`{"stages": [{"id": "p", "verifier": "true", "make": {"item": "default:cobble", "method": "dig", "from": "default:dirt"}}]}`, // dirt does not drop it
	} {
		if _, err := ParseChain([]byte(bad), g); err == nil {
			t.Errorf("ParseChain(%s): no error", bad)
		}
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TestSteelRun scores the committed LLM run to steel: every stage passes;
// the game's start kit (stone pickaxe, 10 torches) meets two of VMP's
// states in the first snapshot, which are therefore not eligible.
func TestSteelRun(t *testing.T) {
	c, err := LoadChain("testdata/techtree-steel-chain.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Score(c, "../examples/runs/llm-techtree-steel/store")
	if err != nil {
		t.Fatal(err)
	}
	if r.TSR != 1 || r.WGP != 1 {
		t.Errorf("TSR %v WGP %v, want 1 1 (stages %+v)", r.TSR, r.WGP, r.Stages)
	}
	// The chain's verifiers are the task's milestones, checked after every
	// recorded step: each stage passes where play's own tracker saw its
	// milestone (run.json), or where the previous stage passed if later
	// (the furnace was crafted before the torches).
	s, err := episodes.Open("../examples/runs/llm-techtree-steel/store")
	if err != nil {
		t.Fatal(err)
	}
	run, err := play.ReadRun(s)
	if err != nil {
		t.Fatal(err)
	}
	var prev int64
	for i, st := range r.Stages {
		want := max(prev, run.Milestones[i].Step)
		if run.Milestones[i].Name != st.ID || st.Step != want {
			t.Errorf("stage %s passed at %d; run.json: %s at %d, want %d", st.ID, st.Step, run.Milestones[i].Name, run.Milestones[i].Step, want)
		}
		prev = st.Step
	}
	met := map[string]bool{}
	for _, m := range r.Milestones {
		if !m.Eligible {
			met[m.State] = true
		}
	}
	if !met["tool:default:pick_stone"] || !met["item:default:torch"] {
		t.Errorf("initially met %v, want the kit's stone pickaxe and torches among them", met)
	}
	t.Logf("steel run: TSR %.3f WGP %.3f VMP %.3f (%d/%d eligible, %d met at the start)", r.TSR, r.WGP, r.VMP, r.Reached, r.Eligible, r.InitiallySatisfied)
}

func TestParseChainErrors(t *testing.T) {
	for _, bad := range []string{
		`{}`, `{"stages": [{"id": "a"}]}`, `{"stages": [{"id": "a", "verifier": "x <<< 1"}]}`,
		`{"stages": [{"id": "", "verifier": "true"}]}`,
		`{"stages": [{"id": "a", "verifier": "true", "edges": [{"relation": "needs", "state": "item:x"}]}]}`,
		`{"stages": [{"id": "a", "verifier": "true", "edges": [{"relation": "requires", "state": "x"}]}]}`,
		`{"stages": [{"id": "a", "verifier": "true", "edges": [{"relation": "requires", "state": "group:wood"}]}]}`,
		`{"stages": [{"id": "a", "verifier": "true", "make": {"item": "default:wood"}}]}`,
		`{"stages": [{"id": "a", "verifier": "true", "max_steps": -1}]}`,
		`{"stages": [{"id": "a", "verifier": "true"}], "bogus": 1}`,
		`{"stages": [{"id": "a", "verifier": "true"}]} {"stages": []}`,
	} {
		if _, err := ParseChain([]byte(bad), nil); err == nil {
			t.Errorf("ParseChain(%s): no error", bad)
		}
	}
}

// FuzzParseChain: any input parses or fails cleanly (with minetest_game's
// graph for "make" and group states); a parsed chain evaluates without
// panic and in range.
func FuzzParseChain(f *testing.F) {
	for _, p := range []string{"testdata/figure1-chain.json", "testdata/paper-run-chain.json", "testdata/techtree-steel-chain.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	g, err := luanti.LoadGraph("../luanti/testdata/minetest_game_graph.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseChain(b, g)
		if err != nil {
			return
		}
		r := c.Evaluate("fuzz", []Sample{smp(1, map[string]any{"log": 1.0}, "x"), smp(5, map[string]any{"stick": 4.0, "wood": 2.0})})
		if r.TSR < 0 || r.TSR > 1 || r.WGP < 0 || r.WGP > 1 || r.VMP < 0 || r.VMP > 1 || math.IsNaN(r.WGP) {
			t.Fatalf("metrics out of range: %+v", r)
		}
	})
}

// TestPool: split scores sum numerators and denominators.
//
//	chain A: 1/4 stages, weight 8/42, 2/3 states; chain B (no edges): 2/2
//	stages, 0/1 states. TSR (1+2)/(4+2) = 0.5; WGP pools edge weight only
//	(B has none): 8/42; VMP (2+0)/(3+1) = 0.5. B alone: WGP = its TSR, 1.
func TestPool(t *testing.T) {
	a := Scores{Passed: 1, Planned: 4, WeightDone: 8, WeightPlanned: 42, Reached: 2, Eligible: 3}
	b := Scores{Passed: 2, Planned: 2, WGPFallback: true, Reached: 0, Eligible: 1}
	p := Pool("split", []Scores{a, b})
	if p.TSR != 0.5 || !near(p.WGP, 8.0/42) || p.VMP != 0.5 || p.WGPFallback {
		t.Errorf("pool TSR %v WGP %v VMP %v, want 0.5 %v 0.5", p.TSR, p.WGP, p.VMP, 8.0/42)
	}
	if p := Pool("b", []Scores{b}); p.WGP != 1 || !p.WGPFallback {
		t.Errorf("no edge weight pooled: WGP %v, want the TSR 1", p.WGP)
	}
}

// TestChainBuiltInCode: a chain built as a Go value (not parsed) evaluates
// the same, and a verifier that does not compile never holds.
func TestChainBuiltInCode(t *testing.T) {
	c := &Chain{Stages: []Stage{
		{ID: "log", Verifier: "inventory.log >= 1", Edges: []Edge{{Relation: Produces, State: "item:log", Count: 1}}},
		{ID: "bad", Verifier: "inventory.x >>> 1"},
	}}
	r := c.Evaluate("code", []Sample{smp(0, map[string]any{}), smp(5, map[string]any{"log": 1.0})})
	if r.Passed != 1 || r.WGP != 1 || r.VMP != 1 || r.Stages[1].Status != StatusNotReached {
		t.Errorf("%+v", r)
	}
}
