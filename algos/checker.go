package algos

import (
	"fmt"
	"math/bits"
)

// THE JUDGE. The checks below decide whether a run kept its algorithm's
// promise, so they share no arithmetic with the algorithms they judge: no
// drain, refill, covers, ceilDiv or floorDiv, and not even the limit's
// derived Unit, Refill or Capacity (NewLimit's reduction). They read only
// Rate, Window and Burst, the numbers the promise is stated in, and every
// helper they need is below, named for the checker. A wrong helper then
// moves an algorithm or its judge, never both together.
// TestCheckerSharesNoArithmeticWithTheAlgorithms holds this file and
// promise.go to that, and checker_brute_test.go compares every check with a
// brute-force count over every interval.

// bucketScale is the bucket promise in integers: B + L·Δ/W admits in
// [t, t+Δ] is, times W/g (g = gcd(L, W)), one admit weighing perAdmit, one
// µs earning perMicro back, and room for capacity. Reducing by g keeps every
// magnitude as small as NewLimit's validation guarantees.
type bucketScale struct {
	perAdmit, perMicro, capacity int64
}

func newBucketScale(l Limit) bucketScale {
	g := checkerGCD(l.Rate, l.Window)
	return bucketScale{perAdmit: l.Window / g, perMicro: l.Rate / g, capacity: l.Burst * (l.Window / g)}
}

// checkerGCD is Euclid's greatest common divisor of two positive numbers.
func checkerGCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// afterGap is an excess of level after gap µs without an admit: gap·perMicro
// less, never below zero. Comparing with the quotient first means the
// product is only taken when it is at most level, so it cannot overflow.
//
// For a gap and a level that are not negative (every call a run makes) the
// product is taken whole, in 128 bits, which says the same without a
// division: the judge of a hunt asks this for every admit it follows.
func (s bucketScale) afterGap(level, gap int64) int64 {
	if gap >= 0 && level >= 0 {
		hi, lo := bits.Mul64(uint64(gap), uint64(s.perMicro))
		if hi != 0 || lo > uint64(level) {
			return 0
		}
		return level - int64(lo)
	}
	if gap > level/s.perMicro { // gap·perMicro > level
		return 0
	}
	return level - gap*s.perMicro
}

// checkBucket runs a meter of exactly the promised size over the admits
// (Lindley's recursion: its level after admit j is the largest
// count·perAdmit - perMicro·Δ over every interval ending at j) and reports
// the first admit that overflows it.
func checkBucket(times []int64, l Limit) *Violation {
	s := newBucketScale(l)
	var level int64
	for j, t := range times {
		if j > 0 {
			level = s.afterGap(level, t-times[j-1])
		}
		level += s.perAdmit
		if level <= s.capacity {
			continue
		}
		// Walk back to the start of the interval that overflows the most
		// (the latest such start on a tie). v is the excess of [times[i], t].
		best, bestI, v := s.perAdmit, j, s.perAdmit
		for i := j - 1; i >= 0; i-- {
			gap := times[i+1] - times[i]
			if gap > (v+s.perAdmit)/s.perMicro {
				// [times[i], t] has a negative excess, and every stretch
				// before it is within capacity (j is the first overflow),
				// so no earlier start can overflow more.
				break
			}
			v += s.perAdmit - gap*s.perMicro
			if v > best {
				best, bestI = v, i
			}
		}
		from := times[bestI]
		admits := int64(j - bestI + 1)
		allowed := l.Burst + l.Rate*(t-from)/l.Window
		return &Violation{From: from, To: t, Admits: admits, Allowed: allowed, Reason: fmt.Sprintf(
			"%d admits from %s to %s (%s), but at most %d + %d·%s/%s = %d are promised",
			admits, FormatTime(from), FormatTime(t), FormatMicros(t-from),
			l.Burst, l.Rate, FormatMicros(t-from), FormatMicros(l.Window), allowed)}
	}
	return nil
}

// AlignedWindowStart is k·w for the aligned window [k·w, (k+1)·w) that holds
// t, negative t included, as a promise of aligned windows counts them (Go's % keeps the sign of t, so a negative
// remainder is moved up by one window).
func AlignedWindowStart(t, w int64) int64 {
	r := t % w
	if r < 0 {
		r += w
	}
	return t - r
}

// checkAligned counts the admits in each aligned window and reports the
// first that is the L+1-th in its window.
func checkAligned(times []int64, l Limit) *Violation {
	var count, start int64
	for j, t := range times {
		// A time within the current window's span is in it: only a time
		// past it needs its window's start worked out (a division).
		if j == 0 || t < start || t-start >= l.Window {
			start, count = AlignedWindowStart(t, l.Window), 0
		}
		count++
		if count > l.Rate {
			return &Violation{From: times[j-int(l.Rate)], To: t, Admits: count, Allowed: l.Rate, Reason: fmt.Sprintf(
				"%d admits in the aligned window [%s, %s), but at most %d are promised",
				count, FormatTime(start), FormatTime(start+l.Window), l.Rate)}
		}
	}
	return nil
}

// checkAnchored counts the admits in windows anchored at admits: a window
// opens at the first admit, holds every admit before its start + W, and the
// first admit at or after that end opens the next. It reports the first
// admit that is the L+1-th in its window.
func checkAnchored(times []int64, l Limit) *Violation {
	var count, start int64
	for j, t := range times {
		if j == 0 || t-start >= l.Window {
			start, count = t, 0
		}
		count++
		if count > l.Rate {
			return &Violation{From: start, To: t, Admits: count, Allowed: l.Rate, Reason: fmt.Sprintf(
				"%d admits in the window [%s, %s) anchored at an admit, but at most %d are promised",
				count, FormatTime(start), FormatTime(start+l.Window), l.Rate)}
		}
	}
	return nil
}

// checkSliding reports the first admit that is the L+1-th within W of an
// earlier one: with the times sorted, that is times[j] - times[j-L] < W.
func checkSliding(times []int64, l Limit) *Violation {
	if int64(len(times)) <= l.Rate {
		return nil
	}
	n := int(l.Rate)
	for j := n; j < len(times); j++ {
		if from := times[j-n]; times[j]-from < l.Window {
			return &Violation{From: from, To: times[j], Admits: l.Rate + 1, Allowed: l.Rate, Reason: fmt.Sprintf(
				"%d admits from %s to %s, within %s of each other, but at most %d in any %s are promised",
				l.Rate+1, FormatTime(from), FormatTime(times[j]), FormatMicros(times[j]-from), l.Rate, FormatMicros(l.Window))}
		}
	}
	return nil
}

// MostInAnyWindow is the largest number of the sorted times that fall in
// one half-open window [s, s+span), wherever it starts.
func MostInAnyWindow(sorted []int64, span int64) int {
	most, i := 0, 0
	for j, t := range sorted {
		for sorted[i] <= t-span {
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}
