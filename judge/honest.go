package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// HONESTY. A limiter that admits whatever its promise allows (Exact: the
// token bucket, the leaky bucket, the GCRA and the sliding log are so
// against their own promises) owes a client more than a ceiling: a request
// that one more admit would not take past the promise, after the key's
// admits before it, must be admitted. A denial breaks that
// (breach.HonestTurnedAway) only when it is certain: every admit that may
// have been decided before the denial (its span begins by the denial's
// end) is counted, each placed as late as it may lie (at the end of its
// span, or at the denial's end), which crowds every interval that ends at
// the denial as much as any placement can; and the refill is counted only
// up to the denial's beginning. If one more admit still fits the promise
// then, it fits in every placement, and the denial was wrong.
//
//   - a bucket promise, B + L·Δ/W in any closed interval of length Δ: with
//     the denial's span [s, e], for every x, C(x) + 1 ≤ B + L·max(0, s −
//     x)/W, where C(x) counts the admits whose span begins by e and ends
//     at or after x. With the admits ended before s ranked by end (a_1 ≤
//     … ≤ a_k), C(a_j) = k − j + 1 + A, with A the admits ended at or
//     after s and begun by e; so the largest C(x)·W − L·(s − x) is (k + 1
//     + A)·W − L·s plus the largest L·a_j − j·W, a running maximum as the
//     denials are taken in order of s: O(n log n) for a key of n records.
//   - a sliding window promise, L in any window of W: C + 1 ≤ L, with C
//     the admits whose span begins by e and ends after s − W.
//   - windows whose edges the client cannot see: not judged (a window may
//     have just begun, or just ended).
//
// A key with a request of Cost above 1 is not judged: the count above
// takes every admit as one.

// judgeHonest judges the denials of one key (recs: all its records, any
// order) against its admits, under a bucket or sliding promise; other
// shapes say nothing. A key whose run is too long, or whose admits are too
// many, to count exactly in 63 bits is an error, never a guess.
func judgeHonest(recs []record.Record, shape promiseShape, l algos.Limit) (ruleVerdict, error) {
	var hv ruleVerdict
	if shape != bucketShape && shape != slidingShape {
		return hv, nil
	}
	var byEnd, denials []spanned // the admits (sorted by end below) and the denials
	origin, end := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range recs {
		if r.Cost > 1 {
			return ruleVerdict{}, nil
		}
		if r.Err != nil {
			continue
		}
		f, t := r.Span()
		origin, end = min(origin, f), max(end, t)
		if r.Allowed {
			byEnd = append(byEnd, spanned{r, f, t})
		} else {
			denials = append(denials, spanned{r, f, t})
		}
	}
	if len(denials) == 0 {
		return hv, nil
	}
	// Times from the key's earliest, in judgeKey's units.
	W, L, err := countScale(len(byEnd), end-origin, l)
	if err != nil {
		return hv, err
	}
	B := l.Burst
	for _, set := range [][]spanned{byEnd, denials} {
		for i := range set {
			set[i].from -= origin
			set[i].to -= origin
		}
	}
	slices.SortFunc(byEnd, func(a, b spanned) int { return cmp.Compare(a.to, b.to) })
	begins := make([]int64, len(byEnd))
	for i, a := range byEnd {
		begins[i] = a.from
	}
	slices.Sort(begins)
	// begunBy is how many admits' spans begin by t; endedBefore, how many
	// end before t.
	begunBy := func(t int64) int {
		i, _ := slices.BinarySearch(begins, t+1)
		return i
	}
	endedBefore := func(t int64) int {
		i, _ := slices.BinarySearchFunc(byEnd, t, func(a spanned, t int64) int { return cmp.Compare(a.to, t) })
		return i
	}
	slices.SortStableFunc(denials, func(a, b spanned) int { return cmp.Compare(a.from, b.from) })
	k := 0 // admits ended before the denial's s, ranked by end
	// best is the largest L·a_j − j·W over j ≤ k (1-based), at bestJ.
	best, bestJ := int64(0), 0
	for _, d := range denials {
		s, e := d.from, d.to
		var certain bool
		var words func() string // what made it certain, asked of the earliest only
		switch shape {
		case bucketShape:
			for k < len(byEnd) && byEnd[k].to < s {
				k++
				if v := L*byEnd[k-1].to - int64(k)*W; bestJ == 0 || v > best {
					best, bestJ = v, k
				}
			}
			a := int64(begunBy(e) - k) // ended at or after s, begun by e
			// The most crowded interval ending at the denial: from s
			// (no refill counted), or from the end of admit bestJ.
			n, x := a, s
			worst := a * W
			if bestJ > 0 {
				if w := best + (int64(k)+1+a)*W - L*s; w > worst {
					worst, n, x = w, int64(k-bestJ+1)+a, byEnd[bestJ-1].to
				}
			}
			certain = worst <= (B-1)*W
			words = func() string {
				return fmt.Sprintf("at most %d admits may have been decided in the %s before it (%d of them at the same time as it, as far as the records tell), and %d + %d·%s/%s are promised there",
					n, record.FormatDuration(s-x), a, B, l.Rate, record.FormatDuration(s-x), record.FormatDuration(l.Window))
			}
		case slidingShape:
			c := begunBy(e) - endedBefore(s-l.Window+1) // begun by e, ended after s − W
			certain = int64(c)+1 <= l.Rate
			words = func() string {
				return fmt.Sprintf("at most %d admits may have been decided in the %s before it, and %d are promised there", c, record.FormatDuration(l.Window), l.Rate)
			}
		}
		if !certain {
			continue
		}
		hv.note(d.r, func() string {
			return fmt.Sprintf("key %s was denied, sent +%s and answered +%s, though one more admit then kept the promise however its requests were decided: %s",
				d.r.Key, algos.FormatTime(d.r.Sent), algos.FormatTime(d.r.Answered), words())
		})
	}
	return hv, nil
}
