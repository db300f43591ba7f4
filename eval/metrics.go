package eval

// The run.json measures of a target run: its milestones and steps, the
// milestone curve of the plot, and the per-arm summaries. MC-EvoBench's
// TSR, WGP and VMP and the paired contrasts come from package audit
// (audit.go); without a chain the report's TSR is ScoreOf's milestone
// share.

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/mfm-project/mfm/audit"
	"github.com/mfm-project/mfm/play"
)

// reachedOf counts a run's milestones reached and planned. For an
// ordered task a milestone counts only when every one before it was
// reached (the stop at the first failing stage).
func reachedOf(run play.RunRecord) (reached, planned int) {
	planned = len(run.Milestones)
	for _, m := range run.Milestones {
		if !m.Reached {
			if run.Task.Ordered {
				break
			}
			continue
		}
		reached++
	}
	return reached, planned
}

// Score is one target run's metrics.
type Score struct {
	Reached int // milestones reached over the target sequence
	Planned int
	// TSR is Reached / Planned: the stage success rate over the planned
	// milestones, stopping at the first failing one of an ordered task.
	TSR   float64
	Steps int  // environment steps used over the sequence
	Done  bool // every play ended done
}

// ScoreOf scores a target result.
func ScoreOf(res Result) Score {
	var s Score
	s.Done = len(res.Runs) > 0
	for _, p := range res.Runs {
		r, n := reachedOf(p.Run)
		s.Reached += r
		s.Planned += n
		s.Steps += p.Run.StepsUsed
		s.Done = s.Done && p.Run.Termination == play.EndDone
	}
	if s.Planned > 0 {
		s.TSR = float64(s.Reached) / float64(s.Planned)
	}
	return s
}

// Curve is the milestones a target run had reached by each step, over
// its sequence (the steps of later plays follow the earlier ones'):
// Steps[i] is when the (i+1)-th milestone was reached.
func Curve(res Result) []int {
	var steps []int
	offset := 0
	for _, p := range res.Runs {
		for _, m := range p.Run.Milestones {
			if m.Reached {
				steps = append(steps, offset+int(m.StepsFromStart))
			}
		}
		offset += p.Run.StepsUsed
	}
	sort.Ints(steps)
	return steps
}

// reachedBy is how many milestones the curve has reached by step x.
func reachedBy(curve []int, x int) int {
	return sort.SearchInts(curve, x+1)
}

// Summary is a sample's mean, standard deviation and 95% t-interval of
// the mean (the interval is NaN for fewer than two values).
type Summary struct {
	N           int
	Mean, Std   float64
	Low, High   float64
	HasInterval bool
}

// Summarize summarises xs: the mean, and with two values or more the
// standard deviation and the 95% t-interval of audit.Interval.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs), Low: math.NaN(), High: math.NaN()}
	if len(xs) == 0 {
		s.Mean, s.Std = math.NaN(), math.NaN()
		return s
	}
	s.Mean = stat.Mean(xs, nil)
	if len(xs) < 2 {
		return s
	}
	c, err := audit.Interval(xs)
	if err != nil { // a non-finite value: no interval
		s.Std = stat.StdDev(xs, nil)
		return s
	}
	s.Std, s.Low, s.High, s.HasInterval = c.SD, c.Lo, c.Hi, true
	return s
}
