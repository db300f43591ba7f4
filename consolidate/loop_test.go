package consolidate

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// c_i from a failed episode's feedback: its call and failure, the GUI
// state, the subgoal, and the item its note says is missing (else the
// first it aimed at).
func TestFailureContext(t *testing.T) {
	cases := []struct {
		f       Feedback
		subgoal string
		want    string
	}{
		{Feedback{Call: "craft", Failure: FailMissingTool, Note: "craft: not enough wood (need 3, have 0)", Aimed: []string{"pick_wood"}}, "log",
			"call=craft,failure=MISSING_TOOL,gui_open=false,item=wood,subgoal=log,budget=120"},
		{Feedback{Call: "craft", Failure: FailMissingTool, Note: "craft: no recipe for \"x\"", Aimed: []string{"x"}}, "",
			"call=craft,failure=MISSING_TOOL,gui_open=false,item=x,budget=120"},
		{Feedback{Call: "mine_ahead", Failure: FailNoEffect, Note: "mine_ahead: nothing in reach to mine", Subgoal: "log"}, "",
			"call=mine_ahead,failure=NO_EFFECT,gui_open=false,subgoal=log,budget=120"},
		{Feedback{Call: "place", Failure: FailGUI, GUIOpen: true, Note: "place: you carry no torch"}, "torches",
			"call=place,failure=GUI_FAILURE,gui_open=true,item=torch,subgoal=torches,budget=120"},
	}
	for _, c := range cases {
		if got := FailureContext(c.f, c.subgoal, DefaultOfferBudget).String(); got != c.want {
			t.Errorf("%s %q: context %s, want %s", c.f.Call, c.f.Note, got, c.want)
		}
	}
}

