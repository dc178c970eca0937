package algos

import (
	"math"
	"math/bits"
)

// Envelope is the judge's other half: where Check says whether a run's
// admits kept a promise, an Envelope follows the admits as they happen and
// says whether one more, at a given time, would still keep it. A refusal
// where it would is an honest request turned away, unless the limiter
// declared itself conservative (a sliding counter's estimate refuses what
// its aligned windows would allow).
//
// It belongs to the checker (checker.go's rule holds here: no arithmetic
// shared with the algorithms), and agrees with it: Allows(t) is true
// exactly when CheckAdmits of the admits so far and t finds nothing new.
// TestEnvelopeAgreesWithCheck holds it to that on seeded runs.
type Envelope struct {
	kind  promiseKind
	limit Limit

	last  int64 // the latest admit, for every kind
	count int64 // admits so far

	// bucket: the meter's level after the latest admit (checkBucket's).
	scale bucketScale
	level int64
	// aligned and anchored: the current window's start and its admits.
	start, inWindow int64
	// sliding: the latest L admits, oldest first (a ring).
	recent []int64
	head   int
}

// Envelope returns an empty envelope of p, and whether p has one: the four
// built-in promises do; a promise of a user's own (NewPromise) does not,
// since its check can only judge a whole run.
func (p Promise) Envelope() (*Envelope, bool) {
	e, ok := p.envelope()
	if !ok {
		return nil, false
	}
	return &e, true
}

// Reset makes e an empty envelope of p, as Envelope returns one, and
// reports whether p has one (e is then the zero Envelope, to be reset
// again before use). It keeps the memory e holds for a sliding window's
// admits, so that a judge that follows many instances and runs one after
// another allocates it once.
func (e *Envelope) Reset(p Promise) bool {
	recent := e.recent[:0]
	v, ok := p.envelope()
	*e = v
	if ok {
		e.recent = recent
	}
	return ok
}

// envelope is Envelope's value.
func (p Promise) envelope() (Envelope, bool) {
	switch p.kind {
	case bucketPromise, alignedWindowPromise, slidingWindowPromise, anchoredWindowPromise:
	default:
		return Envelope{}, false
	}
	if l := p.limit; l.Rate <= 0 || l.Window <= 0 || l.Burst <= 0 {
		return Envelope{}, false
	}
	e := Envelope{kind: p.kind, limit: p.limit}
	if p.kind == bucketPromise {
		e.scale = newBucketScale(p.limit)
	}
	return e, true
}

// Allows reports whether an admit at t, after every admit so far, keeps the
// promise. t must not be before the latest admit.
func (e *Envelope) Allows(t int64) bool {
	l := &e.limit // read in place, not copied (refill, in buckets.go, says why)
	switch e.kind {
	case bucketPromise:
		return e.levelAt(t)+e.scale.perAdmit <= e.scale.capacity
	case alignedWindowPromise:
		if e.count == 0 || !e.inWindowOf(t) {
			return 1 <= l.Rate
		}
		return e.inWindow+1 <= l.Rate
	case anchoredWindowPromise:
		if e.count == 0 || t-e.start >= l.Window {
			return 1 <= l.Rate
		}
		return e.inWindow+1 <= l.Rate
	case slidingWindowPromise:
		// The L-th admit back must be at least W before t.
		if int64(len(e.recent)) < l.Rate {
			return true
		}
		return t-e.recent[e.head] >= l.Window
	}
	return false
}

// IdleAt is the earliest time, no earlier than the latest admit, from
// which a whole burst at one instant keeps the promise (Headroom is then
// the most it ever is: Burst for a bucket, Rate for a window): the
// earliest honest Reset. An envelope with no admit is idle at any time:
// math.MinInt64.
func (e *Envelope) IdleAt() int64 {
	if e.count == 0 {
		return math.MinInt64
	}
	l := &e.limit // read in place, not copied (refill, in buckets.go, says why)
	switch e.kind {
	case bucketPromise:
		gap := e.level // a µs earns one (any limit whose rate divides its window)
		if pm := e.scale.perMicro; pm != 1 {
			gap = e.level / pm
			if e.level%pm != 0 {
				gap++
			}
		}
		if gap > math.MaxInt64-e.last {
			return math.MaxInt64
		}
		return e.last + gap
	case alignedWindowPromise, anchoredWindowPromise:
		return max(e.last, e.start+l.Window) // the window of the latest admit has ended
	case slidingWindowPromise:
		return e.last + l.Window // the latest admit has left every window from there
	}
	return math.MaxInt64
}

// levelAt is a bucket promise's meter at t, after every admit so far.
func (e *Envelope) levelAt(t int64) int64 {
	if e.count == 0 {
		return 0
	}
	return e.scale.afterGap(e.level, t-e.last)
}

