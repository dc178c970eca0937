package planted

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/arith"
)

// The planted bugs below break the contract where only a hunt at deployment
// level, with its edge-probing client and its honesty checks, looks: a
// window one µs off its edge, a burst one short, a Retry-After rounded
// down. Each is again one line away from a correct decision.

// FixedWindowShifted is the fixed window whose windows start one µs early.
//
// PLANTED BUG: `idx := algos.FloorDiv(now+1, l.Window)` instead of
// `algos.FloorDiv(now, l.Window)`. The author converts a timestamp that
// counts from 1 (a 1-based tick, an inclusive end) and adds the one in the
// wrong place. Only an admit on the last µs of a window lands in the next
// one: a client must hit that µs to see 2L in one aligned window.
var FixedWindowShifted = algos.Algorithm{
	Name:       "planted-fixed-window-shifted",
	Decide:     decidePlantedFixedWindowShifted,
	Promise:    algos.AlignedWindowPromise,
	StateDoc:   "window index, count",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedFixedWindowShifted(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedFixedWindowShifted, s, now, &l)
}

func plantedFixedWindowShifted(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	idx := algos.FloorDiv(now+1, l.Window) // PLANTED: was FloorDiv(now, l.Window)
	win := s.Window()
	if !s.Set || win.Index != idx {
		win = algos.WindowState{Index: idx}
	}
	count := win.Count
	end := (idx+1)*l.Window - now
	d := decision{Reset: end}
	if count < l.Rate {
		count++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	*s = algos.WindowState{Index: idx, Count: count}.State()
	d.Remaining = l.Rate - count
	return d.fields()
}

// TokenBucketBurstOneShort is the token bucket that starts, and refills up
// to, one token less than its burst.
//
// PLANTED BUG: `capacity := l.Capacity() - l.Unit` instead of
// `l.Capacity()`. The author reads "burst" as "requests after the first".
// It never admits too much, so no promise is broken: it turns away the
// last request of every full burst, which the promise allows.
var TokenBucketBurstOneShort = algos.Algorithm{
	Name:       "planted-token-bucket-burst-one-short",
	Decide:     decidePlantedTokenBucketBurstOneShort,
	Promise:    algos.BucketPromise,
	StateDoc:   "tokens (scaled integer), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedTokenBucketBurstOneShort(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedTokenBucketBurstOneShort, s, now, &l)
}

func plantedTokenBucketBurstOneShort(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	capacity := l.Capacity() - l.Unit // PLANTED: was l.Capacity()
	if !s.Set {
		*s = algos.BucketState{Level: capacity, Last: now}.State()
	}
	b := s.Bucket()
	tokens := arith.Refill(b.Level, now-b.Last, capacity, l.Refill)
	d := decision{}
	if tokens >= l.Unit {
		tokens -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = arith.CeilDiv(l.Unit-tokens, l.Refill)
	}
	s.SetBucket(algos.BucketState{Level: tokens, Last: now})
	d.Remaining = tokens / l.Unit
	d.Reset = arith.CeilDiv(capacity-tokens, l.Refill)
	return d.fields()
}

// GCRARetryAfterFloored is GCRA answering Retry-After rounded down to a
// hundredth of the window.
//
// PLANTED BUG: `d.RetryAfter = (allowAt - now) / step * step` (step = W/100)
// instead of `allowAt - now`. The author reports Retry-After in coarse
// units (whole seconds for a minute's limit, say) and truncates, as an
// integer division does. Every wait shorter than a unit reads 0, and a
// client that honours it retries before the request can be admitted. It
// admits exactly as GCRA does, so no promise is broken.
var GCRARetryAfterFloored = algos.Algorithm{
	Name:    "planted-gcra-retry-after-floored",
	Decide:  decidePlantedGCRARetryAfterFloored,
	Promise: algos.BucketPromise,
	// Its RetryAfter is short, not exact: the properties hold it to
	// honesty, which it breaks, not to exactness.
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: false,
}

func decidePlantedGCRARetryAfterFloored(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedGCRARetryAfterFloored, s, now, &l)
}

func plantedGCRARetryAfterFloored(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	d := decisionOf(gcraFields(s, now, l))
	if !d.Allowed {
		step := max(1, l.Window/100)
		d.RetryAfter = d.RetryAfter / step * step // PLANTED: was d.RetryAfter
	}
	return d.fields()
}

// GCRAResetWholeSeconds is GCRA answering its Reset from a whole-second
// Unix time.
//
// PLANTED BUG: `d.Reset = FloorDiv(tat, Second)·Second - now` instead of
// `GCRAReset(tat, frac, now)`. The author computes the reset as an
// X-RateLimit-Reset header does, a Unix time in whole seconds, truncated,
// and the caller turns it back into a wait by subtracting now. Whenever
// the key gets back to idle within the second it is in, the reset is
// already in the past: a negative wait, which no limiter may answer. It
// admits exactly as GCRA does, so no promise is broken, and its Remaining
// and Retry-After are GCRA's.
var GCRAResetWholeSeconds = algos.Algorithm{
	Name:       "planted-gcra-reset-whole-seconds",
	Decide:     decidePlantedGCRAResetWholeSeconds,
	Promise:    algos.BucketPromise,
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedGCRAResetWholeSeconds(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedGCRAResetWholeSeconds, s, now, &l)
}

