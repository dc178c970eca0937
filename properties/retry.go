package properties

import (
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// RetryAfterHonest claims that every denial's retry-after is honest on one
// node with no other traffic: a retry at exactly now+RetryAfter is admitted,
// and, when algo.ExactRetry, a retry one µs earlier is still denied. The
// arrivals end with a flood at one instant, so there is always a denial.
func RetryAfterHonest(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := withFlood(Arrivals(l).Draw(t, "arrivals"), atOneInstant(t, algo.Promise(l))+1)
		var calls []call
		replay(algo, l, times, func(i int, s *algos.State, d algos.Decision) {
			calls = append(calls, call{times[i], d})
			if d.Allowed {
				return
			}
			if d.RetryAfter <= 0 {
				t.Fatalf("%s under %v: denied with retry-after %d%s", algo.Name, l, d.RetryAfter, trace(calls))
			}
			at := times[i] + d.RetryAfter
			if r := s.Clone(); !algo.Decide(&r, at, l).Allowed {
				t.Fatalf("%s under %v: the retry at %d, exactly retry-after later, was denied%s", algo.Name, l, at, trace(calls))
			}
			if r := s.Clone(); algo.ExactRetry && algo.Decide(&r, at-1, l).Allowed {
				t.Fatalf("%s under %v: the retry at %d, 1µs before retry-after, was admitted (ExactRetry)%s", algo.Name, l, at-1, trace(calls))
			}
		})
	}
}

// RetryLoopNeverExtends claims that a client retrying while denied never
// pushes its own deadline back: after a denial at t with retry-after R, any
// retries before t+R that are denied report a deadline no later than t+R,
// and the call at t+R is admitted.
func RetryLoopNeverExtends(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		s, calls := replay(algo, l, times, nil)
		now := int64(0)
		if len(times) > 0 {
			now = times[len(times)-1]
		}
		n := atOneInstant(t, algo.Promise(l))
		d := algo.Decide(&s, now, l)
		calls = append(calls, call{now, d})
		for i := int64(0); d.Allowed; i++ {
			if i > n {
				t.Fatalf("%s under %v: %d admits at one instant, the promise allows %d%s", algo.Name, l, i+1, n, trace(calls))
			}
			d = algo.Decide(&s, now, l)
			calls = append(calls, call{now, d})
		}
		if d.RetryAfter <= 0 {
			t.Fatalf("%s under %v: denied with retry-after %d%s", algo.Name, l, d.RetryAfter, trace(calls))
		}
		deadline := now + d.RetryAfter
		retries := rapid.SliceOfN(rapid.Int64Range(now, deadline-1), 0, 12).Draw(t, "retries")
		slices.Sort(retries)
		for _, at := range retries {
			d := algo.Decide(&s, at, l)
			calls = append(calls, call{at, d})
			if d.Allowed {
				return // admitted early: honesty is RetryAfterHonest's concern
			}
			if at+d.RetryAfter > deadline {
				t.Fatalf("%s under %v: a retry at %d moved the deadline from %d to %d%s", algo.Name, l, at, deadline, at+d.RetryAfter, trace(calls))
			}
		}
		if d := algo.Decide(&s, deadline, l); !d.Allowed {
			calls = append(calls, call{deadline, d})
			t.Fatalf("%s under %v: after denied retries, the call at the deadline %d was denied%s", algo.Name, l, deadline, trace(calls))
		}
	}
}

// withFlood appends n calls at the last time (or at 0).
func withFlood(times []int64, n int64) []int64 {
	last := int64(0)
	if len(times) > 0 {
		last = times[len(times)-1]
	}
	for range n {
		times = append(times, last)
	}
	return times
}
