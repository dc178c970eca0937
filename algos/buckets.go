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
// Stored: A = tokens (scaled), B = last (µs).
var TokenBucket = Algorithm{
	Name:       "token-bucket",
	Decide:     decideTokenBucket,
	Promise:    BucketPromise,
	StateDoc:   "tokens (scaled integer), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decideTokenBucket(s *State, now int64, l Limit) Decision {
	capacity := l.bucketSize()
	if !s.Set {
		*s = State{Set: true, A: capacity, B: now}
	}
	tokens, last := s.A, s.B
	tokens = refill(tokens, now-last, &l)
	last = now
	d := Decision{}
	if tokens >= l.Unit {
		tokens -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = ceilDiv(l.Unit-tokens, l.Refill)
	}
	s.A, s.B = tokens, last
	d.Remaining = tokens / l.Unit
	d.Reset = ceilDiv(capacity-tokens, l.Refill)
	return d
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
// Stored: A = level (scaled), B = last (µs).
var LeakyBucket = Algorithm{
	Name:       "leaky-bucket",
	Decide:     decideLeakyBucket,
	Promise:    BucketPromise,
	StateDoc:   "level (scaled integer), last drain time",
	StateInts:  two,
	ExactRetry: true,
}

func decideLeakyBucket(s *State, now int64, l Limit) Decision {
	capacity := l.bucketSize()
	if !s.Set {
		*s = State{Set: true, A: 0, B: now}
	}
	level, last := s.A, s.B
	level = drain(level, now-last, &l)
	last = max(last, now)
	// The level is as of last; a caller whose clock is behind waits the gap too.
	behind := last - now
	d := Decision{}
	if level+l.Unit <= capacity {
		level += l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = behind + ceilDiv(level+l.Unit-capacity, l.Refill)
	}
	s.A, s.B = level, last
	d.Remaining = (capacity - level) / l.Unit
	d.Reset = behind + ceilDiv(level, l.Refill)
	return d
}

// GCRA keeps one theoretical arrival time, TAT, that only moves forward.
// With emission interval T = W/L and tolerance tau = (B-1)·T it admits when
// now >= TAT - tau, then sets TAT = max(TAT, now) + T.
//
// T is rarely a whole number of µs, so TAT is kept exactly as a whole part
// and a fraction: Stored: A = TAT µs, B = TAT's remainder in 1/l.Refill µs.
var GCRA = Algorithm{
	Name:       "gcra",
	Decide:     decideGCRA,
	Promise:    BucketPromise,
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: true,
}

func decideGCRA(s *State, now int64, l Limit) Decision { return decideGCRAHeld(s, now, &l, 0) }

// decideGCRAHeld is the GCRA's decision for a request that may be held up to
// maxDelay µs (≥ 0) before it is let through; QueueingGCRA says what it
// promises. The first µs the GCRA admits at is allowAt = ⌈TAT - tau⌉: a
// request at now ≥ allowAt is admitted at once, one with allowAt - now ≤
// maxDelay is admitted and held until allowAt, and decided as the GCRA
// decides a request that arrives then, and any other is refused. With
// maxDelay 0 this is the GCRA.
func decideGCRAHeld(s *State, now int64, l *Limit, maxDelay int64) Decision {
	if !s.Set {
		*s = State{Set: true, A: now, B: 0}
	}
	// TAT is tat µs and frac/r of a µs more.
	tat, frac := s.A, s.B
	r := l.Refill
	tauTicks := (l.Burst - 1) * l.Unit
	// allowAt = ⌈TAT - tau⌉ in whole µs.
	allowAt := tat - tauTicks/r
	if frac > tauTicks%r { // a fraction of a µs is left over: round up
		allowAt++
	}
	d := Decision{}
	if now < allowAt-maxDelay {
		d.RetryAfter = allowAt - maxDelay - now
		d.Reset = arith.GCRAReset(tat, frac, now)
		return d
	}
	d.Allowed = true
	at := max(now, allowAt) // when it is let through
	d.Delay = at - now
	if tat < at {
		tat, frac = at, 0
	}
	frac += l.Unit % r
	tat += l.Unit/r + frac/r
	frac %= r
	s.A, s.B = tat, frac
	if d.Delay == 0 {
		// TAT - now in ticks is at most Burst·Unit here, so this cannot overflow.
		ahead := (tat-now)*r + frac
		d.Remaining = max(0, (l.Burst*l.Unit-ahead)/l.Unit)
	} // else a request is held: none more gets through at once
	d.Reset = arith.GCRAReset(tat, frac, now)
	return d
}
