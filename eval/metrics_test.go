package eval

import (
	"math"
	"slices"
	"testing"

	"github.com/mfm-project/mfm/play"
)

func run(ordered bool, steps int, term string, reached ...int64) play.RunRecord {
	r := play.RunRecord{Task: play.TaskRecord{Ordered: ordered}, StepsUsed: steps, Termination: term}
	for i, at := range reached {
		r.Milestones = append(r.Milestones, play.MilestoneRecord{Index: i, Reached: at >= 0, StepsFromStart: max(at, 0)})
	}
	return r
}

func TestScoreAndCurve(t *testing.T) {
	// an ordered task stops at its first unreached milestone: the third,
	// reached by the log, does not count; the unordered one counts it
	res := Result{Runs: []PlayRun{
		{Run: run(true, 50, play.EndBudget, 10, -1, 40)},
		{Run: run(false, 30, play.EndBudget, 5, -1, 20)},
	}}
	s := ScoreOf(res)
	if s.Reached != 3 || s.Planned != 6 || s.TSR != 0.5 || s.Steps != 80 || s.Done {
		t.Errorf("score %+v, want 3 of 6, TSR 0.5, 80 steps, not done", s)
	}
	// the second play's steps follow the first's 50
	if c := Curve(res); !slices.Equal(c, []int{10, 40, 55, 70}) {
		t.Errorf("curve %v", c)
	}
	for x, want := range map[int]int{0: 0, 9: 0, 10: 1, 54: 2, 55: 3, 100: 4} {
		if got := reachedBy([]int{10, 40, 55, 70}, x); got != want {
			t.Errorf("reachedBy %d = %d, want %d", x, got, want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// 1, 2, 3: mean 2, sd 1; t(0.975, 2) = 4.3027, half width 4.3027/sqrt(3) = 2.4841
	s := Summarize([]float64{1, 2, 3})
	if s.Mean != 2 || s.Std != 1 || math.Abs(s.Low-(2-2.4841)) > 1e-3 || math.Abs(s.High-(2+2.4841)) > 1e-3 {
		t.Errorf("summary %+v", s)
	}
	if s := Summarize([]float64{7}); s.Mean != 7 || s.HasInterval {
		t.Errorf("one value: %+v", s)
	}
}
