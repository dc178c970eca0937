package planted

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/arith"
)

// PLANTED BUGS. Each variable below is a copy of one of the six decisions
// with exactly one line changed, the way a real author gets it wrong. They
// exist so that the properties and the simulator can show they catch such a
// bug; none of them is in algos.All, ByName or Names, and every name starts
// with "planted-". Never use them to limit anything.

// All lists the planted bugs, in the order declared below, then in
// contract.go and estimate.go. Like the
// variables, the list is for tests that must show a check catches a bug.
// redis/lua holds the Lua twin of a planted bug beside the six scripts,
// under the same name (planted-token-bucket-negative-refill.lua).
func All() []algos.Algorithm {
	return []algos.Algorithm{
		UncappedTokenBucket, LeakyBucketRewinds, GCRAWideTolerance,
		FixedWindowOffByOne, SlidingLogTrimsTooMuch, TokenBucketNegativeRefill,
		FixedWindowShifted, TokenBucketBurstOneShort, GCRARetryAfterFloored,
		SlidingCounterWrongWeight, GCRAResetWholeSeconds, GCRAResetPlusTolerance, TokenBucketRemainingBeforeTake,
		FixedWindowResetFromStart,
	}
}

// UncappedTokenBucket is the token bucket without the cap.
//
// PLANTED BUG: the refill line is
//
//	tokens := b.Level + max(0, now-b.Last)*l.Refill
//
// instead of `tokens := refill(b.Level, now-b.Last, &l)`. An author writes
// it because under steady traffic the bucket never fills, so the cap looks
// redundant; after an idle spell the bucket holds more than Burst and a
// whole idle period's worth of requests is admitted at once.
var UncappedTokenBucket = algos.Algorithm{
	Name:       "planted-uncapped-token-bucket",
	Decide:     decidePlantedUncappedTokenBucket,
	Promise:    algos.BucketPromise,
	StateDoc:   "tokens (scaled integer), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedUncappedTokenBucket(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedUncappedTokenBucket, s, now, &l)
}

