package consolidate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// On the Diamond run the Inducer rejects a run with the key of the
// accepted skill-get_cobblestone-12b6ed; the two must not share a file
// name: after Write, candidates/ holds a .json and a .md for every
// accepted and every rejected candidate, and the accepted file says
// accepted.
func TestCandidateFilesDistinctDiamond(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "testdata", "paper-run-diamond", "store"), dir).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compute(s, DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(s, res); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(s.Path(Dir, "candidates"))
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * (len(res.Accepted) + len(res.Rejected)); len(names) != want {
		t.Errorf("candidates/ holds %d files for %d accepted and %d rejected, want %d", len(names), len(res.Accepted), len(res.Rejected), want)
	}
	b, err := os.ReadFile(s.Path(Dir, "candidates", "skill-get_cobblestone-12b6ed.json"))
	if err != nil || !strings.Contains(string(b), `"status": "accepted"`) {
		t.Errorf("skill-get_cobblestone-12b6ed.json: %v, want the accepted skill:\n%s", err, b)
	}
	renamed := 0
	for _, c := range res.Rejected {
		if strings.HasPrefix(c.ID, "skill-get_cobblestone-12b6ed-rejected-") {
			renamed++
		}
	}
	if renamed == 0 {
		t.Error("no rejected candidate of the accepted skill's key was renamed: the fixture no longer shows the collision")
	}
}

// ContextMatch against the state an entry would be used in, by hand.
func TestContextMatch(t *testing.T) {
	st := StateFields{Subgoal: "water_1", Call: "go_to", Failure: FailNavStuck, GUIOpen: false, Items: []string{"oak_log", "dirt"}}
	cases := []struct {
		trigger map[string]string
		miss    string
	}{
		{map[string]string{"call": "go_to", "failure": "NAV_STUCK"}, ""},
		{map[string]string{"subgoal": "water_1", "gui_open": "false", "item": "log"}, ""}, // oak_log is a log
		{map[string]string{"call": "fill_bucket"}, "call"},
		{map[string]string{"call": "go_to", "failure": "GUI_FAILURE"}, "failure"},
		{map[string]string{"gui_open": "true"}, "gui_open"},
		{map[string]string{"item": "diamond"}, "item"},
		{map[string]string{"subgoal": "log_1"}, "subgoal"},
	}
	for _, c := range cases {
		if got := ContextMatch(&Candidate{Trigger: c.trigger}, st); got != c.miss {
			t.Errorf("trigger %v: mismatch %q, want %q", c.trigger, got, c.miss)
		}
	}
	// The Curator checks a candidate against the state of its first
	// supporting episode: a remedy for fill_bucket citing a go_to is
	// rejected; the same citing a fill_bucket that failed so is accepted.
	states := map[string]StateFields{
		EpisodeKey(1, "ep_000001"): st,
		EpisodeKey(1, "ep_000002"): {Call: "fill_bucket", Failure: FailSubgoalUnmet},
	}
	rem := func(id string) Candidate {
		return Candidate{Kind: KindRemedy, Name: "subgoal_unmet_after_fill_bucket", Trigger: map[string]string{"call": "fill_bucket", "failure": FailSubgoalUnmet},
			FailureType: FailSubgoalUnmet, Repair: []string{"go_to"}, Support: []Ref{{Life: 1, ID: id}}, Confidence: 0.6, Source: "llm"}
	}
	k := Knowledge{Steps: map[string]bool{"go_to": true}, States: states}
	if acc, rej := CurateWith([]Candidate{rem("ep_000001")}, k); len(acc) != 0 || len(rej) != 1 ||
		!strings.Contains(rej[0].Reason, `trigger does not match the state it would be used in: call="fill_bucket", but ep_000001's state has "go_to"`) {
		t.Errorf("mismatched remedy: accepted %d, rejected %+v", len(acc), rej)
	}
	if acc, _ := CurateWith([]Candidate{rem("ep_000002")}, k); len(acc) != 1 {
		t.Errorf("matching remedy: %d accepted, want 1", len(acc))
	}
}