func plantedGCRAResetWholeSeconds(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	d := decisionOf(gcraFields(s, now, l))
	tat := s.GCRA().TAT                                            // the theoretical arrival time the decision left, in µs
	d.Reset = algos.FloorDiv(tat, algos.Second)*algos.Second - now // PLANTED: was arith.GCRAReset(tat, frac, now)
	return d.fields()
}

// GCRAResetPlusTolerance is GCRA answering, as its Reset, the time until
// its theoretical arrival time plus the burst tolerance.
//
// PLANTED BUG: `d.Reset = GCRAReset(tat, frac, now) + τ`, τ = (B−1)·W/L,
// instead of `GCRAReset(tat, frac, now)`. The author reads the TAT as the
// time the key starts to earn its burst back, not the time it has, and
// adds the tolerance to reach "full". After a burst the Reset is up to
// twice as long as any key of the promise needs to become idle: a client
// told to come back for a fresh burst waits for nothing. It admits exactly
// as GCRA does, its Remaining and Retry-After are GCRA's, and its Reset is
// never shorter than the true one nor absurd, so no promise is broken and
// no other rule sees it.
var GCRAResetPlusTolerance = algos.Algorithm{
	Name:       "planted-gcra-reset-plus-tolerance",
	Decide:     decidePlantedGCRAResetPlusTolerance,
	Promise:    algos.BucketPromise,
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedGCRAResetPlusTolerance(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedGCRAResetPlusTolerance, s, now, &l)
}

func plantedGCRAResetPlusTolerance(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	d := decisionOf(gcraFields(s, now, l))
	d.Reset += arith.CeilDiv((l.Burst-1)*l.Unit, l.Refill) // PLANTED: was d.Reset
	return d.fields()
}

// TokenBucketRemainingBeforeTake is the token bucket answering the
// Remaining it had before the request took its token.
//
// PLANTED BUG: the Remaining is read before the admit's `tokens -= l.Unit`
// instead of after it. The author fills in the answer where the bucket is
// first refilled, the natural place to read it, and takes the token later.
// Every admit says one more than the bucket will admit at that instant:
// a caller that spends its Remaining is refused the last of it. It admits
// exactly as the token bucket does, so no promise is broken.
var TokenBucketRemainingBeforeTake = algos.Algorithm{
	Name:       "planted-token-bucket-remaining-before-take",
	Decide:     decidePlantedTokenBucketRemainingBeforeTake,
	Promise:    algos.BucketPromise,
	StateDoc:   "tokens (scaled integer), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedTokenBucketRemainingBeforeTake(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedTokenBucketRemainingBeforeTake, s, now, &l)
}

func plantedTokenBucketRemainingBeforeTake(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	capacity := l.Capacity()
	if !s.Set {
		*s = algos.BucketState{Level: capacity, Last: now}.State()
	}
	b := s.Bucket()
	tokens := arith.Refill(b.Level, now-b.Last, capacity, l.Refill)
	d := decision{Remaining: tokens / l.Unit} // PLANTED: was `d.Remaining = tokens / l.Unit` after the take
	if tokens >= l.Unit {
		tokens -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = arith.CeilDiv(l.Unit-tokens, l.Refill)
	}
	s.SetBucket(algos.BucketState{Level: tokens, Last: now})
	d.Reset = arith.CeilDiv(capacity-tokens, l.Refill)
	return d.fields()
}

// FixedWindowResetFromStart is the fixed window answering, as its Reset,
// the time since its window started instead of the time until it ends.
//
// PLANTED BUG: `d.Reset = now - idx·W` instead of `(idx+1)·W - now`. The
// author names the wrong edge of the window. Early in a window the Reset
// is short, so a client that comes back at it for a fresh burst is
// refused; late in one it is long. It admits exactly as the fixed window
// does, and its Retry-After is the fixed window's, so no promise is broken.
var FixedWindowResetFromStart = algos.Algorithm{
	Name:       "planted-fixed-window-reset-from-start",
	Decide:     decidePlantedFixedWindowResetFromStart,
	Promise:    algos.AlignedWindowPromise,
	StateDoc:   "window index, count",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedFixedWindowResetFromStart(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedFixedWindowResetFromStart, s, now, &l)
}

func plantedFixedWindowResetFromStart(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	idx := algos.FloorDiv(now, l.Window)
	win := s.Window()
	if !s.Set || win.Index != idx {
		win = algos.WindowState{Index: idx}
	}
	count := win.Count
	end := (idx+1)*l.Window - now
	d := decision{Reset: now - idx*l.Window} // PLANTED: was Reset: end
	if count < l.Rate {
		count++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	*s = algos.WindowState{Index: idx, Count: count}.State()
	d.Remaining = l.Rate - count
	return d.fields()
}
