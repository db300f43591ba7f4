package eval

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/audit"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
)

// simConfig is the committed sim-logs experiment's config with its chain.
func simConfig(t *testing.T) *Config {
	t.Helper()
	c, err := LoadConfig("../examples/eval/sim-logs/experiment.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.AuditChain() == nil {
		t.Fatal("the sim-logs experiment names no chain")
	}
	return c
}

// simStore plays plans on the sim world into a fresh store under the
// sim-logs target task and returns the store's directory.
func simStore(t *testing.T, plans ...string) string {
	t.Helper()
	b, err := os.ReadFile("../examples/eval/sim-logs/tasks/sim-logs.json")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := task.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	st, err := episodes.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := harness.NewRecorder(st, harness.Options{Task: tk.Instruction})
	if err != nil {
		t.Fatal(err)
	}
	w, err := play.NewSimWorld(rec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := play.NewSession(play.Options{Task: tk, Store: st, World: w})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if _, _, err := s.Act(context.Background(), p, "test"); err != nil {
			t.Fatalf("act %q: %v", p, err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestScoreSimStores scores sim stores against the sim-logs chain, by
// hand: stage weights are log 1 (produces tree 1), planks 6 (requires and
// consumes tree 1, produces wood 4), sticks 6 (requires and consumes
// wood 1, produces stick 4), 13 in all; VMP's states are tree (threshold
// 1), wood (4) and stick (4) of the reported stages.
func TestScoreSimStores(t *testing.T) {
	c := simConfig(t)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	cases := []struct {
		name                  string
		plans                 []string
		passed, reached, elig int
		tsr, wgp, vmp         float64
	}{
		// every stage: TSR 3/3, WGP 13/13, VMP 3/3
		{"all", []string{"go_to x=5 z=0; mine_ahead; craft item=wood; craft item=stick"}, 3, 3, 3, 1, 1, 1},
		// the log only: the planks stage is reported (not reached), the
		// sticks unattempted: TSR 1/3, WGP 1/13, VMP tree of tree, wood: 1/2
		{"log only", []string{"go_to x=5 z=0; mine_ahead"}, 1, 1, 2, 1.0 / 3, 1.0 / 13, 0.5},
		// no log: the log stage is not reached: TSR 0, WGP 0, VMP 0/1
		{"walk", []string{"go_to x=-5 z=0"}, 0, 0, 1, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ra := c.scoreStore("test", simStore(t, tc.plans...))
			if ra == nil || ra.Scores == nil {
				t.Fatalf("not scored: %+v", ra)
			}
			s := ra.Scores
			if s.Passed != tc.passed || s.Planned != 3 || s.Reached != tc.reached || s.Eligible != tc.elig ||
				!near(s.TSR, tc.tsr) || !near(s.WGP, tc.wgp) || !near(s.VMP, tc.vmp) || s.WGPFallback {
				t.Errorf("scores: passed %d of %d, TSR %.4f, WGP %.4f (%g of %g), VMP %.4f (%d of %d); want %d passed, TSR %.4f, WGP %.4f, VMP %.4f (%d of %d)\n%+v",
					s.Passed, s.Planned, s.TSR, s.WGP, s.WeightDone, s.WeightPlanned, s.VMP, s.Reached, s.Eligible,
					tc.passed, tc.tsr, tc.wgp, tc.vmp, tc.reached, tc.elig, s.Stages)
			}
			if ra.ChainSHA256 == "" || ra.Chain != c.AuditChain().Name {
				t.Errorf("chain not recorded: %+v", ra)
			}
		})
	}
	// a store with no recorded state is refused with the reason
	empty := filepath.Join(t.TempDir(), "empty")
	if _, err := episodes.Init(empty); err != nil {
		t.Fatal(err)
	}
	ra := c.scoreStore("empty", empty)
	if ra.Scores != nil || !strings.Contains(ra.Refused, "no recorded states") {
		t.Errorf("empty store: %+v", ra)
	}
}

// scored is a target result whose audit gives TSR, WGP, VMP = v and the
// given steps.
func scored(c *Config, cond, abl string, seed int64, v float64, steps int) Result {
	u := Unit{Kind: KindTarget, Condition: cond, Ablation: abl, Seed: seed}
	u.ID = "target/" + u.Arm() + "/seed"
	return Result{Unit: u, Status: "ok", Steps: steps,
		Runs:  []PlayRun{{Run: play.RunRecord{StepsUsed: steps, Termination: play.EndBudget}}},
		Audit: &RunAudit{Chain: c.chain.Name, ChainSHA256: c.chainSHA, Scores: &audit.Scores{TSR: v, WGP: v / 2, VMP: v, Planned: 3}}}
}

// TestReportContrasts: the report's transfer table holds audit.Contrasts
// over the seeds every condition scored, a refused run is listed with its
// reason and counts in no mean, and the ablations are paired with their
// condition. Numbers by hand:
//
//	seed      1    2    3
//	no-prior  0.2  0.4  (refused)
//	related   1.0  0.6  0.8
//	unrelated 0.2  0.6  0.4
//	shuffled  0.6  0.2  0.4
//
// over seeds 1, 2: ΔR = (0.8, 0.2), mean 0.5, sd 0.4243, t(0.975, 1) =
// 12.706, half width 12.706·0.4243/√2 = 3.812 → [−3.312, 4.312];
// ΔU = (0, 0.2) → +0.100; ΔS = (0.4, −0.2) → +0.100; GATG = 1 − 0.4 = 0.6,
// 0.6 − 0.4 = 0.2 → +0.400. No-prior TSR: 0.300 ± 0.141 over 2 runs.
// related+flat: 0.5, 0.5, 0.5 → Δ vs related (−0.5, −0.1, −0.3): −0.300,
// sd 0.2, half width 4.303·0.2/√3 = 0.497 → [−0.797, 0.197].
func TestReportContrasts(t *testing.T) {
	c := simConfig(t)
	c.Ablations = []string{"flat"}
	vals := map[string][3]float64{NoPrior: {0.2, 0.4, 0}, Related: {1, 0.6, 0.8}, Unrelated: {0.2, 0.6, 0.4}, Shuffled: {0.6, 0.2, 0.4}}
	var results []Result
	for _, cond := range Conditions {
		for i, seed := range []int64{1, 2, 3} {
			r := scored(c, cond, "", seed, vals[cond][i], 10*int(seed))
			if cond == NoPrior && seed == 3 {
				r.Audit.Scores, r.Audit.Refused = nil, "audit: the store cannot support a score: no recorded states"
			}
			results = append(results, r)
		}
	}
	for _, seed := range []int64{1, 2, 3} {
		results = append(results, scored(c, Related, "flat", seed, 0.5, 5))
	}
	out := t.TempDir()
	if err := WriteReport(c, out, results); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "report", ReportName))
	if err != nil {
		t.Fatal(err)
	}
	rep := string(b)
	for _, want := range []string{
		"| no-prior | 3 | 1 | 0.300 ± 0.141",
		"| TSR | 2 | +0.500 [-3.312, 4.312] | +0.100 [",
		" | +0.400 [",
		"| WGP | 2 | +0.250 [",
		"| related+flat | related | 3 | -0.300 [-0.797, 0.197] |",
		"seed 3: audit: the store cannot support a score: no recorded states",
		"`audit.Score`",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(rep, "not computed") {
		t.Errorf("a report with a chain says WGP and VMP are not computed:\n%s", rep)
	}
	for _, p := range []string{MilestonesPlot, ContrastsPlot} {
		if fi, err := os.Stat(filepath.Join(out, "report", p)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}

	// without a chain the report says what TSR is and that WGP and VMP
	// are not computed
	c.Chain, c.chain = "", nil
	if err := WriteReport(c, out, results); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(out, "report", ReportName))
	if !strings.Contains(string(b), "TSR is the run.json milestone share") || !strings.Contains(string(b), "WGP and VMP are not computed") || strings.Contains(string(b), "| WGP |") {
		t.Errorf("report without a chain:\n%s", b)
	}
}

// TestAuditOf: a recorded score is used only when it was taken with the
// same chain file; otherwise the store is scored again, or, without it,
// the run is refused with the reason.
func TestAuditOf(t *testing.T) {
	c := simConfig(t)
	out := t.TempDir()
	res := scored(c, Related, "", 1, 0.7, 10)
	if got := c.auditOf(out, res); got.Scores == nil || got.Scores.TSR != 0.7 {
		t.Errorf("recorded score not used: %+v", got)
	}
	res.Audit.ChainSHA256 = "0123456789abcdef"
	if got := c.auditOf(out, res); got.Scores != nil || !strings.Contains(got.Refused, "another chain file") {
		t.Errorf("stale score: %+v", got)
	}
	store := simStore(t, "go_to x=5 z=0; mine_ahead")
	if err := os.MkdirAll(res.Unit.dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(store, filepath.Join(res.Unit.dir(out), "store")); err != nil {
		t.Fatal(err)
	}
	if got := c.auditOf(out, res); got.Scores == nil || got.Scores.Passed != 1 {
		t.Errorf("store not rescored: %+v", got)
	}
	if _, err := ParseConfig([]byte(strings.Replace(goodConfig, `"agent_cmd"`, `"chain": "missing.json", "agent_cmd"`, 1)), t.TempDir()); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing chain file: %v", err)
	}
}
