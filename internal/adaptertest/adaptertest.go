package adaptertest

import (
	"math/rand/v2"

	"github.com/overshoot-go/overshoot/algos"
)

// Expected is one call at Now on one key and the decision it must get. It is
// an alias of an unnamed struct, not a named type, so that the adapters'
// tables may list their steps unkeyed, {now, decision}, as they read best:
// vet's composites check asks for keys on named structs of other packages
// only.
type Expected = struct {
	Now  int64
	Want algos.Decision
}

// Admit is an admit leaving remaining, full again in reset µs.
func Admit(remaining, reset int64) algos.Decision {
	return algos.Decision{Allowed: true, Remaining: remaining, Reset: reset}
}

// Deny is a denial whose retry is retry µs away, full again in reset µs.
func Deny(retry, reset int64) algos.Decision {
	return algos.Decision{RetryAfter: retry, Reset: reset}
}

// Burst is n admits at now from an idle key, one every interval µs of the
// limit: the i-th leaves Remaining n-i and Reset i·interval (for a token
// bucket of n, the time to earn back the i spent; for GCRA, TAT moved to
// now + i·interval).
func Burst(now, n, interval int64) []Expected {
	var steps []Expected
	for i := int64(1); i <= n; i++ {
		steps = append(steps, Expected{now, Admit(n-i, i*interval)})
	}
	return steps
}

// Limits are the limits the adapters compare their libraries with their
// algos twins on: integer and fractional emission intervals (3/7 s), bursts
// of 1 and more, from a minute down to a millisecond. Each call makes a
// new slice, which a caller may extend.
func Limits() []algos.Limit {
	return []algos.Limit{
		algos.MustLimit(10, algos.Second, 20),
		algos.MustLimit(7, 3*algos.Second, 5),
		algos.MustLimit(1000, algos.Second, 1),
		algos.MustLimit(3, 1000, 4),
		algos.MustLimit(1, 60*algos.Second, 3),
	}
}

// Sequence is a seeded stream of request times for a limit: a quarter at
// the same instant, the rest gaps up to a quarter, a half, two emission
// intervals T = W/L, and rarely (2%) an idle of up to a full refill: on
// average about twice the rate for a burst of 20, more for smaller ones.
// With boundary, half the requests after a denial come at its RetryAfter
// (or 1 µs before), and a tenth of the others at the previous Reset (or
// 1 µs before), so that requests land on the instants where an exact
// limiter changes its answer, which is where a library's float rounding
// shows.
type Sequence struct {
	r        *rand.Rand
	l        algos.Limit
	boundary bool
	now      int64
}

// NewSequence is the stream r draws for l, starting at 0.
func NewSequence(r *rand.Rand, l algos.Limit, boundary bool) *Sequence {
	return &Sequence{r: r, l: l, boundary: boundary}
}

// Next is the time of the next request, given the decision of the one
// before it (first for the first request, which has none).
func (q *Sequence) Next(prev algos.Decision, first bool) int64 {
	T := max(1, q.l.Window/q.l.Rate)
	if q.boundary && !first {
		switch {
		case prev.RetryAfter > 0 && q.r.IntN(2) == 0:
			q.now += prev.RetryAfter - int64(q.r.IntN(2)) // at it, or 1 µs before
			return q.now
		case q.r.IntN(10) == 0:
			q.now += max(0, prev.Reset-int64(q.r.IntN(2)))
			return q.now
		}
	}
	switch n := q.r.IntN(100); {
	case n < 25:
	case n < 50:
		q.now += q.r.Int64N(T/4 + 1)
	case n < 75:
		q.now += q.r.Int64N(T/2 + 1)
	case n < 98:
		q.now += q.r.Int64N(2*T + 1)
	default:
		q.now += q.r.Int64N(q.l.Burst*T + 1)
	}
	return q.now
}
