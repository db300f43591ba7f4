package consolidate

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// openFixture opens a committed store read-only (the Monitor and Compute
// only read).
func openFixture(t *testing.T, rel string) *episodes.Store {
	t.Helper()
	s, err := episodes.Open(filepath.Join("..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func feedbackByID(fb []Feedback, id string) *Feedback {
	for i := range fb {
		if fb[i].Episode == id {
			return &fb[i]
		}
	}
	return nil
}

// The paper run's ep_000001: harvest_tree(logs=4) dug 7 dirt and says
// "0 log(s) collected". Its subgoal is the call's purpose (no milestone
// reached, no plan goal recorded): a log gained, which did not happen, so
// y = 0 and, no other failure being diagnosed, SUBGOAL_UNMET. Progress is
// eq. 2 unchanged: it moved and its inventory changed by 8, so
// p = 0.745 ≥ εp and it is not stagnant (eq. 3 needs p < εp). The episode
// that reached water_1 is a success by the milestone.
func TestMonitorPaperRunSubgoal(t *testing.T) {
	fb, err := Monitor(openFixture(t, "testdata/paper-run/store"), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f := feedbackByID(fb, "ep_000001")
	if f == nil {
		t.Fatal("no feedback for ep_000001")
	}
	if f.Success || f.Failure != FailSubgoalUnmet || f.SubgoalSource != SubgoalPurpose || f.Progress != 0.745 || f.Stagnant {
		t.Errorf("ep_000001 %s: success %v failure %q source %q check %q progress %v stagnant %v; want y=0 SUBGOAL_UNMET by purpose, p 0.745, not stagnant",
			f.Call, f.Success, f.Failure, f.SubgoalSource, f.SubgoalCheck, f.Progress, f.Stagnant)
	}
	reached := 0
	for _, f := range fb {
		if len(f.Milestones) > 0 {
			reached++
			if !f.Success || f.SubgoalSource != SubgoalMilestone {
				t.Errorf("%s reached %v: success %v source %q, want a success by the milestone", f.Episode, f.Milestones, f.Success, f.SubgoalSource)
			}
		}
	}
	if reached != 3 {
		t.Errorf("%d episodes reached a milestone, want the run's 3", reached)
	}
}

// On the Diamond run, open_inventory leaves the inventory GUI open —
// which is what it is for: a success whose Δs is the GUI opening, never a
// GUI_FAILURE (nor NO_EFFECT), and no remedy
// "gui_failure_after_open_inventory" is proposed.
func TestOpenInventoryIsNotAGUIFailure(t *testing.T) {
	s := openFixture(t, "testdata/paper-run-diamond/store")
	fb, err := Monitor(s, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fb {
		if f.Call != "open_inventory" {
			continue
		}
		n++
		if f.Failure != FailNone || !f.Success || !contains(f.Changed, ChangeGUI) {
			t.Errorf("%s open_inventory: failure %q success %v changed %q (gui open %v), want a success that changed the GUI", f.Episode, f.Failure, f.Success, f.Changed, f.GUIOpen)
		}
	}
	if n == 0 {
		t.Fatal("no open_inventory episode in the Diamond run")
	}
	for _, c := range Induce(fb, DefaultConfig()) {
		if c.Trigger["call"] == "open_inventory" && c.FailureType == FailGUI {
			t.Errorf("remedy %s proposed for open_inventory's GUI", c.Name)
		}
	}
}

// CheckSuccess's rules, one row each, worked by hand from the table in
// docs/CONSOLIDATE.md.
func TestCheckSuccessRules(t *testing.T) {
	yes, no := true, false
	open := &episodes.State{GUIOpen: &yes}
	closed := &episodes.State{GUIOpen: &no}
	cases := []struct {
		name   string
		f      Feedback
		goal   string
		end    *episodes.State
		y      bool
		source string
	}{
		{"milestone reached", Feedback{Call: "use_at", Milestones: []string{"water_1"}, AimFailed: "x"}, "", nil, true, SubgoalMilestone},
		{"plan goal inv_ge met from Δv", Feedback{Call: "attack", InvDelta: map[string]int{"cobblestone": 3}}, "inv_ge cobblestone 3", nil, true, SubgoalPlan},
		{"plan goal inv_ge unmet", Feedback{Call: "attack", InvDelta: map[string]int{"cobblestone": 2}}, "inv_ge cobblestone 3", nil, false, SubgoalPlan},
		{"plan goal milestone unmet", Feedback{Call: "craft", InvDelta: map[string]int{"stick": 4}}, "milestone wooden_pickaxe", nil, false, SubgoalPlan},
		{"harvest_tree gained dirt only", Feedback{Call: "harvest_tree", Aimed: []string{"log"}, InvDelta: map[string]int{"dirt": 7}}, "", nil, false, SubgoalPurpose},
		{"harvest_tree gained oak_log", Feedback{Call: "harvest_tree", InvDelta: map[string]int{"oak_log": 2}}, "", nil, true, SubgoalPurpose},
		{"craft output appeared", Feedback{Call: "craft", InvDelta: map[string]int{"oak_planks": 4, "oak_log": -1}}, "", nil, true, SubgoalPurpose},
		{"craft output absent", Feedback{Call: "craft", InvDelta: map[string]int{}}, "", nil, false, SubgoalPurpose},
		{"open_inventory opened", Feedback{Call: "open_inventory"}, "", open, true, SubgoalPurpose},
		{"open_inventory stayed closed", Feedback{Call: "open_inventory"}, "", closed, false, SubgoalPurpose},
		{"close_inventory closed", Feedback{Call: "close_inventory", GUIOpen: true}, "", closed, true, SubgoalPurpose},
		{"go_to blocked", Feedback{Call: "go_to", Changed: []string{ChangePosition}, Failure: FailNavStuck}, "", nil, false, SubgoalPurpose},
		{"go_to arrived without moving", Feedback{Call: "go_to", Arrived: true}, "", nil, true, SubgoalPurpose},
		{"raw forward+jump moved", Feedback{Call: "forward+jump", Changed: []string{ChangePosition}}, "", nil, true, SubgoalPurpose},
		{"attack broke nothing", Feedback{Call: "attack", Changed: []string{ChangeCamera}}, "", nil, false, SubgoalPurpose},
		{"look_at missed", Feedback{Call: "look_at", Changed: []string{ChangeCamera}, AimFailed: "look_at: facing the block but the crosshair hits leaves"}, "", nil, false, SubgoalPurpose},
		{"unknown call, no failure", Feedback{Call: "wait"}, "", nil, true, SubgoalFallback},
		{"unknown call, failure", Feedback{Call: "wait", Failure: FailNoEffect}, "", nil, false, SubgoalFallback},
	}
	for _, c := range cases {
		f := c.f
		y, source, check := CheckSuccess(&f, c.goal, trace{end: c.end})
		if y != c.y || source != c.source || check == "" {
			t.Errorf("%s: y %v source %q check %q, want y %v source %q", c.name, y, source, check, c.y, c.source)
		}
	}
}

// Eq. 5 over all failures in the window, worked by hand with h = 5,
// η = 0.6: five episodes of one life, failures of four different types
// around one success, none stagnant (p = 0.3 ≥ εp). At ep 4 three of the
// last five failed (NAV_STUCK, DAMAGE, MISSING_TOOL): 3/5 = 0.6 ≥ η, a
// remedy; at ep 5 four: 0.8, a remedy. At eps 1 and 2 the rate is 1/5 and
// 2/5: none. Counting only failures of the same type (each type once)
// would give 1/5 everywhere and no remedy at all. A stagnant failure
// alone (ep 1 of life 2) makes one whatever the rate.
func TestRemedyTriggerEq5(t *testing.T) {
	ep := func(life int, id, call, failure string, stagnant bool) Feedback {
		return Feedback{Life: life, Episode: id, Call: call, Failure: failure, Success: failure == "", Progress: 0.3, Stagnant: stagnant}
	}
	fb := []Feedback{
		ep(1, "ep_000001", "go_to", FailNavStuck, false),
		ep(1, "ep_000002", "attack", FailDamage, false),
		ep(1, "ep_000003", "look_at", "", false),
		ep(1, "ep_000004", "craft", FailMissingTool, false),
		ep(1, "ep_000005", "use", FailGUI, false),
		ep(2, "ep_000001", "go_to", FailNoEffect, true),
	}
	cfg := DefaultConfig()
	cfg.H, cfg.Eta = 5, 0.6
	var got []string
	for _, c := range Induce(fb, cfg) {
		if c.Kind == KindRemedy {
			got = append(got, fmt.Sprintf("%d/%s %s", c.Support[0].Life, c.Support[0].ID, c.FailureType))
		}
	}
	want := []string{"1/ep_000004 MISSING_TOOL", "1/ep_000005 GUI_FAILURE", "2/ep_000001 NO_EFFECT"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("remedies at %q, want %q", got, want)
	}
	for i, w := range []float64{0.2, 0.4, 0.4, 0.6, 0.8, 0.2} {
		if _, r := FailureRate(fb, i, 5); math.Abs(r-w) > 1e-9 {
			t.Errorf("rate at %d = %v, want %v", i, r, w)
		}
	}
}
