package audit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Contrast is a mean of per-seed differences with its two-sided Student-t
// interval (MC-EvoBench eq. D.2): Mean ± t(1−α/2, N−1)·SD/√N.
type Contrast struct {
	N     int       `json:"n"`
	Diffs []float64 `json:"diffs"` // the per-seed differences, in seed order
	Mean  float64   `json:"mean"`
	SD    float64   `json:"sd"` // sample standard deviation (N−1)
	// Level is the interval's confidence (0.95); T the t quantile used.
	Level float64 `json:"level"`
	T     float64 `json:"t"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// Level95 is the interval level MC-EvoBench reports.
const Level95 = 0.95

// Interval summarises per-seed differences d with the two-sided 95%
// Student-t interval. It needs at least two values (one has no spread:
// Lo and Hi are then NaN) and refuses none or a non-finite value.
func Interval(d []float64) (Contrast, error) {
	if len(d) == 0 {
		return Contrast{}, fmt.Errorf("interval: no paired values")
	}
	for i, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Contrast{}, fmt.Errorf("interval: value %d is %v", i, v)
		}
	}
	c := Contrast{N: len(d), Diffs: append([]float64(nil), d...), Level: Level95}
	c.Mean = stat.Mean(d, nil)
	if c.N < 2 {
		c.SD, c.T, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return c, nil
	}
	c.SD = stat.StdDev(d, nil)
	c.T = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(c.N - 1)}.Quantile(1 - (1-Level95)/2)
	half := c.T * c.SD / math.Sqrt(float64(c.N))
	c.Lo, c.Hi = c.Mean-half, c.Mean+half
	return c, nil
}

// Paired is the within-seed contrast x − y (x[i] and y[i] from the same
// seed) with its interval: ΔR = Paired(related, noPrior).
func Paired(x, y []float64) (Contrast, error) {
	if len(x) != len(y) {
		return Contrast{}, fmt.Errorf("paired: %d against %d values (one per seed each)", len(x), len(y))
	}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	return Interval(d)
}

// GATG is the control-adjusted contrast R − (U+S)/2 per seed with its
// interval (MC-EvoBench section 4.4; descriptive, not a benchmark metric).
func GATG(related, unrelated, shuffled []float64) (Contrast, error) {
	if len(related) != len(unrelated) || len(related) != len(shuffled) {
		return Contrast{}, fmt.Errorf("GATG: %d related, %d unrelated, %d shuffled values (one per seed each)", len(related), len(unrelated), len(shuffled))
	}
	d := make([]float64, len(related))
	for i := range related {
		d[i] = related[i] - (unrelated[i]+shuffled[i])/2
	}
	return Interval(d)
}

// Transfer holds one metric's four target scores per seed (no-prior,
// related, unrelated, shuffled) and their contrasts.
type Transfer struct {
	DeltaR Contrast `json:"delta_r"` // related − no-prior
	DeltaU Contrast `json:"delta_u"` // unrelated − no-prior
	DeltaS Contrast `json:"delta_s"` // shuffled − no-prior
	GATG   Contrast `json:"gatg"`    // related − (unrelated + shuffled)/2
}

// Contrasts computes ΔR, ΔU, ΔS (eq. D.1) and GATG from per-seed scores of
// one metric under the four conditions, index i being seed i throughout.
func Contrasts(noPrior, related, unrelated, shuffled []float64) (Transfer, error) {
	var t Transfer
	var err error
	if t.DeltaR, err = Paired(related, noPrior); err != nil {
		return t, fmt.Errorf("ΔR: %w", err)
	}
	if t.DeltaU, err = Paired(unrelated, noPrior); err != nil {
		return t, fmt.Errorf("ΔU: %w", err)
	}
	if t.DeltaS, err = Paired(shuffled, noPrior); err != nil {
		return t, fmt.Errorf("ΔS: %w", err)
	}
	if t.GATG, err = GATG(related, unrelated, shuffled); err != nil {
		return t, err
	}
	return t, nil
}
