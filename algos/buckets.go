package algos

import "github.com/overshoot-go/overshoot/internal/arith"

// The three buckets keep their level in scaled tokens: a request costs
// l.Unit and each µs is worth l.Refill, so a refill is never fractional and
// the Lua twins do the same integer arithmetic.

// TokenBucket refills max(0, now-last) worth of tokens, capped at the burst,
// spends one token per admit, and stores last = now on every call. That last
// line is its weakness: a node whose clock is behind moves last back, and the
// next node that is ahead is refilled for the same interval again.
//
// Stored: BucketState, its Level the tokens left (scaled), Last the last
// refill (µs).
var TokenBucket = Algorithm{
	Name:       "token-bucket",
	Decide:     decideTokenBucket,
	Promise:    BucketPromise,
	StateDoc:   "tokens (scaled integer), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decideTokenBucket(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset := tokenBucketFields(s, now, &l)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset}
}

func tokenBucketFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	capacity := l.bucketSize()
	if !s.Set {
		*s = BucketState{Level: capacity, Last: now}.State()
	}
	b := s.Bucket()
	tokens := refill(b.Level, now-b.Last, l)
	allowed, retry := false, int64(0)
	if tokens >= l.Unit {
		tokens -= l.Unit
		allowed = true
	} else {
		retry = ceilDiv(l.Unit-tokens, l.Refill)
	}
	s.SetBucket(BucketState{Level: tokens, Last: now})
	return allowed, tokens / l.Unit, retry, ceilDiv(capacity-tokens, l.Refill)
}

// refill adds elapsed µs worth of tokens to level, capped at the capacity
// (arith.Refill).
//
// The decisions hand their limit to helpers by pointer, and read its
// capacity through bucketSize, not Capacity: a Limit is five integers, and
// an inlined call that takes one by value copies it whole from where the
// call's arguments were just stored, a copy the processor cannot forward
// from those stores. It cost more than the rest of the decision.
func refill(level, elapsed int64, l *Limit) int64 {
	return arith.Refill(level, elapsed, l.bucketSize(), l.Refill)
}

// drain removes elapsed µs worth of level, never below zero (arith.Drain).
func drain(level, elapsed int64, l *Limit) int64 { return arith.Drain(level, elapsed, l.Refill) }

// LeakyBucket is the token bucket mirrored, as a meter: each admit adds one
// request's worth of level, the level drains at the rate, and a request is
// admitted while it fits under the burst. It stores last = max(last, now),
// so a node whose clock is behind cannot rewind it.
//
// Stored: BucketState, its Level the water in the bucket (scaled), Last
// the last drain (µs).
var LeakyBucket = Algorithm{
	Name:       "leaky-bucket",
	Decide:     decideLeakyBucket,
	Promise:    BucketPromise,
	StateDoc:   "level (scaled integer), last drain time",
	StateInts:  two,
	ExactRetry: true,
}

func decideLeakyBucket(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset := leakyBucketFields(s, now, &l)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset}
}

func leakyBucketFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	capacity := l.bucketSize()
	if !s.Set {
		*s = BucketState{Level: 0, Last: now}.State()
	}
	b := s.Bucket()
	level := drain(b.Level, now-b.Last, l)
	last := max(b.Last, now)
	// The level is as of last; a caller whose clock is behind waits the gap too.
	behind := last - now
	allowed, retry := false, int64(0)
	if level+l.Unit <= capacity {
		level += l.Unit
		allowed = true
	} else {
		retry = behind + ceilDiv(level+l.Unit-capacity, l.Refill)
	}
	s.SetBucket(BucketState{Level: level, Last: last})
	return allowed, (capacity - level) / l.Unit, retry, behind + ceilDiv(level, l.Refill)
}

// GCRA keeps one theoretical arrival time, TAT, that only moves forward.
// With emission interval T = W/L and tolerance tau = (B-1)·T it admits when
// now >= TAT - tau, then sets TAT = max(TAT, now) + T.
//
// T is rarely a whole number of µs, so TAT is kept exactly as a whole part
// and a fraction. Stored: GCRAState, its TAT the whole µs, Frac the
// remainder in 1/l.Refill µs.
var GCRA = Algorithm{
	Name:       "gcra",
	Decide:     decideGCRA,
	Promise:    BucketPromise,
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: true,
}

func decideGCRA(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset, delay := gcraHeld(s, now, &l, 0)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset, Delay: delay}
}

// gcraFields is the GCRA's decision as its fields: with no request held,
// its Delay is 0.
func gcraFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	allowed, remaining, retry, reset, _ := gcraHeld(s, now, l, 0)
	return allowed, remaining, retry, reset
}

// Every decision here and in windows.go is returned as one composite
// literal of values held in locals, never a Decision built field by field
// in memory: a struct written in narrow stores and then returned (or
// copied by its caller) is read back in wider moves than it was written
// in, which the processor cannot forward from those stores, and the stall
// cost about as much as the rest of the decision.

// decideGCRAHeld is the GCRA's decision for a request that may be held up to
// maxDelay µs (≥ 0) before it is let through; QueueingGCRA says what it
// promises. The first µs the GCRA admits at is allowAt = ⌈TAT - tau⌉: a
// request at now ≥ allowAt is admitted at once, one with allowAt - now ≤
// maxDelay is admitted and held until allowAt, and decided as the GCRA
// decides a request that arrives then, and any other is refused. With
// maxDelay 0 this is the GCRA.
func decideGCRAHeld(s *State, now int64, l *Limit, maxDelay int64) Decision {
	allowed, remaining, retry, reset, delay := gcraHeld(s, now, l, maxDelay)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset, Delay: delay}
}

// gcraHeld is decideGCRAHeld's decision as its fields.
func gcraHeld(s *State, now int64, l *Limit, maxDelay int64) (allowed bool, remaining, retry, reset, delay int64) {
	if !s.Set {
		*s = GCRAState{TAT: now, Frac: 0}.State()
	}
	// TAT is tat µs and frac/r of a µs more.
	g := s.GCRA()
	tat, frac := g.TAT, g.Frac
	r := l.Refill
	tauTicks := (l.Burst - 1) * l.Unit
	// allowAt = ⌈TAT - tau⌉ in whole µs.
	allowAt := tat - tauTicks/r
	if frac > tauTicks%r { // a fraction of a µs is left over: round up
		allowAt++
	}
	if now < allowAt-maxDelay {
		return false, 0, allowAt - maxDelay - now, arith.GCRAReset(tat, frac, now), 0
	}
	at := max(now, allowAt) // when it is let through
	delay = at - now
	if tat < at {
		tat, frac = at, 0
	}
	frac += l.Unit % r
	tat += l.Unit/r + frac/r
	frac %= r
	s.SetGCRA(GCRAState{TAT: tat, Frac: frac})
	if delay == 0 {
		// TAT - now in ticks is at most Burst·Unit here, so this cannot overflow.
		ahead := (tat-now)*r + frac
		remaining = max(0, (l.Burst*l.Unit-ahead)/l.Unit)
	} // else a request is held: none more gets through at once
	return true, remaining, 0, arith.GCRAReset(tat, frac, now), delay
}