// C_conflict(k, K): a candidate for the trigger of an active entry of K
// with other content is rejected when K's entry is at least as confident
// (0.8 ≥ 0.667), accepted when more confident, and then supersedes it.
func TestConflictAgainstK(t *testing.T) {
	known := map[string]bool{"go_to": true, "pillar_up": true, "dig_down": true}
	old := Candidate{Kind: KindRemedy, Name: "nav_stuck_after_go_to", Trigger: map[string]string{"call": "go_to", "failure": FailNavStuck},
		FailureType: FailNavStuck, Repair: []string{"pillar_up"}, Support: []Ref{{Life: 1, ID: "ep_000001"}}, Confidence: 0.8, Source: "inducer"}
	old.setID()
	cand := func(conf float64) Candidate {
		c := Candidate{Kind: KindRemedy, Name: "nav_stuck_after_go_to", Trigger: map[string]string{"call": "go_to", "failure": FailNavStuck},
			FailureType: FailNavStuck, Repair: []string{"dig_down"}, Support: []Ref{{Life: 1, ID: "ep_000002"}}, Confidence: conf, Source: "inducer"}
		return c
	}
	acc, rej := CurateWith([]Candidate{cand(0.667)}, Knowledge{Steps: known, K: []Candidate{old}})
	if len(acc) != 0 || len(rej) != 1 || !strings.Contains(rej[0].Reason, "conflicts with "+old.ID+" of the knowledge store (confidence 0.800 ≥ 0.667)") {
		t.Fatalf("against a more confident K entry: accepted %d, rejected %+v", len(acc), rej)
	}
	// Without K (the check within one batch only) it was accepted.
	if acc, _ := CurateWith([]Candidate{cand(0.667)}, Knowledge{Steps: known}); len(acc) != 1 {
		t.Fatalf("without K: %d accepted, want 1", len(acc))
	}
	acc, _ = CurateWith([]Candidate{cand(0.9)}, Knowledge{Steps: known, K: []Candidate{old}})
	if len(acc) != 1 {
		t.Fatalf("more confident than K's entry: %d accepted, want 1", len(acc))
	}
	k := &K{Version: KVersion, Entries: []*KEntry{{Candidate: old, State: KActive}}}
	k2, _ := Evolve(k, acc, nil, nil, nil, time.Unix(0, 0))
	if len(k2.Entries) != 2 || k2.Entries[0].State != KSuperseded || k2.Entries[0].SupersededBy != acc[0].ID ||
		!strings.Contains(k2.Entries[0].StateReason, "confidence 0.900 > 0.800") || k2.Entries[1].State != KActive {
		t.Errorf("after the better entry: %+v", k2.Entries)
	}
}