func plantedUncappedTokenBucket(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	capacity := l.Capacity()
	if !s.Set {
		*s = algos.BucketState{Level: capacity, Last: now}.State()
	}
	b := s.Bucket()
	tokens := b.Level + max(0, now-b.Last)*l.Refill // PLANTED: no cap at capacity
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

// LeakyBucketRewinds is the leaky bucket storing last = now.
//
// PLANTED BUG: `last := now` instead of `last := max(b.Last, now)`. An
// author copies the line from the token bucket. On a true clock nothing
// changes; a node whose clock is behind moves last back and the next node
// drains the same interval twice. Mirrored, this is decision for decision
// the token bucket, so only the leaky bucket's own claim (no double refill)
// tells them apart.
var LeakyBucketRewinds = algos.Algorithm{
	Name:       "planted-leaky-bucket-rewinds",
	Decide:     decidePlantedLeakyBucketRewinds,
	Promise:    algos.BucketPromise,
	StateDoc:   "level (scaled integer), last drain time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedLeakyBucketRewinds(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedLeakyBucketRewinds, s, now, &l)
}

func plantedLeakyBucketRewinds(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	capacity := l.Capacity()
	if !s.Set {
		*s = algos.BucketState{Level: 0, Last: now}.State()
	}
	b := s.Bucket()
	level := arith.Drain(b.Level, now-b.Last, l.Refill)
	last := now // PLANTED: was max(b.Last, now)
	behind := last - now
	d := decision{}
	if level+l.Unit <= capacity {
		level += l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = behind + arith.CeilDiv(level+l.Unit-capacity, l.Refill)
	}
	s.SetBucket(algos.BucketState{Level: level, Last: last})
	d.Remaining = (capacity - level) / l.Unit
	d.Reset = behind + arith.CeilDiv(level, l.Refill)
	return d.fields()
}

// GCRAWideTolerance is GCRA with a tolerance one interval too wide.
//
// PLANTED BUG: `tauTicks := l.Burst * l.Unit` instead of
// `(l.Burst - 1) * l.Unit`. "Burst times the emission interval" reads like
// the definition of tau; it admits Burst+1 at one instant.
var GCRAWideTolerance = algos.Algorithm{
	Name:       "planted-gcra-wide-tolerance",
	Decide:     decidePlantedGCRAWideTolerance,
	Promise:    algos.BucketPromise,
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedGCRAWideTolerance(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedGCRAWideTolerance, s, now, &l)
}

func plantedGCRAWideTolerance(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	if !s.Set {
		*s = algos.GCRAState{TAT: now, Frac: 0}.State()
	}
	g := s.GCRA()
	r := l.Refill
	tauTicks := l.Burst * l.Unit // PLANTED: was (l.Burst - 1) * l.Unit
	allowAt := g.TAT - tauTicks/r
	if g.Frac > tauTicks%r {
		allowAt++
	}
	d := decision{}
	if now < allowAt {
		d.RetryAfter = allowAt - now
		d.Reset = arith.GCRAReset(g.TAT, g.Frac, now)
		return d.fields()
	}
	d.Allowed = true
	if g.TAT < now {
		g = algos.GCRAState{TAT: now, Frac: 0}
	}
	g.Frac += l.Unit % r
	g.TAT += l.Unit/r + g.Frac/r
	g.Frac %= r
	s.SetGCRA(g)
	ahead := (g.TAT-now)*r + g.Frac
	d.Remaining = max(0, (l.Burst*l.Unit-ahead)/l.Unit)
	d.Reset = arith.GCRAReset(g.TAT, g.Frac, now)
	return d.fields()
}

// FixedWindowOffByOne is the fixed window admitting L+1 per window.
//
// PLANTED BUG: `if count <= l.Rate` instead of `if count < l.Rate`. The
// author thinks of the count after the increment ("allow while count <=
// limit") but compares the count before it.
var FixedWindowOffByOne = algos.Algorithm{
	Name:       "planted-fixed-window-off-by-one",
	Decide:     decidePlantedFixedWindowOffByOne,
	Promise:    algos.AlignedWindowPromise,
	StateDoc:   "window index, count",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedFixedWindowOffByOne(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedFixedWindowOffByOne, s, now, &l)
}

func plantedFixedWindowOffByOne(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	idx := algos.FloorDiv(now, l.Window)
	win := s.Window()
	if !s.Set || win.Index != idx {
		win = algos.WindowState{Index: idx, Count: 0}
		*s = win.State()
	}
	count := win.Count
	end := (idx+1)*l.Window - now
	d := decision{Reset: end}
	if count <= l.Rate { // PLANTED: was count < l.Rate
		count++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	s.SetWindow(algos.WindowState{Index: idx, Count: count})
	d.Remaining = l.Rate - count
	return d.fields()
}

// SlidingLogTrimsTooMuch is the sliding log dropping times 1 µs early.
//
// PLANTED BUG: it drops entries `<= now-l.Window+1` instead of
// `<= now-l.Window`. ZREMRANGEBYSCORE's bounds are inclusive, and the author
// "corrects" for that in the wrong direction; two admits W-1 µs apart then
// no longer share a window.
var SlidingLogTrimsTooMuch = algos.Algorithm{
	Name:       "planted-sliding-log-trims-too-much",
	Decide:     decidePlantedSlidingLogTrimsTooMuch,
	Promise:    algos.SlidingWindowPromise,
	StateDoc:   "every admitted time within the window",
	StateInts:  func(l algos.Limit) int64 { return l.Rate },
	ExactRetry: true,
}

func decidePlantedSlidingLogTrimsTooMuch(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedSlidingLogTrimsTooMuch, s, now, &l)
}

func plantedSlidingLogTrimsTooMuch(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	if !s.Set || s.Log == nil {
		*s = algos.State{Set: true, Log: make([]int64, 0, 16)}
	}
	for s.Head < len(s.Log) && s.Log[s.Head] <= now-l.Window+1 { // PLANTED: was now-l.Window
		s.Head++
	}
	if s.Head == len(s.Log) {
		s.Log, s.Head = s.Log[:0], 0
	}
	live := int64(len(s.Log) - s.Head)
	d := decision{}
	if live < l.Rate {
		s.Log, s.Head = arith.InsertSorted(s.Log, s.Head, now)
		live++
		d.Allowed = true
	} else {
		d.RetryAfter = s.Log[len(s.Log)-int(l.Rate)] + l.Window - now
	}
	d.Remaining = max(0, l.Rate-live)
	if live > 0 {
		d.Reset = max(0, s.Log[len(s.Log)-1]+l.Window-now)
	}
	return d.fields()
}

// TokenBucketNegativeRefill is the token bucket whose refill is not
// clamped at zero for a clock that is behind.
//
// PLANTED BUG: the refill line is
//
//	tokens := min(capacity, b.Level+(now-b.Last)*l.Refill)
//
// instead of `tokens := refill(b.Level, now-b.Last, &l)`, which adds nothing
// when now-b.Last <= 0. An author writes it because on one machine time only moves
// forward, so elapsed looks non-negative and max(0, …) looks redundant.
// Once callers send their own clocks (or NTP steps a clock back), a caller
// behind the stored last gets a negative refill: the bucket drains by the
// skew's worth of tokens and owes them, the stored tokens go below zero,
// and every caller waits until they are paid back. Under a true clock it is
// the token bucket, decision for decision.
//
// No property of the contract catches it, because it is GCRA decision for
// decision, clocks behind included (properties'
// TestTokenBucketNegativeRefillIsGCRA): with P = tokens - now·Refill,
// min(capacity, …) is GCRA's TAT = max(TAT, now) and an admit is TAT += T.
// A node whose clock steps back can be locked out for as long as the step,
// as with GCRA (StepBackNoLongLockout allows the step plus the longest
// wait), and once its clock has caught up the debt is paid back in full. What it gets
// wrong shows when callers' clocks disagree all along: the cap applied at
// the caller furthest ahead throws away refill that the callers behind then
// owe, and near the limit only the callers closest to the furthest ahead
// are admitted. The study's caller-clock trials measure it (GCRA's model
// admits the same there).
//
// Everything else is what such an author writes to stay consistent with a
// level that can be negative: last = now on every call, as the token
// bucket; remaining is reported as 0, never below, while tokens are owed;
// retry-after and reset are computed from the owed level, so they are honest
// on the bucket's own terms (a retry at now+RetryAfter on the same clock is
// admitted). One guard is not the author's: the level never goes below
// minOwedLevel(l), so that the scaled integers stay below 2^52 and the Lua
// twin (doubles) computes exactly what Go does, for any step back up to
// algos.MaxTime. Only a debt of more than (2^52 - capacity)/Refill µs of
// refill reaches it: at 100 per second, over a hundred years.
//
// Stored: algos.BucketState, its Level the tokens (scaled, possibly
// negative), Last the last refill (µs).
var TokenBucketNegativeRefill = algos.Algorithm{
	Name:       "planted-token-bucket-negative-refill",
	Decide:     decidePlantedTokenBucketNegativeRefill,
	Promise:    algos.BucketPromise,
	StateDoc:   "tokens (scaled integer, negative while owed), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedTokenBucketNegativeRefill(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedTokenBucketNegativeRefill, s, now, &l)
}

func plantedTokenBucketNegativeRefill(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	capacity := l.Capacity()
	if !s.Set {
		*s = algos.BucketState{Level: capacity, Last: now}.State()
	}
	b := s.Bucket()
	// Not the bug: elapsed is bounded so the product below cannot overflow.
	elapsed := owedElapsed(b.Level, now-b.Last, *l)
	tokens := min(capacity, b.Level+elapsed*l.Refill) // PLANTED: was refill(b.Level, now-b.Last, &l)
	d := decision{}
	if tokens >= l.Unit {
		tokens -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = arith.CeilDiv(l.Unit-tokens, l.Refill)
	}
	s.SetBucket(algos.BucketState{Level: tokens, Last: now})
	d.Remaining = max(0, tokens/l.Unit)
	d.Reset = arith.CeilDiv(capacity-tokens, l.Refill)
	return d.fields()
}

// minOwedLevel is the lowest level TokenBucketNegativeRefill stores:
// capacity - minOwedLevel stays below 2^52, so reset and retry-after, and
// every product on the way, are exact in a double too.
func minOwedLevel(l algos.Limit) int64 { return l.Capacity() - (arith.MaxExact - 1) }

// owedElapsed bounds elapsed so that level + elapsed·Refill stays exact:
// at most the µs that fill the bucket from level, which changes nothing
// (min caps there anyway), and at least minus the whole µs that take level
// down to minOwedLevel, the deepest debt the bucket keeps. Level is never
// below minOwedLevel, so neither bound is negative.
func owedElapsed(level, elapsed int64, l algos.Limit) int64 {
	if up := arith.CeilDiv(l.Capacity()-level, l.Refill); elapsed > up {
		return up
	}
	if down := (level - minOwedLevel(l)) / l.Refill; elapsed < -down {
		return -down
	}
	return elapsed
}

func two(algos.Limit) int64 { return 2 }
