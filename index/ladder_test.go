package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLadderCover: a range's cover holds a term of every value inside it,
// and of no value more than one finest bucket outside it.
func TestLadderCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, l := range []ladder{ladderSteps, ladderY, ladderTime, newLadder("t", 0, 3, -1000, 1000)} {
		slack := int64(1) << l.shifts[0]
		for i := 0; i < 3000; i++ {
			span := int64(1) << rng.IntN(40)
			lo := l.lo + rng.Int64N(max(1, min(l.hi-l.lo, 1<<42)))
			if rng.IntN(4) == 0 {
				lo = l.lo - rng.Int64N(100) // below the domain
			}
			hi := lo + rng.Int64N(span)
			cover := map[string]bool{}
			for _, c := range l.cover(lo, hi) {
				cover[c] = true
			}
			hit := func(v int64) bool {
				for _, tm := range l.terms(v) {
					if cover[tm] {
						return true
					}
				}
				return false
			}
			for _, v := range []int64{lo, hi, (lo + hi) / 2, lo + rng.Int64N(hi-lo+1)} {
				if v >= l.lo && v <= l.hi && !hit(v) {
					t.Fatalf("%s: %d in [%d,%d] not covered by %v", l.field, v, lo, hi, l.cover(lo, hi))
				}
			}
			for _, v := range []int64{lo - slack - 1, hi + slack + 1} {
				if v >= l.lo && v <= l.hi && lo >= l.lo && hi <= l.hi && hit(v) {
					t.Fatalf("%s: %d, outside [%d,%d] by more than %d, is covered", l.field, v, lo, hi, slack)
				}
			}
			if n := len(cover); n > 2*(1<<ladderFan)*len(l.shifts)+int(l.hi>>l.shifts[len(l.shifts)-1])-int(l.lo>>l.shifts[len(l.shifts)-1])+1 {
				t.Fatalf("%s: [%d,%d] needs %d terms", l.field, lo, hi, n)
			}
		}
	}
	if c := ladderSteps.cover(10, 5); c != nil {
		t.Errorf("an empty range covers %v", c)
	}
	if c := ladderY.cover(math.MinInt64, math.MaxInt64); len(c) == 0 {
		t.Error("the whole domain covers nothing")
	}
}

// TestLadderSpan: an interval overlapping a range shares a term with the
// range's span query, and one far from it does not.
func TestLadderSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	l := ladderSteps
	for i := 0; i < 5000; i++ {
		a := rng.Int64N(1 << 20)
		b := a + rng.Int64N(int64(1)<<rng.IntN(16))
		lo := rng.Int64N(1 << 20)
		hi := lo + rng.Int64N(int64(1)<<rng.IntN(18))
		terms := map[string]bool{}
		for _, tm := range l.spanTerms(a, b) {
			terms[tm] = true
		}
		cover := l.cover(lo, hi)
		for _, s := range l.shifts {
			cover = append(cover, longTerm(s))
		}
		shared := false
		for _, c := range cover {
			if terms[c] {
				shared = true
				break
			}
		}
		overlaps := a <= hi && b >= lo
		if overlaps && !shared {
			t.Fatalf("[%d,%d] overlaps [%d,%d] but shares no term", a, b, lo, hi)
		}
		slack := int64(1) << l.shifts[0]
		if !overlaps && shared && b-a < slack && (b < lo-slack || a > hi+slack) {
			t.Fatalf("[%d,%d], far from [%d,%d], shares a term", a, b, lo, hi)
		}
	}
}
