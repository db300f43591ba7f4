package consolidate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// aimEp is a constructed episode: its call with arguments (action.json), its
// outcome notes, inventory delta and milestones (outcome.json).
type aimEp struct {
	call  string
	args  map[string]any
	notes []string
	inv   map[string]int
	ms    []string
}

// aimStore writes eps as life 1 of a new store, one index row and an
// episode directory (action.json, outcome.json) each.
func aimStore(t *testing.T, eps []aimEp) *episodes.Store {
	t.Helper()
	s, err := episodes.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{`{"action_kind": null, "first_step": 0, "id": "ep_000000", "kind": "initial", "last_step": 0, "path": "episodes/ep_000000", "summary": "initial state", "tags": ["initial"], "x": 0.0, "y": 64.0, "z": 0.0}`}
	for i, e := range eps {
		n := i + 1
		lines = append(lines, row(n, e.call, 0, ""))
		dir := s.Path("episodes", fmt.Sprintf("ep_%06d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		moved := 0.0
		oc, _ := json.Marshal(map[string]any{"moved": moved, "inventory_delta": e.inv, "milestone_transition": e.ms, "notes": e.notes, "tags": []string{}})
		ac, _ := json.Marshal(map[string]any{"entry": map[string]any{"procedure": e.call, "args": e.args}})
		if err := os.WriteFile(filepath.Join(dir, "outcome.json"), oc, 0o644); err != nil {
			t.Fatal(err)
		}
		if e.args != nil {
			if err := os.WriteFile(filepath.Join(dir, "action.json"), ac, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(s.Path("index.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// The notes below are quoted from the two real stores' outcome.json
// (examples/runs/luanti-forest/store, the paper-run fixture).
const (
	noteNoLogs   = "harvest_tree: 0 log(s) collected (0 broken) in 400 ticks -- 1 approach(es), 1 chop(s), 0 empty, 1 leaf-clear(s). Budget of 400 ticks spent; Bark was in view"
	noteNoWater  = "fetch_water: stopped at (3183, 69, 1400) after 177 ticks and 0 blocks -- no still water in view from here in 12 headings (the largest reading 0.1% of the lower view)."
	noteLooking  = "fetch_water: looking for still water (the blue in the lower view), then walking to its shore through leaves and running fill_bucket there, up to 400 ticks"
	noteFilled   = "fill_bucket: the bucket filled -- water_bucket +1 (aim 2 of 25, pitch 35 yaw -13, 10 ticks). You now carry 1 water_bucket."
	noteNoBucket = "fill_bucket: you carry no bucket."
	noteUsedAt   = "use_at(water_bucket): used at (3168, 64, 1420) (below face) -- use_item +1, bucket +1, water_bucket -1."
	noteGovernor = "governor: STALLED at this spot -- 1 entries in a row changed nothing here (no event, no inventory change, no real movement)"
)

// Skill candidates and rejections on constructed sequences, worked out by
// hand (see each case). Remedies are not at stake here: none of the
// sequences has a failure.
func TestSkillAims(t *testing.T) {
	type want struct {
		accepted []string // "name: steps | verify"
		rejected []string // "name: steps | reason fragment"
		failing  []string // "ep_NNNNNN call" whose subgoal check fails (y = 0)
	}
	cases := []struct {
		name string
		eps  []aimEp
		want want
	}{{
		// The paper run's ep_000001–2: harvest_tree dug 7 dirt (and a
		// bucket showed up) but says 0 logs were collected; fetch_water
		// found no water and picked up a dirt. Neither gained what it is
		// for (log; water_bucket), so both fail their subgoal check (y = 0)
		// and there is no successful run to make a skill of.
		name: "get_dirt",
		eps: []aimEp{
			{call: "harvest_tree", args: map[string]any{"logs": 4, "n": 400}, notes: []string{noteNoLogs}, inv: map[string]int{"bucket": 1, "dirt": 7}},
			{call: "fetch_water", args: map[string]any{"n": 400}, notes: []string{noteLooking, noteNoWater}, inv: map[string]int{"dirt": 1}},
		},
		want: want{failing: []string{"ep_000001 harvest_tree", "ep_000002 fetch_water"}},
	}, {
		// A genuine felling: harvest_tree(logs=2) collected 2 logs (oak_log
		// +2), collect_drops picked up 6 items, 1 oak_log and 5 saplings.
		// Saplings were gained most (5 against 3), but only log was aimed
		// at (logs=2) and named collected: inv_ge oak_log 3, 2/3.
		name: "genuine",
		eps: []aimEp{
			{call: "harvest_tree", args: map[string]any{"logs": 2, "n": 400}, notes: []string{"harvest_tree: 2 log(s) collected (2 broken) in 310 ticks"}, inv: map[string]int{"oak_log": 2}},
			{call: "collect_drops", args: map[string]any{}, notes: []string{"collect_drops: picked up 6 item(s)"}, inv: map[string]int{"oak_log": 1, "sapling": 5}},
		},
		want: want{accepted: []string{"get_oak_log: harvest_tree→collect_drops | inv_ge oak_log 3"}},
	}, {
		// Dirt picked up by a use and a stow: both succeed (their purpose
		// is an inventory change) and are verified (a gain, no failure
		// phrase), a run of 2, but neither call aimed at an item or names
		// one collected: not a skill, the reason kept.
		name: "incidental",
		eps: []aimEp{
			{call: "use", args: map[string]any{"n": 30}, inv: map[string]int{"dirt": 1}},
			{call: "stow_items", args: map[string]any{"n": 8}, notes: []string{"stow_items: sorted the inventory"}, inv: map[string]int{"dirt": 1}},
		},
		want: want{rejected: []string{"get_dirt: use→stow_items | not a skill: the run gained dirt +2, but its steps aimed at or collected nothing"}},
	}, {
		// The paper run's water_1 (ep_000042–3): the use_at episode also
		// carries fill_bucket's "you carry no bucket" and the governor's
		// note — not use_at's own, so they say nothing of its aim; the
		// milestone verifies.
		name: "water_1",
		eps: []aimEp{
			{call: "fill_bucket", args: map[string]any{"ticks": 260}, notes: []string{noteFilled}, inv: map[string]int{"bucket": -1, "water_bucket": 1}},
			{call: "use_at", args: map[string]any{"item": "water_bucket", "face": "below"}, notes: []string{noteGovernor, "use_at(water_bucket) at (3168, 64, 1420), below face", noteNoBucket, noteUsedAt},
				inv: map[string]int{"bucket": 1, "water_bucket": -1}, ms: []string{"water_1"}},
		},
		want: want{accepted: []string{"water_1: fill_bucket→use_at | milestone water_1"}},
	}, {
		// The Luanti felling: mine_ahead(block=tree) broke a tree (+1),
		// collect_drops(item=tree) picked up 2 tree and 4 leaves: verify
		// inv_ge tree 3, not the 4 leaves. Then a look_at that missed
		// ("the crosshair hits leaves") and a mine_ahead whose block "did
		// not break" picked up a sapling and leaves: unverified, which ends
		// the skill's run. Both fail their subgoal check: the look did not
		// face the tree, the block did not break.
		name: "luanti",
		eps: []aimEp{
			{call: "mine_ahead", args: map[string]any{"block": "tree"}, notes: []string{"mine_ahead: broke tree"}, inv: map[string]int{"tree": 1}},
			{call: "collect_drops", args: map[string]any{"item": "tree"}, notes: []string{"collect_drops: picked up 6 item(s)"}, inv: map[string]int{"tree": 2, "leaves": 4}},
			{call: "look_at", args: map[string]any{"x": -73, "y": 13, "z": 190}, notes: []string{"look_at: facing the block but the crosshair hits leaves at -73,13,190"}, inv: map[string]int{"sapling": 1}},
			{call: "mine_ahead", args: map[string]any{"block": "tree"}, notes: []string{"mine_ahead: the block did not break in 8 s"}, inv: map[string]int{"leaves": 1}},
		},
		want: want{
			accepted: []string{"get_tree: mine_ahead→collect_drops | inv_ge tree 3"},
			failing:  []string{"ep_000003 look_at", "ep_000004 mine_ahead"},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := aimStore(t, tc.eps)
			cfg := DefaultConfig()
			fb, err := Monitor(s, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var failing []string
			for _, f := range fb {
				if !f.Success {
					failing = append(failing, f.Episode+" "+f.Call)
				}
			}
			if !reflect.DeepEqual(failing, tc.want.failing) {
				t.Errorf("failing episodes %q, want %q", failing, tc.want.failing)
			}
			acc, rej := CurateWith(Induce(fb, cfg), Knowledge{Steps: Known(s, fb), Episodes: KnownEpisodes(fb)})
			var gotAcc []string
			for _, c := range acc {
				if c.Kind == KindSkill {
					gotAcc = append(gotAcc, fmt.Sprintf("%s: %s | %s", c.Name, strings.Join(c.Steps, "→"), c.Verify))
				}
			}
			if !reflect.DeepEqual(gotAcc, tc.want.accepted) {
				t.Errorf("accepted skills %q, want %q", gotAcc, tc.want.accepted)
			}
			var gotRej []string
			for _, c := range rej {
				if c.Kind == KindSkill {
					gotRej = append(gotRej, fmt.Sprintf("%s: %s | %s", c.Name, strings.Join(c.Steps, "→"), c.Reason))
				}
			}
			if len(gotRej) != len(tc.want.rejected) {
				t.Fatalf("rejected skills %q, want %d like %q", gotRej, len(tc.want.rejected), tc.want.rejected)
			}
			for i, w := range tc.want.rejected {
				if !strings.HasPrefix(gotRej[i], w) {
					t.Errorf("rejected %q, want it to start %q", gotRej[i], w)
				}
			}
		})
	}
}

// Per episode: which of the real stores' notes say the call failed its
// aim, which are another call's (or the governor's), and what the
// arguments and notes say it aimed at.
func TestAimFeedback(t *testing.T) {
	cases := []struct {
		call   string
		args   map[string]any
		notes  []string
		failed string // prefix of AimFailed; "" none
		aimed  []string
	}{
		{"harvest_tree", map[string]any{"logs": 4.0, "n": 400.0}, []string{noteNoLogs}, "harvest_tree: 0 log(s) collected", []string{"log"}},
		{"harvest_tree", map[string]any{"logs": 1.0}, []string{"harvest_tree: no trunk detected (6 frames). Turn toward visible LEAVES and retry"}, "harvest_tree: no trunk detected", []string{"log"}},
		{"chop_tree", map[string]any{"until_logs": 1.0, "n": 220.0}, []string{"chop stopped early: 75 ticks and nothing broke -- the block is out of reach"}, "chop stopped early", []string{"log"}},
		{"fill_bucket", map[string]any{"ticks": 210.0}, []string{"fill_bucket: nothing filled in 25 aims / 210 ticks"}, "fill_bucket: nothing filled", nil},
		{"fill_bucket", map[string]any{"ticks": 260.0}, []string{noteFilled}, "", []string{"water_bucket"}},
		{"use_at", map[string]any{"item": "bucket"}, []string{"use_at(bucket): the bucket had no visible effect at (3170, 68, 1412) after 3 face(s)"}, "use_at(bucket): the bucket had no visible effect", []string{"bucket"}},
		{"use_at", map[string]any{"item": "water_bucket"}, []string{noteGovernor, noteNoBucket, noteUsedAt}, "", []string{"bucket", "water_bucket"}},
		{"use_on_entity", map[string]any{"item": "bucket", "label": "cow"}, []string{"use_on_entity(bucket): it registered on the 1. try -- bucket -1, milk_bucket +1."}, "", []string{"bucket", "milk_bucket"}},
		{"go_to", nil, []string{"procedure 'scan_around' NOT STARTED: it needs 132 ticks"}, "", nil},
		{"scan_around", nil, []string{"procedure 'scan_around' NOT STARTED: it needs 132 ticks"}, "procedure 'scan_around' not started", nil},
		{"go_to", nil, []string{"go_to: blocked: no progress for 3 s, 5.7 blocks short"}, "go_to: blocked", nil},
		{"collect_drops", map[string]any{"item": "tree"}, []string{"collect_drops: blocked 2 blocks from the drops"}, "collect_drops: blocked", []string{"tree"}},
		{"mine_ahead", map[string]any{"block": "tree"}, []string{"mine_ahead: broke tree"}, "", []string{"tree"}},
		{"mine_ahead", map[string]any{"block": "tree"}, []string{"mine_ahead: the block did not break in 8 s"}, "mine_ahead: the block did not break", []string{"tree"}},
		{"look_at", nil, []string{"look_at: facing the block but the crosshair hits nothing"}, "look_at: facing the block but the crosshair hits", nil},
		{"look_at", nil, []string{"look_at: pointing at tree"}, "", nil},
		{"pillar_up", nil, []string{"pillar_up: 5 of 5 dirt placed, now at y 69. Done."}, "", nil},
		{"harvest_tree", nil, []string{"harvest_tree: 3 log(s) collected (3 broken) in 300 ticks -- ground broke under three foot probes"}, "", []string{"log"}},
	}
	for _, c := range cases {
		own := ownNotes(c.call, c.notes)
		failed := aimFailure(own)
		if c.failed == "" && failed != "" || !strings.HasPrefix(failed, c.failed) {
			t.Errorf("%s %q: aim failed %q, want %q", c.call, c.notes, failed, c.failed)
		}
		if got := aimedItems(c.args, own); !reflect.DeepEqual(got, c.aimed) && !(len(got) == 0 && len(c.aimed) == 0) {
			t.Errorf("%s %v %q: aimed %q, want %q", c.call, c.args, c.notes, got, c.aimed)
		}
	}
	if !itemAimed("oak_log", []string{"log"}) || itemAimed("log", []string{"oak_log"}) || itemAimed("dirt", []string{"log", "tree"}) {
		t.Error("itemAimed: want oak_log a kind of log, nothing else")
	}
}