// Evolve, worked by hand: a skill seen on 2 episodes (confidence 0.667)
// is accepted again with a third: merged, support 3, confidence 3/4 =
// 0.75; a remedy the Curator now rejects is retired with its reason; one
// citing only episodes no longer recorded is retired; a new one is
// inserted. The same pass again changes nothing.
func TestEvolve(t *testing.T) {
	skill := Candidate{Kind: KindSkill, Name: "get_log", Trigger: map[string]string{"item": "log"}, Steps: []string{"harvest_tree"}, Verify: "inv_ge log 1",
		Support: []Ref{{Life: 1, ID: "ep_000001"}, {Life: 1, ID: "ep_000002"}}, SupportCount: 2, Confidence: 0.667, Source: "inducer"}
	skill.setID()
	remedy := Candidate{Kind: KindRemedy, Name: "no_effect_after_look", Trigger: map[string]string{"call": "look", "failure": FailNoEffect}, FailureType: FailNoEffect,
		Repair: []string{"go_to"}, Support: []Ref{{Life: 1, ID: "ep_000003"}}, SupportCount: 1, Confidence: 0.667, Source: "inducer"}
	remedy.setID()
	gone := Candidate{Kind: KindRemedy, Name: "nav_stuck_after_go_to", Trigger: map[string]string{"call": "go_to", "failure": FailNavStuck}, FailureType: FailNavStuck,
		Repair: []string{"pillar_up"}, Support: []Ref{{Life: 1, ID: "ep_000099"}}, SupportCount: 1, Confidence: 0.667, Source: "inducer"}
	gone.setID()
	k := &K{Version: KVersion, Entries: []*KEntry{
		{Candidate: skill, State: KActive}, {Candidate: remedy, State: KActive}, {Candidate: gone, State: KActive},
	}}
	again := skill
	again.Support = []Ref{{Life: 1, ID: "ep_000002"}, {Life: 1, ID: "ep_000004"}}
	again.Confidence = 0.667
	rejected := remedy
	rejected.Status, rejected.Reason = StatusRejected, "not a failure to repair: look has no effect in 4 of its 5 episodes"
	fresh := Candidate{Kind: KindSkill, Name: "get_planks", Trigger: map[string]string{"item": "planks"}, Steps: []string{"craft"}, Verify: "inv_ge planks 4",
		Support: []Ref{{Life: 1, ID: "ep_000005"}}, Confidence: 0.5, Source: "inducer"}
	fresh.setID()
	recorded := map[string]bool{}
	for i := 1; i <= 5; i++ {
		recorded[EpisodeKey(1, fmt.Sprintf("ep_%06d", i))] = true
	}
	retrieved := map[string]int{skill.ID: 3}
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	k2, changes := Evolve(k, []Candidate{again, fresh}, []Candidate{rejected}, recorded, retrieved, now)
	if len(k.Entries) != 3 || k.Entries[0].SupportCount != 2 {
		t.Fatal("Evolve changed its input")
	}
	byID := map[string]*KEntry{}
	for _, e := range k2.Entries {
		byID[e.ID] = e
	}
	s := byID[skill.ID]
	if s.State != KActive || s.SupportCount != 3 || s.Confidence != 0.75 || s.Retrieved != 3 || len(s.History) != 1 {
		t.Errorf("merged skill: state %s support %d confidence %v retrieved %d history %q", s.State, s.SupportCount, s.Confidence, s.Retrieved, s.History)
	}
	if r := byID[remedy.ID]; r.State != KRetired || !strings.Contains(r.StateReason, "the curator now rejects it: not a failure to repair") {
		t.Errorf("rejected remedy: %s %q", r.State, r.StateReason)
	}
	if g := byID[gone.ID]; g.State != KRetired || !strings.Contains(g.StateReason, "none of its supporting episodes is recorded") {
		t.Errorf("unrecorded remedy: %s %q", g.State, g.StateReason)
	}
	if f := byID[fresh.ID]; f == nil || f.State != KActive || f.FirstSeen != "2026-12-04T01:00:00Z" {
		t.Errorf("new skill: %+v", f)
	}
	if len(changes) != 4 {
		t.Errorf("%d changes, want 4: %q", len(changes), changes)
	}
	k3, changes := Evolve(k2, []Candidate{again, fresh}, []Candidate{rejected}, recorded, retrieved, now.Add(time.Hour))
	if len(changes) != 0 || string(KJSON(k3)) != string(KJSON(k2)) {
		t.Errorf("the same pass again: changes %q, K changed: %v", changes, string(KJSON(k3)) != string(KJSON(k2)))
	}
}

