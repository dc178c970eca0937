package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// RemainingNeverNegative claims that on one node with a true clock every
// decision has remaining, retry-after and reset of at least 0, that an
// admit has retry-after 0, and that a denial has remaining 0 and a positive
// retry-after.
func RemainingNeverNegative(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := withFlood(Arrivals(l).Draw(t, "arrivals"), atOneInstant(t, algo.Promise(l))+1)
		_, calls := replay(algo, l, times, nil)
		for i, c := range calls {
			if msg := badDecision(c.d); msg != "" {
				t.Fatalf("%s under %v: %s%s", algo.Name, l, msg, trace(calls[:i+1]))
			}
		}
	}
}

// badDecision says what is inconsistent in d, or "".
func badDecision(d algos.Decision) string {
	switch {
	case d.Remaining < 0:
		return "negative remaining"
	case d.RetryAfter < 0:
		return "negative retry-after"
	case d.Reset < 0:
		return "negative reset"
	case d.Allowed && d.RetryAfter != 0:
		return "an admit with a retry-after"
	case !d.Allowed && d.RetryAfter == 0:
		return "a denial without a retry-after"
	case !d.Allowed && d.Remaining != 0:
		return "a denial with remaining above 0"
	}
	return ""
}

// RemainingIsExact claims that Remaining means what it says on one node
// with a true clock: right after any decision, exactly Remaining more calls
// at the same instant are admitted, and the next is denied (so Remaining is
// never above what the promise allows at one instant).
func RemainingIsExact(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		n := atOneInstant(t, algo.Promise(l))
		var calls []call
		replay(algo, l, times, func(i int, s *algos.State, d algos.Decision) {
			calls = append(calls, call{times[i], d})
			if d.Remaining > n {
				t.Fatalf("%s under %v: remaining %d, more than the promise allows at one instant (%d)%s", algo.Name, l, d.Remaining, n, trace(calls))
			}
			if got := admitsAt(algo, *s, times[i], l, d.Remaining+1); got != d.Remaining {
				t.Fatalf("%s under %v: remaining %d, but %d more were admitted at the same instant%s", algo.Name, l, d.Remaining, got, trace(calls))
			}
		})
	}
}

// ResetReachesIdle claims that Reset is honest: at now+Reset, with no other
// traffic, the key grants a full burst from idle again (as many admits at
// one instant as the promise allows).
func ResetReachesIdle(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		n := atOneInstant(t, algo.Promise(l))
		var calls []call
		replay(algo, l, times, func(i int, s *algos.State, d algos.Decision) {
			calls = append(calls, call{times[i], d})
			at := times[i] + d.Reset
			if got := admitsAt(algo, *s, at, l, n+1); got != n {
				t.Fatalf("%s under %v: at %d, reset %d later, %d admits at one instant, want the full %d%s", algo.Name, l, at, d.Reset, got, n, trace(calls))
			}
		})
	}
}
