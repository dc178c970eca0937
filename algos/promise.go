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
	anchoredWindowPromise
	ownPromise
)

// Promise is what an algorithm guarantees about the admits it makes, on one
// node with a true clock. Text says it in words; Check tests a run against it,
// with arithmetic of its own (checker.go) that shares nothing with the
// algorithms it judges. Four promises are built in; NewPromise states any
// other.
type Promise struct {
	Text  string
	kind  promiseKind
	limit Limit
	check func(sorted []int64) *Violation // ownPromise only
}

// NewPromise is a promise of a user's own, stated in words (text) and as a
// check: given the true times of a run's admits, sorted, check returns the
// first place they break the promise, or nil. check must not modify the
// slice, and must be arithmetic of its own rather than a call of the
// limiter it judges, or a bug in one moves both. The simulator, the hunt
// and the properties then judge a limiter by it as by the built-in four.
//
// The properties find how many admits the promise allows at one instant by
// asking check, so it must allow at least one. A nil check is a promise no
// run can be judged by: every Check reports so.
func NewPromise(text string, check func(sorted []int64) *Violation) Promise {
	return Promise{Text: text, kind: ownPromise, check: check}
}

// PromiseShape says which of the built-in promises a Promise is, for a
// checker that cannot place admits at exact times and so must reason about
// the promise's form (a client judging a live service from outside).
type PromiseShape uint8

// The promise shapes: the four built in, and a promise of a user's own
// (NewPromise), or the zero Promise, which states none of them.
const (
	OwnShape PromiseShape = iota
	BucketShape
	AlignedWindowShape
	SlidingWindowShape
	AnchoredWindowShape
)

// Shape is which built-in promise p is (OwnShape for any other), and the
// limit it was made for (the zero Limit for OwnShape).
func (p Promise) Shape() (PromiseShape, Limit) {
	switch p.kind {
	case bucketPromise:
		return BucketShape, p.limit
	case alignedWindowPromise:
		return AlignedWindowShape, p.limit
	case slidingWindowPromise:
		return SlidingWindowShape, p.limit
	case anchoredWindowPromise:
		return AnchoredWindowShape, p.limit
	}
	return OwnShape, Limit{}
}

// LongestIdle is the longest a key of p needs, left alone, to become
// idle (to be granted a whole burst at one instant again), from any state
// p allows, and why in words: an empty bucket refilled, ⌈B·W/L⌉, for a
// bucket; W for a sliding window (the latest admit leaves it) and for an
// anchored one (it ends); 2W for aligned windows (the next one ends). A
// Reset longer than that tells a client to wait for what no limiter
// keeping p needs. ok is false for a promise of its own (OwnShape), of
// whose idle nothing is known here.
func (p Promise) LongestIdle() (idle int64, why string, ok bool) {
	l := p.limit
	if l.Window <= 0 || l.Rate <= 0 {
		return 0, "", false // made for no valid limit
	}
	switch p.kind {
	case bucketPromise:
		// A full meter (newBucketScale) earns perMicro back a µs.
		s := newBucketScale(l)
		idle = s.capacity / s.perMicro
		if s.capacity%s.perMicro != 0 {
			idle++
		}
		return idle, fmt.Sprintf("an empty bucket of %d refills in %s", l.Burst, FormatMicros(idle)), true
	case slidingWindowPromise:
		return l.Window, fmt.Sprintf("the latest admit leaves the window in %s", FormatMicros(l.Window)), true
	case anchoredWindowPromise:
		return l.Window, fmt.Sprintf("a window ends within %s", FormatMicros(l.Window)), true
	case alignedWindowPromise:
		return 2 * l.Window, fmt.Sprintf("the next aligned window ends within %s", FormatMicros(2*l.Window)), true
	}
	return 0, "", false
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

// AnchoredWindowPromise: at most L admits in each window of length W that
// starts at an admit: the first window starts at the key's first admit, and
// each next one at the first admit at or after the end of the one before. A
// fixed window anchored at the key's first hit (rather than at multiples of
// W) promises this; it says nothing of a window that straddles two anchored
// ones, where such a limiter admits up to 2L.
func AnchoredWindowPromise(l Limit) Promise {
	return Promise{
		Text:  fmt.Sprintf("at most %d admits in each window of %s from the first admit after the previous one ends", l.Rate, FormatMicros(l.Window)),
		kind:  anchoredWindowPromise,
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
	if l := p.limit; p.kind != 0 && p.kind != ownPromise && (l.Rate <= 0 || l.Window <= 0 || l.Burst <= 0) {
		// A promise over no limit cannot be judged; say so rather than divide by zero.
		return &Violation{Reason: fmt.Sprintf("promise: rate, window and burst must be positive, got %d per %dµs (burst %d)", l.Rate, l.Window, l.Burst)}
	}
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
	case anchoredWindowPromise:
		return checkAnchored(times, p.limit)
	case ownPromise:
		if p.check == nil {
			return &Violation{Reason: fmt.Sprintf("promise %q has no check function", p.Text)}
		}
		return p.check(times)
	}
	return &Violation{Reason: "promise: not built by BucketPromise, AlignedWindowPromise, SlidingWindowPromise, AnchoredWindowPromise or NewPromise"}
}

// FormatTime prints an instant in µs as seconds with six decimals.
func FormatTime(us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Sprintf("%s%d.%06ds", sign, us/Second, us%Second)
}
