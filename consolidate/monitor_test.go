package consolidate

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// ep is a constructed episode: its index row and, optionally, the files
// of its directory.
type ep struct {
	call    string
	tags    []string
	pos     [3]float64       // the row's (start) position
	state   map[string]any   // state/state.json
	steps   []map[string]any // steps.jsonl states, in order
	outcome map[string]any   // outcome.json
}

func pose(x, y, z, yaw, pitch float64) map[string]any {
	return map[string]any{"pos": map[string]float64{"x": x, "y": y, "z": z, "yaw": yaw, "pitch": pitch}}
}

// buildStore writes eps as life 1 of a new store, after an initial row.
// Each episode spans 10 steps; steps.jsonl rows are numbered from first_step+1.
func buildStore(t *testing.T, eps []ep) *episodes.Store {
	t.Helper()
	s, err := episodes.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{`{"action_kind": null, "first_step": 0, "id": "ep_000000", "kind": "initial", "last_step": 0, "path": "episodes/ep_000000", "summary": "initial state", "tags": ["initial"], "x": 0.0, "y": 64.0, "z": 0.0}`}
	for i, e := range eps {
		n := i + 1
		id := fmt.Sprintf("ep_%06d", n)
		row := map[string]any{"action_kind": e.call, "first_step": n * 10, "id": id, "kind": "episode", "last_step": n*10 + 10,
			"path": "episodes/" + id, "summary": "", "tags": append([]string{}, e.tags...), "x": e.pos[0], "y": e.pos[1], "z": e.pos[2]}
		j, _ := json.Marshal(row)
		lines = append(lines, string(j))
		dir := s.Path("episodes", id)
		write := func(name string, v any) {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(v)
			if err := os.WriteFile(filepath.Join(dir, name), j, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if e.state != nil {
			write("state/state.json", e.state)
		}
		if e.outcome != nil {
			write("outcome.json", e.outcome)
		}
		if e.steps != nil {
			var b strings.Builder
			for k, st := range e.steps {
				j, _ := json.Marshal(map[string]any{"step": n*10 + k + 1, "action": map[string]any{"keys": []string{}}, "state": st})
				b.Write(j)
				b.WriteByte('\n')
			}
			if err := os.WriteFile(filepath.Join(dir, "steps.jsonl"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(s.Path("index.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestProgressFormula checks p = λx·Var(x)/(εx+Var(x)) + λv·|Δv|₁/(εv+|Δv|₁) + λg·p_goal
// and p < εp ∧ ¬success against numbers worked by hand.
func TestProgressFormula(t *testing.T) {
	def := DefaultConfig()
	other := Config{LambdaX: 1, LambdaV: 0.5, LambdaG: 0.25, EpsX: 2, EpsV: 3, EpsP: 0.3}
	for _, c := range []struct {
		cfg             Config
		varX, dv, pGoal float64
		want            float64
	}{
		{def, 0, 0, 0, 0},
		{def, 1, 0, 0, 0.2},          // 0.4·1/2
		{def, 0, 4, 0, 0.32},         // 0.4·4/5
		{def, 0, 0, 1, 0.2},          // 0.2·1
		{def, 2.24, 0, 0, 0.2765432}, // 0.4·2.24/3.24
		{def, 1.25, 3, 0, 0.5222222}, // 0.4·1.25/2.25 + 0.4·3/4
		{def, 100, 1, 1, 0.7960396},  // 0.4·100/101 + 0.4·1/2 + 0.2
		{other, 2, 3, 1, 1},          // 1·2/4 + 0.5·3/6 + 0.25
		{other, 6, 0, 0, 0.75},       // 1·6/8
	} {
		if got := Progress(c.cfg, c.varX, c.dv, c.pGoal); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("Progress(%+v, %v, %v, %v) = %v, want %v", c.cfg, c.varX, c.dv, c.pGoal, got, c.want)
		}
	}
	for _, c := range []struct {
		p       float64
		success bool
		want    bool
	}{{0, false, true}, {0.099, false, true}, {0.1, false, false}, {0, true, false}, {0.5, true, false}} {
		if got := Stagnant(def, c.p, c.success); got != c.want {
			t.Errorf("Stagnant(%v, %v) = %v, want %v", c.p, c.success, got, c.want)
		}
	}
	for _, c := range []struct {
		ps   [][3]float64
		want float64
	}{
		{[][3]float64{{0, 0, 0}}, 0},
		{[][3]float64{{0, 0, 0}, {20, 0, 0}}, 100},                                  // (20/2)²
		{[][3]float64{{0, 0, 0}, {2, 0, 0}, {4, 0, 0}}, 8.0 / 3},                    // (4+0+4)/3
		{[][3]float64{{0, 0, 0}, {3, 4, 0}}, 6.25},                                  // (5/2)²
		{[][3]float64{{0, 0, 0}, {2, 0, 0}, {4, 0, 0}, {2, 0, 0}, {0, 0, 0}}, 2.24}, // mean 1.6: (2.56+0.16+5.76+0.16+2.56)/5
	} {
		if got := Variance(c.ps); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Variance(%v) = %v, want %v", c.ps, got, c.want)
		}
	}
}

// TestMonitorTable runs the Monitor over constructed episodes whose
// feedback was worked out by hand.
func TestMonitorTable(t *testing.T) {
	at := func(x, y, z float64) map[string]any { return pose(x, y, z, 0, 0) }
	look := func(yaw, pitch float64) map[string]any { return pose(0, 64, 0, yaw, pitch) }
	eps := []ep{
		// 1: walks 4 blocks out and back: start and end agree, the steps do not.
		// Positions x 0,2,4,2,0: mean 1.6, Var 2.24 → p = 0.4·2.24/3.24 = 0.277.
		{call: "go_to", pos: [3]float64{0, 64, 0}, state: at(0, 64, 0),
			steps: []map[string]any{at(2, 64, 0), at(4, 64, 0), at(2, 64, 0), at(0, 64, 0)}},
		// 2: turns the camera only: no failure, no progress, not stagnant.
		{call: "look_abs", pos: [3]float64{0, 64, 0}, state: look(0, 0), steps: []map[string]any{look(45, 5), look(90, 10)}},
		// 3: a look_at that turned nothing (already aimed): NO_EFFECT, stagnant.
		{call: "look_at", pos: [3]float64{0, 64, 0}, state: look(90, 10), steps: []map[string]any{look(90, 10)}},
		// 4: yaw 359.5 → 0.2 is a 0.7° turn: NO_EFFECT.
		{call: "turn", pos: [3]float64{0, 64, 0}, state: look(359.5, 0), steps: []map[string]any{look(0.2, 0)}},
		// 5: log +3, sapling -1, milestone: |Δv|₁ = 4 → 0.4·4/5 + 0.2 = 0.52.
		{call: "harvest_tree", pos: [3]float64{0, 64, 0}, state: at(0, 64, 0),
			outcome: map[string]any{"moved": 0.0, "inventory_delta": map[string]int{"log": 3, "sapling": -1}, "milestone_transition": []string{"wood_1"}}},
		// 6: pillar_up 64 → 67 (no horizontal move): Var of y 64..67 = 1.25,
		// dirt -3 → 0.4·1.25/2.25 + 0.4·3/4 = 0.522.
		{call: "pillar_up", pos: [3]float64{0, 64, 0}, state: at(0, 64, 0),
			steps:   []map[string]any{at(0, 65, 0), at(0, 66, 0), at(0, 67, 0)},
			outcome: map[string]any{"moved": 0.0, "inventory_delta": map[string]int{"dirt": -3}}},
		// 7: stuck, 0.2 blocks: Var of x 0,0.1,0.2 = 0.00667 → p 0.003: stagnant.
		{call: "go_to", tags: []string{"stuck"}, pos: [3]float64{0, 67, 0}, state: at(0, 67, 0),
			steps: []map[string]any{at(0.1, 67, 0), at(0.2, 67, 0)}},
		// 8: damaged but gained an apple: p = 0.4·1/2 = 0.2 ≥ εp: failed, not stagnant.
		{call: "eat", tags: []string{"damage"}, pos: [3]float64{0.2, 67, 0}, state: at(0.2, 67, 0),
			outcome: map[string]any{"moved": 0.0, "inventory_delta": map[string]int{"apple": 1}}},
		// 9: no episode files; "look" is a camera atom, so not NO_EFFECT.
		{call: "look", pos: [3]float64{0.2, 67, 0}},
		// 10: no files, "wait" is not: NO_EFFECT (the next row is at the same place).
		{call: "wait", pos: [3]float64{0.2, 67, 0}},
		// 11: select changes the held item only.
		{call: "select", pos: [3]float64{0.2, 67, 0}, state: map[string]any{"mainhand": "air", "pos": map[string]float64{"x": 0.2, "y": 67, "z": 0}},
			outcome: map[string]any{"moved": 0.0, "end_state": map[string]any{"mainhand": "pick_stone", "pos": map[string]float64{"x": 0.2, "y": 67, "z": 0}}}},
		// 12: broke a block, nothing picked up: the world changed.
		{call: "mine_ahead", pos: [3]float64{0.2, 67, 0}, state: at(0.2, 67, 0),
			outcome: map[string]any{"moved": 0.0, "events": []string{"mine_block leaves at 1,68,0"}, "notes": []string{"mine_ahead: broke leaves"}}},
		// 13: tagged stuck, but it arrived (it was 0.4 from the target).
		{call: "go_to", tags: []string{"stuck"}, pos: [3]float64{0.2, 67, 0}, state: at(0.2, 67, 0),
			outcome: map[string]any{"moved": 0.1, "notes": []string{"go_to: arrived 0.4 from the target"}}},
		// 14: tagged stuck and blocked: NAV_STUCK.
		{call: "go_to", tags: []string{"stuck"}, pos: [3]float64{0.2, 67, 0}, state: at(0.2, 67, 0),
			outcome: map[string]any{"moved": 0.1, "notes": []string{"go_to: blocked: no progress for 3 s, 5.8 blocks short"}}},
		// 15: moved 3 blocks (no stuck tag) but says it was blocked: NAV_STUCK.
		// Positions x 0.2, 1.7, 3.2: Var 1.5 → 0.4·1.5/2.5 = 0.24 (failed, not stagnant).
		{call: "go_to", pos: [3]float64{0.2, 67, 0}, state: at(0.2, 67, 0), steps: []map[string]any{at(1.7, 67, 0), at(3.2, 67, 0)},
			outcome: map[string]any{"moved": 3.0, "notes": []string{"go_to: blocked: no progress for 3 s, 7.8 blocks short"}}},
		{call: "wait", pos: [3]float64{0.2, 67, 0}},
	}
	s := buildStore(t, eps)
	fb, err := Monitor(s, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		failure  string
		changed  string
		progress float64
		stagnant bool
		verified bool
	}{
		{"", "position", 0.277, false, false},
		{"", "camera", 0, false, false},
		{FailNoEffect, "", 0, true, false},
		{FailNoEffect, "", 0, true, false},
		{"", "inventory milestone", 0.52, false, true},
		{"", "position inventory", 0.522, false, false},
		{FailNavStuck, "", 0.003, true, false},
		{FailDamage, "inventory", 0.2, false, true},
		{"", "camera", 0, false, false},
		{FailNoEffect, "", 0, true, false},
		{"", "mainhand", 0, false, false},
		{"", "world", 0, false, false},
		{"", "", 0, false, false},
		{FailNavStuck, "", 0, true, false},
		{FailNavStuck, "position", 0.24, false, false},
	}
	if len(fb) != len(eps) {
		t.Fatalf("%d feedback rows, want %d", len(fb), len(eps))
	}
	for i, w := range want {
		f := fb[i]
		if f.Failure != w.failure || strings.Join(f.Changed, " ") != w.changed || f.Progress != w.progress || f.Stagnant != w.stagnant || f.Verified != w.verified || f.Success != (w.failure == "") {
			t.Errorf("ep %d %s: failure %q changed %q progress %v stagnant %v verified %v success %v; want %+v",
				i+1, f.Call, f.Failure, strings.Join(f.Changed, " "), f.Progress, f.Stagnant, f.Verified, f.Success, w)
		}
	}
}
