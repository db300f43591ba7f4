package audit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/combin"
)

// FisherExact is Fisher's exact test on the 2×2 table
//
//	a b
//	c d
//
// (rows: groups, columns: outcome yes / no). Greater is the one-sided
// p-value for the first row having at least a yeses given the margins;
// TwoSided sums every table no more probable than the observed one
// (relative tolerance 1e-7, as R's fisher.test).
func FisherExact(a, b, c, d int) (twoSided, greater float64, err error) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return 0, 0, fmt.Errorf("fisher: negative count in [%d %d; %d %d]", a, b, c, d)
	}
	r1, c1, n := a+b, a+c, a+b+c+d
	if n == 0 {
		return 1, 1, nil
	}
	// The hypergeometric probability of x yeses in the first row.
	logDen := combin.LogGeneralizedBinomial(float64(n), float64(r1))
	prob := func(x int) float64 {
		return math.Exp(combin.LogGeneralizedBinomial(float64(c1), float64(x)) +
			combin.LogGeneralizedBinomial(float64(n-c1), float64(r1-x)) - logDen)
	}
	lo, hi := max(0, r1-(n-c1)), min(r1, c1)
	pObs := prob(a)
	for x := lo; x <= hi; x++ {
		p := prob(x)
		if x >= a {
			greater += p
		}
		if p <= pObs*(1+1e-7) {
			twoSided += p
		}
	}
	return math.Min(twoSided, 1), math.Min(greater, 1), nil
}

// BinomialTail is P(X ≥ k) for X ~ Binomial(n, p): the one-sided p-value
// of k successes in n trials against a null rate p.
func BinomialTail(k, n int, p float64) (float64, error) {
	if n < 0 || k < 0 || k > n || p < 0 || p > 1 || math.IsNaN(p) {
		return 0, fmt.Errorf("binomial: k=%d n=%d p=%g", k, n, p)
	}
	switch {
	case k == 0:
		return 1, nil
	case p == 0:
		return 0, nil
	case p == 1:
		return 1, nil
	}
	// P(X ≥ k) = I_p(k, n−k+1), the regularised incomplete beta function.
	return mathext.RegIncBeta(float64(k), float64(n-k+1), p), nil
}
