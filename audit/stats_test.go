package audit

import (
	"math"
	"testing"
)

func relNear(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Abs(want)
}

// TestFisherExact against hand-worked hypergeometric sums.
func TestFisherExact(t *testing.T) {
	cases := []struct {
		name              string
		a, b, c, d        int
		twoSided, greater float64
	}{
		// Fisher's tea tasting: P(3 of 4 right) = C(4,3)C(4,1)/C(8,4) =
		// 16/70, P(4) = 1/70; greater = 17/70; the tables no more probable
		// than 16/70 are x = 0, 1, 3, 4: 34/70.
		{"tea", 3, 1, 1, 3, 34.0 / 70, 17.0 / 70},
		// a perfect split of 20: 1/C(20,10) each way
		{"perfect", 10, 0, 0, 10, 2.0 / 184756, 1.0 / 184756},
		// no difference: every table counts; greater = P(x >= 1) = 1
		{"even", 1, 1, 1, 1, 1, 5.0 / 6},
		// 0 of 2 against 2 of 2: C(2,0)C(2,2)/C(4,2) = 1/6; both tails: 2/6
		{"reverse", 0, 2, 2, 0, 2.0 / 6, 1},
	}
	for _, tc := range cases {
		two, gr, err := FisherExact(tc.a, tc.b, tc.c, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if !relNear(two, tc.twoSided, 1e-9) || !relNear(gr, tc.greater, 1e-9) {
			t.Errorf("%s: two-sided %.10g greater %.10g, want %.10g %.10g", tc.name, two, gr, tc.twoSided, tc.greater)
		}
	}
	if _, _, err := FisherExact(-1, 0, 0, 0); err == nil {
		t.Error("negative count: no error")
	}
}

// TestBinomialTail against hand-worked sums and MFM's Fig. 16 figure.
func TestBinomialTail(t *testing.T) {
	cases := []struct {
		k, n int
		p    float64
		want float64
	}{
		{8, 10, 0.5, 56.0 / 1024}, // C(10,8)+C(10,9)+C(10,10) = 45+10+1 over 2^10
		{1, 3, 0.5, 7.0 / 8},
		{3, 3, 0.2, 0.008},
		{0, 5, 0.3, 1},
		// MFM section A.4: 42 of 48 against a 37% null, "p = 6e-13"
		// (exact sum: 6.1084e-13)
		{42, 48, 0.37, 6.108419993701717e-13},
	}
	for _, tc := range cases {
		got, err := BinomialTail(tc.k, tc.n, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if !relNear(got, tc.want, 1e-9) {
			t.Errorf("P(X >= %d | n=%d, p=%g) = %.10g, want %.10g", tc.k, tc.n, tc.p, got, tc.want)
		}
	}
	for _, bad := range [][3]float64{{5, 3, 0.5}, {1, 3, 1.5}, {-1, 3, 0.5}} {
		if _, err := BinomialTail(int(bad[0]), int(bad[1]), bad[2]); err == nil {
			t.Errorf("BinomialTail%v: no error", bad)
		}
	}
}

// TestContrastsAgainstTable4 recomputes MC-EvoBench's Table 4 TSR row
// from the per-seed scores of its Table D3 (five seeds; t(0.975, 4) =
// 2.7764).
//
// Wood species GATG per seed: -0.5, 1, -0.5, 0, 0.25: mean 0.05; squared
// deviations .3025+.9025+.3025+.0025+.04 = 1.55, s = sqrt(1.55/4) =
// 0.6225, half-width 2.7764*0.6225/sqrt(5) = 0.773: [-0.723, 0.823].
func TestContrastsAgainstTable4(t *testing.T) {
	type probe struct {
		name       string
		n, r, u, s []float64
		deltaR     float64
		gatg       float64
		lo, hi     float64
	}
	for _, p := range []probe{
		{"wood species", []float64{0, .5, .5, 1, 0}, []float64{0, 1, 0, 0, 1}, []float64{0, 0, 0, 0, 1}, []float64{1, 0, 1, 0, .5}, 0, 0.05, -0.723, 0.823},
		{"wooden tool", []float64{.2, .2, .8, .2, .2}, []float64{.2, 0, .4, .4, 0}, []float64{.2, 0, .4, .2, 0}, []float64{.2, 0, .2, .4, .4}, -0.12, 0, -0.152, 0.152},
		{"stone tool", []float64{.125, .125, .125, .125, .25}, []float64{.125, 0, 0, .125, 0}, []float64{0, 0, 0, .125, 0}, []float64{0, .125, 0, .125, .125}, -0.1, 0, -0.095, 0.095},
	} {
		tr, err := Contrasts(p.n, p.r, p.u, p.s)
		if err != nil {
			t.Fatal(err)
		}
		r3 := func(x float64) float64 { return math.Round(x*1000) / 1000 }
		if r3(tr.DeltaR.Mean) != p.deltaR || r3(tr.GATG.Mean) != p.gatg || r3(tr.GATG.Lo) != p.lo || r3(tr.GATG.Hi) != p.hi {
			t.Errorf("%s: ΔR %.3f GATG %.3f [%.3f, %.3f], want %.3f %.3f [%.3f, %.3f]", p.name,
				tr.DeltaR.Mean, tr.GATG.Mean, tr.GATG.Lo, tr.GATG.Hi, p.deltaR, p.gatg, p.lo, p.hi)
		}
		if !relNear(tr.GATG.T, 2.7764451051977987, 1e-9) {
			t.Errorf("t quantile %v", tr.GATG.T)
		}
	}
	if _, err := Paired([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("unequal lengths: no error")
	}
	if c, err := Interval([]float64{0.5}); err != nil || c.Mean != 0.5 || !math.IsNaN(c.Lo) {
		t.Errorf("one value: %+v %v, want mean 0.5 and no interval", c, err)
	}
	if _, err := Interval(nil); err == nil {
		t.Error("no values: no error")
	}
}
