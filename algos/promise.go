package algos

import (
	"fmt"
	"slices"
)

// Event is one request as the checker sees it: the true time it was decided
// and whether it was admitted.
type Event struct {
	Time     int64
	Admitted bool
}

// Violation is the first place a sequence of admits breaks a promise.
type Violation struct {
	From, To int64 // the true times of the first and last admit involved
	Admits   int64 // how many admits fell in [From, To]
	Allowed  int64 // how many the promise allows there
	Reason   string
}

func (v *Violation) Error() string { return v.Reason }

type promiseKind int

const (
	bucketPromise promiseKind = iota + 1
	alignedWindowPromise
	slidingWindowPromise
)

// Promise is what an algorithm guarantees about the admits it makes, on one
// node with a true clock. Text says it in words; Check tests a run against it.
type Promise struct {
	Text  string
	kind  promiseKind
	limit Limit
}

// BucketPromise: at most B + L·Δ/W admits in any closed interval of length Δ.
// Token bucket, leaky bucket and GCRA promise this.
func BucketPromise(l Limit) Promise {
	return Promise{
		Text:  fmt.Sprintf("at most %d + %d·Δ/%s admits in any interval of length Δ", l.Burst, l.Rate, FormatMicros(l.Window)),
		kind:  bucketPromise,
		limit: l,
	}
}

// AlignedWindowPromise: at most L admits in each aligned window
// [k·W, (k+1)·W). Fixed window and sliding counter promise this.
func AlignedWindowPromise(l Limit) Promise {
	return Promise{
		Text:  fmt.Sprintf("at most %d admits in each aligned window [k·%s, (k+1)·%s)", l.Rate, FormatMicros(l.Window), FormatMicros(l.Window)),
		kind:  alignedWindowPromise,
		limit: l,
	}
}

// SlidingWindowPromise: at most L admits in any window [s, s+W), wherever it
// starts; two admits exactly W apart never share one. The sliding log
// promises this.
func SlidingWindowPromise(l Limit) Promise {
	return Promise{
		Text:  fmt.Sprintf("at most %d admits in any window of %s, wherever it starts", l.Rate, FormatMicros(l.Window)),
		kind:  slidingWindowPromise,
		limit: l,
	}
}

// Check returns the first violation of the promise among the admitted
// events (by true time), or nil. Events need not be sorted. It runs in
// linear time on sorted input and n·log n otherwise.
func (p Promise) Check(events []Event) *Violation {
	times := make([]int64, 0, len(events))
	for _, e := range events {
		if e.Admitted {
			times = append(times, e.Time)
		}
	}
	return p.CheckAdmits(times)
}

// CheckAdmits is Check for the true times of the admits alone. It does not
// modify times.
func (p Promise) CheckAdmits(times []int64) *Violation {
	if !slices.IsSorted(times) {
		times = slices.Clone(times)
		slices.Sort(times)
	}
	switch p.kind {
	case bucketPromise:
		return checkBucket(times, p.limit)
	case alignedWindowPromise:
		return checkAligned(times, p.limit)
	case slidingWindowPromise:
		return checkSliding(times, p.limit)
	}
	return &Violation{Reason: "promise: not built by BucketPromise, AlignedWindowPromise or SlidingWindowPromise"}
}

// checkBucket runs a meter of exactly the promised size over the admits
// (Lindley's recursion: its level after admit j is the largest
// count·Unit - Refill·Δ over every interval ending at j) and reports the
// first admit that overflows it.
func checkBucket(times []int64, l Limit) *Violation {
	capacity := l.Capacity()
	var level int64
	for j, t := range times {
		if j > 0 {
			level = drain(level, t-times[j-1], l)
		}
		level += l.Unit
		if level <= capacity {
			continue
		}
		// Walk back to the start of the interval that overflows the most.
		best, bestI, v := int64(l.Unit), j, int64(l.Unit)
		for i := j - 1; i >= 0; i-- {
			gap := times[i+1] - times[i]
			if gap >= ceilDiv(v+l.Unit, l.Refill) {
				break // no earlier start can overflow more
			}
			v += l.Unit - gap*l.Refill
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

func checkAligned(times []int64, l Limit) *Violation {
	var count int64
	for j, t := range times {
		if j == 0 || floorDiv(t, l.Window) != floorDiv(times[j-1], l.Window) {
			count = 0
		}
		count++
		if count > l.Rate {
			start := floorDiv(t, l.Window) * l.Window
			return &Violation{From: times[j-int(l.Rate)], To: t, Admits: count, Allowed: l.Rate, Reason: fmt.Sprintf(
				"%d admits in the aligned window [%s, %s), but at most %d are promised",
				count, FormatTime(start), FormatTime(start+l.Window), l.Rate)}
		}
	}
	return nil
}

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

// FormatTime prints an instant in µs as seconds with six decimals.
func FormatTime(us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Sprintf("%s%d.%06ds", sign, us/Second, us%Second)
}
