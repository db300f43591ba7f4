package index

import (
	"strconv"
	"strings"

	bq "github.com/blevesearch/bleve/v2/search/query"
)

// A ladder indexes an integer as keyword terms, one per level: the
// value's bucket at each shift ("10:42" is bucket 42 of width 2^10). A
// range becomes a disjunction of a few buckets — wide ones in the middle,
// narrow ones at the edges — matching a superset of the values in it that
// is at most one finest bucket wider at each end. bleve's own numeric
// fields index 16 terms per value and slow a build down (bench/index.md);
// a ladder indexes len(shifts).
type ladder struct {
	field  string
	shifts []uint // ascending, each ladderFan bits above the previous
	lo, hi int64  // the domain; values outside are clamped into it
}

// ladderFan is the bits between levels: at most 2^ladderFan buckets of a
// level are needed at each edge of a range.
const ladderFan = 6

func newLadder(field string, finest uint, levels int, lo, hi int64) ladder {
	l := ladder{field: field, lo: lo, hi: hi}
	for i := 0; i < levels; i++ {
		l.shifts = append(l.shifts, finest+uint(i)*ladderFan)
	}
	return l
}

var (
	// An episode's steps, first_step..last_step, as a span: buckets of
	// 16 steps up to 2^34.
	ladderSteps = newLadder(fSteps, 4, 6, 0, 1<<40-1)
	// floor(y): buckets of 4 blocks, within ±2^17.
	ladderY = newLadder(fY, 2, 3, -1<<17, 1<<17-1)
	// Unix seconds: buckets of 64 s up to 2^30 s.
	ladderTime = newLadder(fTime, 6, 5, 0, 1<<40-1)
)

func (l ladder) clamp(v int64) int64 { return min(max(v, l.lo), l.hi) }

func bucketTerm(shift uint, b int64) string {
	return strconv.FormatUint(uint64(shift), 10) + ":" + strconv.FormatInt(b, 10)
}

// terms are the indexed terms of v.
func (l ladder) terms(v int64) []string {
	v = l.clamp(v)
	out := make([]string, len(l.shifts))
	for i, s := range l.shifts {
		out[i] = bucketTerm(s, v>>s)
	}
	return out
}

// cover returns terms matching every value in [lo, hi] (nil when the
// range is empty).
func (l ladder) cover(lo, hi int64) []string {
	lo, hi = l.clamp(lo), l.clamp(hi)
	var out []string
	add := func(s uint, a, b int64) {
		for x := a >> s; x <= b>>s; x++ {
			out = append(out, bucketTerm(s, x))
		}
	}
	for i, s := range l.shifts {
		if lo > hi {
			break
		}
		if i == len(l.shifts)-1 {
			add(s, lo, hi)
			break
		}
		next := l.shifts[i+1]
		w := int64(1) << next
		loNext := ((lo + w - 1) >> next) << next // the first coarse boundary >= lo
		hiNext := ((hi+1)>>next)<<next - 1       // the last value before a coarse boundary <= hi+1
		if loNext > hiNext {
			add(s, lo, hi) // no whole coarse bucket inside
			break
		}
		if lo < loNext {
			add(s, lo, loNext-1)
		}
		if hiNext < hi {
			add(s, hiNext+1, hi)
		}
		lo, hi = loNext, hiNext
	}
	return out
}

// query is the bleve query for values in [lo, hi].
func (l ladder) query(lo, hi int64) bq.Query {
	return anyTerm(l.field, l.cover(lo, hi))
}

// spanCap is the most buckets of one level a span indexes; a longer span
// indexes that level's "long" term instead.
const spanCap = 8

func longTerm(shift uint) string { return "long:" + strconv.FormatUint(uint64(shift), 10) }

// spanTerms index an interval [a, b] (an episode's steps): at each level,
// every bucket the interval touches, or the level's long term when there
// are more than spanCap. An interval overlaps a range exactly when it
// shares a point with it, and that point lies in one of the range's cover
// buckets, which the interval then indexes (or it is long at that level):
// spanQuery matches a superset of the overlapping intervals.
func (l ladder) spanTerms(a, b int64) []string {
	a, b = l.clamp(min(a, b)), l.clamp(max(a, b))
	var out []string
	for _, s := range l.shifts {
		if (b>>s)-(a>>s) >= spanCap {
			out = append(out, longTerm(s))
			continue
		}
		for x := a >> s; x <= b>>s; x++ {
			out = append(out, bucketTerm(s, x))
		}
	}
	return out
}

// spanQuery matches the intervals overlapping [lo, hi] (and a few more
// at the edges), indexed with spanTerms.
func (l ladder) spanQuery(lo, hi int64) bq.Query {
	ts := l.cover(lo, hi)
	if len(ts) == 0 {
		return bq.NewMatchNoneQuery()
	}
	used := map[uint]bool{}
	for _, t := range ts {
		s, _, _ := strings.Cut(t, ":")
		n, _ := strconv.ParseUint(s, 10, 8)
		used[uint(n)] = true
	}
	for s := range used {
		ts = append(ts, longTerm(s))
	}
	return anyTerm(l.field, ts)
}