// AllowsFrom is the earliest time, no earlier than the latest admit, at
// which Allows is true; Allows stays true at every later time until the
// next Admit, so a caller asking at times no earlier than the latest admit
// may compare with it instead of asking again. An envelope with no admit
// allows any time: math.MinInt64. (With Allows false at every time, which
// no valid limit gives, it is math.MaxInt64.)
func (e *Envelope) AllowsFrom() int64 {
	if e.count == 0 {
		return math.MinInt64
	}
	l := &e.limit // read in place, not copied (refill, in buckets.go, says why)
	from := e.last
	switch e.kind {
	case bucketPromise:
		// afterGap(level, gap) + perAdmit ≤ capacity, with afterGap the
		// level less gap·perMicro, never below zero, and capacity ≥
		// perAdmit: from the first gap with gap·perMicro ≥ need.
		if need := e.level + e.scale.perAdmit - e.scale.capacity; need > 0 {
			gap := need // a µs earns one (any limit whose rate divides its window)
			if pm := e.scale.perMicro; pm != 1 {
				gap = need / pm
				if need%pm != 0 {
					gap++
				}
			}
			if gap > math.MaxInt64-from {
				return math.MaxInt64
			}
			from += gap
		}
	case alignedWindowPromise, anchoredWindowPromise:
		if e.inWindow+1 > l.Rate {
			from = max(from, e.start+l.Window) // the next window's start, or the anchor's window's end
		}
	case slidingWindowPromise:
		if int64(len(e.recent)) >= l.Rate {
			from = max(from, e.recent[e.head]+l.Window)
		}
	default:
		return math.MaxInt64
	}
	return from
}

// Headroom is how many more admits at t, after every admit so far, keep
// the promise: the most an honest Remaining may say at t. t must not be
// before the latest admit. It is the count of Admit(t) calls Allows(t)
// would allow one after another.
func (e *Envelope) Headroom(t int64) int64 {
	l := &e.limit // read in place, not copied (refill, in buckets.go, says why)
	switch e.kind {
	case bucketPromise:
		return max(0, (e.scale.capacity-e.levelAt(t))/e.scale.perAdmit)
	case alignedWindowPromise:
		if e.count == 0 || !e.inWindowOf(t) {
			return l.Rate
		}
		return max(0, l.Rate-e.inWindow)
	case anchoredWindowPromise:
		if e.count == 0 || t-e.start >= l.Window {
			return l.Rate
		}
		return max(0, l.Rate-e.inWindow)
	case slidingWindowPromise:
		// The admits within W before t, of the latest L (oldest at head,
		// in order around the ring): those after the first one later than
		// t-W.
		n := len(e.recent)
		i, j := 0, n // the first, in ring order, later than t-W
		for i < j {
			m := int(uint(i+j) >> 1)
			k := e.head + m // (head+m) mod n, without a division at every step: head < n, m < n
			if k >= n {
				k -= n
			}
			if e.recent[k] > t-l.Window {
				j = m
			} else {
				i = m + 1
			}
		}
		return l.Rate - int64(n-i)
	}
	return 0
}

// Exceeds reports whether n is more than Headroom(t): a Remaining of n at
// t says more than the promise allows. It is what a judge asks of every
// answer, and for a bucket it asks it without Headroom's division.
func (e *Envelope) Exceeds(t, n int64) bool {
	if e.kind != bucketPromise {
		return n > e.Headroom(t)
	}
	if n <= 0 {
		return false // Headroom is never negative
	}
	// n > ⌊x/perAdmit⌋, x the room left, is n·perAdmit > x (and with no
	// room left, any n > 0), the product taken whole in 128 bits.
	x := e.scale.capacity - e.levelAt(t)
	if x < 0 {
		return true
	}
	hi, lo := bits.Mul64(uint64(n), uint64(e.scale.perAdmit))
	return hi != 0 || lo > uint64(x)
}

// Admit records an admit at t (not before the latest). An admit the
// envelope did not allow is recorded too: the run goes on from what the
// limiter did, not from what it should have done.
func (e *Envelope) Admit(t int64) {
	l := &e.limit // read in place, not copied (refill, in buckets.go, says why)
	switch e.kind {
	case bucketPromise:
		if e.count > 0 {
			e.level = e.scale.afterGap(e.level, t-e.last)
		}
		e.level += e.scale.perAdmit
	case alignedWindowPromise:
		if e.count == 0 || !e.inWindowOf(t) {
			e.start, e.inWindow = AlignedWindowStart(t, l.Window), 0
		}
		e.inWindow++
	case anchoredWindowPromise:
		if e.count == 0 || t-e.start >= l.Window {
			e.start, e.inWindow = t, 0
		}
		e.inWindow++
	case slidingWindowPromise:
		if int64(len(e.recent)) < l.Rate {
			e.recent = append(e.recent, t)
		} else {
			e.recent[e.head] = t
			if e.head++; e.head == len(e.recent) { // the ring wraps: no division per admit
				e.head = 0
			}
		}
	}
	e.last = t
	e.count++
}

// inWindowOf reports whether t is in the aligned window that starts at
// e.start: AlignedWindowStart(t) == e.start, without its division.
func (e *Envelope) inWindowOf(t int64) bool {
	return t >= e.start && t-e.start < e.limit.Window
}