// Eq. 7 worked by hand. Context c: call=craft, failure=MISSING_TOOL,
// gui_open=false, subgoal=log, item=wood. r(c, k) = share of k's trigger
// fields c matches × confidence, 0 when c contradicts one:
//
//	A remedy {call=craft, failure=MISSING_TOOL}, ρ 0.6:         2/2 × 0.6  = 0.6
//	B skill  {gui_open=false, subgoal=log, item=wood}, ρ 0.75:  3/3 × 0.75 = 0.75
//	C skill  {gui_open=false, subgoal=log}, ρ 0.9:              2/2 × 0.9  = 0.9
//	D skill  {gui_open=false, subgoal=log, item=stick}, ρ 0.9:  item contradicted: 0
//	E remedy {call=go_to, failure=NAV_STUCK}, ρ 0.9:            0
//
// With tokens A 30, B 50, C 60 and B = 100: {A, C} (90 tokens) has 1.5,
// {A, B} (80) 1.35, {B, C} is 110 tokens; so K^R = {A, C}. Taking entries
// greedily by relevance per token (A 0.020, B 0.015, C 0.015) would take
// A and B, and then C no longer fits: 1.35. Under B = 60 only one entry
// fits: C (0.9). Without item in c, B matches 2 of its 3 fields: 0.5.
func TestOfferRetrievalEq7(t *testing.T) {
	mk := func(id, kind string, conf float64, trig ...string) Candidate {
		c := Candidate{ID: id, Kind: kind, Name: id, Confidence: conf, Trigger: map[string]string{}}
		for _, kv := range trig {
			k, v, _ := strings.Cut(kv, "=")
			c.Trigger[k] = v
		}
		return c
	}
	k := []Candidate{
		mk("A", KindRemedy, 0.6, "call=craft", "failure=MISSING_TOOL"),
		mk("B", KindSkill, 0.75, "gui_open=false", "subgoal=log", "item=wood"),
		mk("C", KindSkill, 0.9, "gui_open=false", "subgoal=log"),
		mk("D", KindSkill, 0.9, "gui_open=false", "subgoal=log", "item=stick"),
		mk("E", KindRemedy, 0.9, "call=go_to", "failure=NAV_STUCK"),
	}
	tokens := map[string]int{"A": 30, "B": 50, "C": 60, "D": 10, "E": 10}
	tok := func(c Candidate) int { return tokens[c.ID] }
	f := Feedback{Call: "craft", Failure: FailMissingTool, Note: "craft: not enough wood"}
	ctx := FailureContext(f, "log", 100)
	want := map[string]float64{"A": 0.6, "B": 0.75, "C": 0.9, "D": 0, "E": 0}
	for _, c := range k {
		if r := Relevance(c, ctx); math.Abs(r-want[c.ID]) > 1e-9 {
			t.Errorf("r(c, %s) = %.3f, want %.3f", c.ID, r, want[c.ID])
		}
	}
	ids := func(cs []Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(RetrieveBy(k, ctx, tok)); !slices.Equal(got, []string{"A", "C"}) {
		t.Errorf("B=100: retrieved %v, want [A C] (1.5 > greedy's 1.35)", got)
	}
	ctx.Budget = 60
	if got := ids(RetrieveBy(k, ctx, tok)); !slices.Equal(got, []string{"C"}) {
		t.Errorf("B=60: retrieved %v, want [C]", got)
	}
	noItem := FailureContext(Feedback{Call: "craft", Failure: FailMissingTool}, "log", 100)
	if r := Relevance(k[1], noItem); math.Abs(r-0.5) > 1e-9 {
		t.Errorf("r without item = %.3f, want 2/3 × 0.75 = 0.5", r)
	}
	// tokens(k) in the Adaptor is the shown line's: 4 bytes a token, rounded up
	line := OfferLine(Candidate{ID: "skill-x-1", Kind: KindSkill, Name: "x", Steps: []string{"a", "b"}, Verify: "milestone x", Confidence: 0.5,
		Support: []Ref{{Life: 1, ID: "ep_000001"}}}, "skill_x")
	if line != "skill x: a → b; call skill_x; verify milestone x (0.50, ep_000001) [skill-x-1]" || lineTokens(line) != (len(line)+3)/4 {
		t.Errorf("line %q, %d tokens", line, lineTokens(line))
	}
}

func TestMissingItem(t *testing.T) {
	for note, want := range map[string]string{
		"craft: not enough wood (need 3, have 0)":    "wood",
		"fill_bucket: you carry no bucket":           "bucket",
		"craft: crafted 1 of 2: not enough stick":    "stick",
		"needs iron_ingot":                           "iron_ingot",
		"harvest_tree: no trunk detected (6 frames)": "",
		"mine_ahead: nothing in reach to mine":       "",
		"go_to: blocked: no progress for 3 s":        "",
	} {
		if got := missingItem(note); got != want {
			t.Errorf("missingItem(%q) = %q, want %q", note, got, want)
		}
	}
}

// Eq. 8's answer: the repaired suffix's entries and the sources it used;
// anything else is an error naming what is wrong.
func TestParseRepair(t *testing.T) {
	cases := []struct {
		ans, suffix, sources, err string
	}{
		{`{"kept_prefix": ["go_to x=5 z=0"], "repaired_suffix": [{"entry": "mine_ahead", "repair_source": "skill-a"}, {"entry": "craft item=wood"}], "active_remedies_used": ["remedy-b", "skill-a"]}`,
			"mine_ahead|craft item=wood", "skill-a|remedy-b", ""},
		{`{"repaired_suffix": [{"condition": "dig_down n=1", "repair_source": "remedy-c"}]}`, "dig_down n=1", "remedy-c", ""},
		{`{"repaired_suffix": []}`, "", "", "the repaired suffix is empty"},
		{`{"plan": []}`, "", "", `no "repaired_suffix" array`},
		{`{"repaired_suffix": [{"entry": "a; b"}]}`, "", "", "want one plan entry"},
		{`{"repaired_suffix": [{"entry": ""}]}`, "", "", "want one plan entry"},
		{`{"repaired_suffix": "mine_ahead"}`, "", "", "not the repair JSON"},
		{`{"repaired_suffix": [` + strings.Repeat(`{"entry": "wait"},`, MaxSuffix) + `{"entry": "wait"}]}`, "", "", "more than 16"},
	}
	for _, c := range cases {
		sfx, src, err := ParseRepair([]byte(c.ans))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.ans, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(sfx, "|") != c.suffix || strings.Join(src, "|") != c.sources {
			t.Errorf("%s: %q %q %v", c.ans, sfx, src, err)
		}
	}
}

func FuzzParseRepair(f *testing.F) {
	f.Add([]byte(`{"repaired_suffix": [{"entry": "mine_ahead", "repair_source": "skill-a"}]}`))
	f.Add([]byte(`{"repaired_suffix": [{"condition": "x"}], "active_remedies_used": ["r"]}`))
	f.Add([]byte(`{"repaired_suffix": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sfx, _, err := ParseRepair(b)
		if err != nil {
			return
		}
		if len(sfx) == 0 || len(sfx) > MaxSuffix {
			t.Fatalf("accepted a suffix of %d entries", len(sfx))
		}
		for _, e := range sfx {
			if strings.TrimSpace(e) == "" || strings.ContainsAny(e, ";\n") {
				t.Fatalf("accepted entry %q", e)
			}
		}
	})
}

// An offered entry is used when the next plan calls its procedure, or
// holds its calls in their order.
func TestUsedBy(t *testing.T) {
	skill := Offered{Calls: []string{"mine_ahead", "craft"}, Procedure: "skill_planks"}
	remedy := Offered{Calls: []string{"scan_around", "pillar_up", "go_to"}}
	cases := []struct {
		o     Offered
		calls []string
		want  bool
	}{
		{skill, []string{"skill_planks"}, true},
		{skill, []string{"go_to", "mine_ahead", "collect_drops", "craft"}, true},
		{skill, []string{"craft", "mine_ahead"}, false},
		{skill, []string{"mine_ahead"}, false},
		{remedy, []string{"scan_around", "select", "pillar_up", "go_to"}, true},
		{remedy, []string{"pillar_up", "go_to"}, false},
		{Offered{}, []string{"go_to"}, false},
	}
	for _, c := range cases {
		if got := UsedBy(c.o, c.calls); got != c.want {
			t.Errorf("UsedBy(%v, %v) = %v, want %v", c.o, c.calls, got, c.want)
		}
	}
}

// The eq. 8 prompt: Repair(g, s_i, z_1:i, K^R_i, A_i) — the goal, the
// state, the plan with what became of each entry, the completed prefix
// frozen, the turn's typed feedback, the retrieved skills, the active
// remedies (retrieved and the temporary one), the known calls.
func TestAdaptPrompt(t *testing.T) {
	in := OfferInput{Goal: "craft a wooden pickaxe", Subgoal: "log", State: "pos=(5.0, 0.0, 0.0)",
		Plan: []PlanItem{{"go_to(x=5,z=0)", "done"}, {"craft(item=pick_wood)", "failed"}, {"craft(item=stick)", "dropped"}}}
	f := Feedback{Life: 1, Episode: "ep_000002", Call: "craft", Failure: FailMissingTool, Note: "craft: not enough stick", Stagnant: true}
	got := []Candidate{
		{ID: "skill-a", Kind: KindSkill, Steps: []string{"mine_ahead", "craft"}, Verify: "milestone pickaxe"},
		{ID: "remedy-b", Kind: KindRemedy, Trigger: map[string]string{"call": "craft"}, FailureType: FailMissingTool, Repair: []string{"mine_ahead"}},
	}
	p := AdaptPrompt(in, []Feedback{f}, got, temporaryRemedy(f), []string{"mine_ahead", "craft", "go_to"})
	for _, want := range []string{
		PromptAdapt,
		"Task goal: craft a wooden pickaxe\nCurrent subgoal: log\nCurrent state: pos=(5.0, 0.0, 0.0)\n",
		"- go_to(x=5,z=0) [done]\n- craft(item=pick_wood) [failed]\n- craft(item=stick) [dropped]\n",
		`Frozen prefix: ["go_to(x=5,z=0)"]`,
		`- ep_000002: z="craft", y=0, delta_inv={}, f="MISSING_TOOL", p=0.00, stagnant=true, note="craft: not enough stick"`,
		"Retrieved skills:\n- skill-a: mine_ahead → craft; verify milestone pickaxe\n",
		"Active remedies:\n- remedy-b: if craft ends in MISSING_TOOL: mine_ahead\n",
		`- temporary: craft ended in MISSING_TOOL ("craft: not enough stick"), stagnant (progress 0.00): do not send it again unchanged`,
		"KNOWN CALLS: craft, go_to, mine_ahead\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}
