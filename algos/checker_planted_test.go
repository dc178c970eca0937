package algos

import "fmt"

// PLANTED CHECKER BUGS. Each function below is a copy of one check in
// checker.go with exactly one line changed, the way a real author gets it
// wrong (the two aligned ones share their copy, checkAlignedBy, and each
// hands it its wrong window start). They are exported to the algos_test
// package only (this is a test file) so that checker_brute_test.go can show
// that the brute-force comparison catches each of them.

// PlantedCheckBucketOneMicrosecondShort is the bucket check with a fencepost
// error: it earns back only the µs strictly between two admits, so an
// interval of two admits is judged as if it were Δ-1 long.
//
// PLANTED BUG: `s.afterGap(level, max(0, t-times[j-1]-1))` instead of
// `s.afterGap(level, t-times[j-1])`.
func PlantedCheckBucketOneMicrosecondShort(times []int64, l Limit) *Violation {
	s := newBucketScale(l)
	var level int64
	for j, t := range times {
		if j > 0 {
			level = s.afterGap(level, max(0, t-times[j-1]-1)) // PLANTED: was t-times[j-1]
		}
		level += s.perAdmit
		if level <= s.capacity {
			continue
		}
		best, bestI, v := s.perAdmit, j, s.perAdmit
		for i := j - 1; i >= 0; i-- {
			gap := times[i+1] - times[i]
			if gap > (v+s.perAdmit)/s.perMicro {
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

// PlantedCheckSlidingWindowOneMicrosecondShort is the sliding check counting
// a window of W-1: two admits W-1 apart no longer share one.
//
// PLANTED BUG: `times[j]-from < l.Window-1` instead of
// `times[j]-from < l.Window`.
func PlantedCheckSlidingWindowOneMicrosecondShort(times []int64, l Limit) *Violation {
	if int64(len(times)) <= l.Rate {
		return nil
	}
	n := int(l.Rate)
	for j := n; j < len(times); j++ {
		if from := times[j-n]; times[j]-from < l.Window-1 { // PLANTED: was < l.Window
			return &Violation{From: from, To: times[j], Admits: l.Rate + 1, Allowed: l.Rate, Reason: fmt.Sprintf(
				"%d admits from %s to %s, within %s of each other, but at most %d in any %s are promised",
				l.Rate+1, FormatTime(from), FormatTime(times[j]), FormatMicros(times[j]-from), l.Rate, FormatMicros(l.Window))}
		}
	}
	return nil
}

// PlantedCheckAlignedEdgeOneMicrosecondLate is the aligned check with every
// window edge one µs late, [k·W+1, (k+1)·W+1): the last µs of a window is
// counted with the next one.
//
// PLANTED BUG: `AlignedWindowStart(t-1, l.Window)` instead of
// `AlignedWindowStart(t, l.Window)`.
func PlantedCheckAlignedEdgeOneMicrosecondLate(times []int64, l Limit) *Violation {
	return checkAlignedBy(times, l, func(t int64) int64 {
		return AlignedWindowStart(t-1, l.Window) // PLANTED: was t
	})
}

// PlantedCheckAlignedTruncatesNegativeTimes is the aligned check finding the
// window with Go's /, which rounds toward zero: (-W, W) becomes one window.
//
// PLANTED BUG: `t / l.Window * l.Window` instead of
// `AlignedWindowStart(t, l.Window)`.
func PlantedCheckAlignedTruncatesNegativeTimes(times []int64, l Limit) *Violation {
	return checkAlignedBy(times, l, func(t int64) int64 {
		return t / l.Window * l.Window // PLANTED: was AlignedWindowStart(t, l.Window)
	})
}

// checkAlignedBy is the aligned check as checkAligned first was, working
// out every time's window start, with the start found by windowStart: both
// planted aligned bugs are in that one line, so they share the rest.
func checkAlignedBy(times []int64, l Limit, windowStart func(t int64) int64) *Violation {
	var count, start int64
	for j, t := range times {
		if s := windowStart(t); j == 0 || s != start {
			start, count = s, 0
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

// PlantedMostInAnyWindowOneMicrosecondLong is MostInAnyWindow counting the
// closed window [s, s+span], one µs longer than it says.
//
// PLANTED BUG: `sorted[i] < t-span` instead of `sorted[i] <= t-span`.
func PlantedMostInAnyWindowOneMicrosecondLong(sorted []int64, span int64) int {
	most, i := 0, 0
	for j, t := range sorted {
		for sorted[i] < t-span { // PLANTED: was <=
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}