// K persists in mine/knowledge/ and is read back: a second Compute over
// the same store starts from it (its entries keep their first_seen), a
// run with StaticK leaves it as read even when new evidence arrives, and
// the mount's tree serves it. A malformed file is an error naming it.
func TestKPersistsAndStatic(t *testing.T) {
	s := aimStore(t, []aimEp{
		{call: "harvest_tree", args: map[string]any{"logs": 2}, notes: []string{"harvest_tree: 2 log(s) collected"}, inv: map[string]int{"oak_log": 2}},
		{call: "collect_drops", args: map[string]any{"item": "oak_log"}, notes: []string{"collect_drops: picked up 1 item(s)"}, inv: map[string]int{"oak_log": 1}},
	})
	cfg := DefaultConfig()
	res, err := Compute(s, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, _, _ := res.K.Count(); a == 0 || len(res.KChanges) == 0 {
		t.Fatalf("first pass: %d active, changes %q", a, res.KChanges)
	}
	if err := WriteK(s, res.K); err != nil {
		t.Fatal(err)
	}
	k1, err := ReadK(s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(KJSON(k1), KJSON(res.K)) {
		t.Fatal("K read back differs from K written")
	}
	res2, err := Compute(s, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.KChanges) != 0 || string(KJSON(res2.K)) != string(KJSON(k1)) {
		t.Errorf("second pass over the same record: changes %q", res2.KChanges)
	}
	// New evidence: a look that missed, then another felling. Evolving K
	// merges it; the static store does not.
	appendEpisodes(t, s, 3, []aimEp{
		{call: "look_at", args: map[string]any{"x": 1}, notes: []string{"look_at: facing the block but the crosshair hits leaves"}},
		{call: "harvest_tree", args: map[string]any{"logs": 2}, notes: []string{"harvest_tree: 2 log(s) collected"}, inv: map[string]int{"oak_log": 2}},
		{call: "collect_drops", args: map[string]any{"item": "oak_log"}, notes: []string{"collect_drops: picked up 1 item(s)"}, inv: map[string]int{"oak_log": 1}},
	})
	static := cfg
	static.StaticK = true
	rs, err := Compute(s, static, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.KChanges) != 0 || string(KJSON(rs.K)) != string(KJSON(k1)) {
		t.Errorf("static store changed: %q", rs.KChanges)
	}
	re, err := Compute(s, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(re.KChanges) == 0 || !strings.Contains(strings.Join(re.KChanges, "\n"), "merged: +2 episode(s)") {
		t.Errorf("evolving store after new evidence: changes %q", re.KChanges)
	}
	tr := &Tree{Store: s, Config: cfg}
	b, _, err := tr.Open(context.Background(), "knowledge.json")
	if err != nil || !strings.Contains(string(b), `"state": "active"`) {
		t.Errorf("tree knowledge.json: %v\n%s", err, b)
	}
	os.WriteFile(s.Path(filepath.FromSlash(KnowledgeFile)), []byte("{not json"), 0o644)
	if _, err := Compute(s, cfg, nil); err == nil || !strings.Contains(err.Error(), "knowledge.json") {
		t.Errorf("malformed K: %v, want an error naming the file", err)
	}
}

// appendEpisodes adds eps to s's life as ep_<first>…, as aimStore writes them.
func appendEpisodes(t *testing.T, s *episodes.Store, first int, eps []aimEp) {
	t.Helper()
	tmp := aimStore(t, append(make([]aimEp, first-1), eps...))
	b, err := os.ReadFile(tmp.Path("index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	f, err := os.OpenFile(s.Path("index.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines[first:] {
		f.WriteString(l + "\n")
	}
	for i := first; i < first+len(eps); i++ {
		id := fmt.Sprintf("ep_%06d", i)
		if out, err := exec.Command("cp", "-r", tmp.Path("episodes", id), s.Path("episodes", id)).CombinedOutput(); err != nil {
			t.Fatal(err, string(out))
		}
	}
}

// ParseK never panics; what it accepts writes back to JSON it accepts
// again, with the same entries.
func FuzzParseK(f *testing.F) {
	f.Add([]byte(`{"version": 1, "entries": []}`))
	f.Add([]byte(`{"version": 1, "entries": [{"id": "skill-a-000000", "kind": "skill", "state": "active", "trigger": {"item": "log"}, "support": [{"life": 1, "id": "ep_000001"}], "confidence": 0.5}]}`))
	f.Add([]byte(`{"version": 2}`))
	f.Add([]byte(`{not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseK(b, "fuzz")
		if err != nil {
			return
		}
		k2, err := ParseK(KJSON(k), "fuzz")
		if err != nil {
			t.Fatalf("K written back is not accepted: %v", err)
		}
		if len(k2.Entries) != len(k.Entries) {
			t.Fatalf("%d entries read back, want %d", len(k2.Entries), len(k.Entries))
		}
	})
}

// A plan's declared goal of any form never panics the check, and one of
// no known form falls through to the call's purpose.
func FuzzCheckGoal(f *testing.F) {
	for _, g := range []string{"milestone water_1", "inv_ge cobblestone 3", "inv_ge x -1", "gui_open true", "log", "", "a b c d"} {
		f.Add(g)
	}
	f.Fuzz(func(t *testing.T, goal string) {
		fb := Feedback{Call: "harvest_tree", InvDelta: map[string]int{"oak_log": 1}, Milestones: []string{}}
		_, source, check := CheckSuccess(&fb, goal, trace{})
		if source != SubgoalPlan && source != SubgoalPurpose {
			t.Fatalf("goal %q: source %q", goal, source)
		}
		if check == "" {
			t.Fatalf("goal %q: no check stated", goal)
		}
	})
}

// After mfmd life new the episodes of an entry come back marked previous:
// the same evidence, not new. Merging them changes no count or
// confidence (before, the entry's support doubled, 3 → 6, and a skill's
// confidence rose to N/(N+1) of the doubled count); the refs say where
// the episodes are now.
func TestEvolveAcrossLives(t *testing.T) {
	refs := func(prev bool) []Ref {
		return []Ref{{Life: 1, ID: "ep_000004", Previous: prev}, {Life: 1, ID: "ep_000005", Previous: prev}, {Life: 1, ID: "ep_000006", Previous: prev}}
	}
	c := Candidate{Kind: KindSkill, Name: "pickaxe", Trigger: map[string]string{"gui_open": "false"}, Steps: []string{"mine_ahead", "craft"},
		Verify: "milestone pickaxe", Support: refs(false), SupportCount: 1, Confidence: 0.75, Source: "inducer"}
	c.setID()
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	k, _ := Evolve(&K{Version: KVersion}, []Candidate{c}, nil, nil, nil, now)
	c2 := c
	c2.Support = refs(true)
	k2, changes := Evolve(k, []Candidate{c2}, nil, nil, nil, now.Add(time.Hour))
	e := k2.Entries[0]
	if len(changes) != 0 || len(e.Support) != 3 || e.SupportCount != 3 || e.Confidence != 0.75 {
		t.Errorf("changes %q; support %d (count %d), confidence %.3f; want no change, 3, 0.75", changes, len(e.Support), e.SupportCount, e.Confidence)
	}
	for _, r := range e.Support {
		if !r.Previous {
			t.Errorf("ref %+v: want it marked previous", r)
		}
	}
}

// A skill's item is what its run yields: mine_ahead (tree +1) → craft
// (wood) → craft (stick) is used where sticks are wanted, and its first
// step names only tree. The Curator matches the item against every
// episode of the run (before, it rejected it: "item="stick", but
// ep_000006's state has items ["tree" "tree"]"); an item no episode of
// the run names is still rejected.
func TestSkillItemMatchesItsRun(t *testing.T) {
	states := map[string]StateFields{
		EpisodeKey(1, "ep_000006"): {Call: "mine_ahead", Items: []string{"tree", "tree"}},
		EpisodeKey(1, "ep_000007"): {Call: "craft", Items: []string{"tree", "wood", "wood"}},
		EpisodeKey(1, "ep_000008"): {Call: "craft", Items: []string{"stick", "wood", "stick"}},
	}
	skill := func(item string) Candidate {
		return Candidate{Kind: KindSkill, Name: "get_" + item, Trigger: map[string]string{"gui_open": "false", "item": item}, Steps: []string{"mine_ahead", "craft"},
			Verify: "inv_ge " + item + " 2", Support: []Ref{{Life: 1, ID: "ep_000006"}, {Life: 1, ID: "ep_000007"}, {Life: 1, ID: "ep_000008"}}, Confidence: 0.75, Source: "inducer"}
	}
	k := Knowledge{Steps: map[string]bool{"mine_ahead": true, "craft": true}, States: states}
	if acc, rej := CurateWith([]Candidate{skill("stick")}, k); len(acc) != 1 {
		t.Errorf("get_stick: accepted %d, rejected %v", len(acc), reasons(rej))
	}
	if _, rej := CurateWith([]Candidate{skill("diamond")}, k); len(rej) != 1 || !strings.Contains(rej[0].Reason, `item="diamond"`) {
		t.Errorf("get_diamond: rejected %v", reasons(rej))
	}
}
