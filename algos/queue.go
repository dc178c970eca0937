package algos

import (
	"errors"
	"fmt"
	"math/bits"
)

// QueueingGCRA is the GCRA with a queue in front of it: a request the GCRA
// would refuse because it came early is admitted and held until the GCRA
// would admit it, if that is at most maxDelay µs away, and refused
// otherwise. A smoothing limiter built this way refuses less, and what it
// no longer refuses it makes wait: the latency it adds is Decision.Delay,
// which capacity and metrics report as a distribution.
//
// The decision is the GCRA's, in the same exact integer arithmetic and the
// same stored state (GCRAState: the TAT in whole µs and a remainder). With
// allowAt = ⌈TAT - tau⌉, the first whole µs the GCRA admits at, a request at
// now is:
//   - admitted at once (Delay 0) when now ≥ allowAt, as the GCRA admits it;
//   - admitted and held (Delay = allowAt - now) when allowAt - now ≤
//     maxDelay, decided as the GCRA decides a request that arrives at
//     allowAt, the instant it is let through;
//   - refused otherwise, with the exact RetryAfter allowAt - maxDelay - now:
//     a retry then is admitted and held maxDelay, one a µs sooner refused.
//
// What it promises, on one node with a true clock: the admits, counted at
// the instants they are let through (now + Delay), keep the GCRA's own
// promise, BucketPromise(l), because every one of them is a GCRA admit at
// that instant (and the GCRA's TAT only moves forward, so the order they
// were decided in does not matter); no Delay exceeds maxDelay. Counted when
// they are decided, which is where the simulator and the properties judge
// an Algorithm's Promise, the same admits are at most ⌈maxDelay·L/W⌉ more
// than the GCRA's in any interval: that is its Promise, the bucket promise
// of a burst B + ⌈maxDelay·L/W⌉. A held request is let through at a whole
// µs, so where TAT carries a fraction of a µs past allowAt (a tolerance
// below 1 µs, as with a burst of 1) a back-to-back queue drains one request
// every ⌈W/L⌉ µs rather than every W/L, as the GCRA admits requests that
// arrive at whole µs.
//
// Remaining counts the requests that would be let through at once at this
// instant, as the GCRA's does: 0 once a request is held, though more may be
// admitted to wait (properties.RemainingIsExact, which counts every admit,
// does not hold for it with maxDelay > 0). Reset is the µs until TAT is
// past: the queue empty and the bucket idle.
//
// A request of cost n through limiter.Memory is n unit decisions at one
// instant; its Delay is the last unit's, so the whole request is let
// through when its last unit is, and the release promise is a promise
// about units, kept only for requests of cost 1.
//
// With maxDelay 0 it decides exactly as GCRA does. It is not in All(): the
// registry's six are the table's rows, and every golden table would change.
// Its name is "gcra-queue-" and maxDelay as FormatMicros prints it. A
// negative maxDelay, or one above MaxTime, is an error.
func QueueingGCRA(maxDelay int64) (Algorithm, error) {
	switch {
	case maxDelay < 0:
		return Algorithm{}, fmt.Errorf("algos: a queueing GCRA's max delay must not be negative, got %d µs", maxDelay)
	case maxDelay > MaxTime:
		return Algorithm{}, fmt.Errorf("algos: a queueing GCRA's max delay of %d µs is longer than MaxTime", maxDelay)
	}
	return Algorithm{
		Name: "gcra-queue-" + FormatMicros(maxDelay),
		Decide: func(s *State, now int64, l Limit) Decision {
			return decideGCRAHeld(s, now, &l, maxDelay)
		},
		Promise:    func(l Limit) Promise { return queuedPromise(l, maxDelay) },
		StateDoc:   GCRA.StateDoc,
		StateInts:  two,
		ExactRetry: true,
	}, nil
}

// queuedPromise is the bucket promise, by decision time, of a GCRA whose
// admits may be held up to maxDelay: its burst widened by ⌈maxDelay·L/W⌉.
// A GCRA admits at t when t ≥ TAT - tau, and the queue admits when t ≥
// TAT - tau - maxDelay, so n admits in an interval of length Δ need
// (n-1)·T ≤ Δ + tau + maxDelay: n ≤ B + (Δ + maxDelay)·L/W. Rounding the
// extra burst up keeps the bound whole, loose by less than one admit.
func queuedPromise(l Limit, maxDelay int64) Promise {
	if maxDelay == 0 {
		return BucketPromise(l)
	}
	extra, err := extraBurst(l, maxDelay)
	var wide Limit
	if err == nil {
		wide, err = NewLimit(l.Rate, l.Window, l.Burst+extra)
	}
	released := fmt.Sprintf("%d + %d·Δ/%s as let through, each held at most %s", l.Burst, l.Rate, FormatMicros(l.Window), FormatMicros(maxDelay))
	if err != nil {
		reason := fmt.Sprintf("promise: gcra-queue-%s under %v: its bound by decision time cannot be counted exactly: %v", FormatMicros(maxDelay), l, err)
		return NewPromise("at most "+released, func([]int64) *Violation { return &Violation{Reason: reason} })
	}
	p := BucketPromise(wide)
	p.Text = fmt.Sprintf("at most %d + %d·Δ/%s admits in any interval of length Δ as decided; %s", wide.Burst, l.Rate, FormatMicros(l.Window), released)
	return p
}

// extraBurst is ⌈maxDelay·L/W⌉ = ⌈maxDelay·Refill/Unit⌉, the product taken in
// 128 bits.
func extraBurst(l Limit, maxDelay int64) (int64, error) {
	if err := l.Validate(); err != nil {
		return 0, err
	}
	hi, lo := bits.Mul64(uint64(maxDelay), uint64(l.Refill))
	if hi >= uint64(l.Unit) {
		return 0, errors.New("the extra burst overflows")
	}
	q, rem := bits.Div64(hi, lo, uint64(l.Unit))
	if rem > 0 {
		q++
	}
	if q > uint64(maxExact) {
		return 0, errors.New("the extra burst overflows")
	}
	return int64(q), nil
}
