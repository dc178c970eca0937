package properties

import (
	"slices"

	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// RetryAfterHonest claims that every denial's retry-after is honest on one
// node with no other traffic: a retry at exactly now+RetryAfter is admitted,
// and, when spec.ExactRetry, a retry one µs earlier is still denied. The
// arrivals end with a flood at one instant, so there is always a denial.
// Each retry is asked of a fresh key that has seen the same calls: after
// every denial of a history of up to 64 calls, and after those at the edges
// of each instant of a longer one (see edges), whose branches would
// otherwise cost the square of its length.
func RetryAfterHonest(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, times := c.drawFlooded(t, spec)
		l := r.l
		h := r.replayHistory(times)
		// After each denial, up to the first without a retry-after: a retry
		// at the deadline (to be admitted) and, if ExactRetry, one 1µs
		// before it (to be denied).
		keep := edges(h.calls)
		var bs []branch
		for i, c := range h.calls {
			if c.d.Allowed {
				continue
			}
			if c.d.RetryAfter <= 0 {
				break
			}
			if !keep[i] {
				continue
			}
			at := c.t + c.d.RetryAfter
			bs = append(bs, branch{upto: i, at: at, limit: 1})
			if spec.ExactRetry {
				bs = append(bs, branch{upto: i, at: at - 1, limit: 1})
			}
		}
		got := r.branches(h, bs)
		for i, c := range h.calls {
			if c.d.Allowed {
				continue
			}
			if c.d.RetryAfter <= 0 {
				t.Fatalf("%s under %v: denied with retry-after %d%s", spec.Name, l, c.d.RetryAfter, trace(h.calls[:i+1]))
			}
			if !keep[i] {
				continue
			}
			at := c.t + c.d.RetryAfter
			if got[0] != 1 {
				t.Fatalf("%s under %v: the retry at %d, exactly retry-after later, was denied%s", spec.Name, l, at, trace(h.calls[:i+1]))
			}
			if spec.ExactRetry && got[1] != 0 {
				t.Fatalf("%s under %v: the retry at %d, 1µs before retry-after, was admitted (ExactRetry)%s", spec.Name, l, at-1, trace(h.calls[:i+1]))
			}
			if spec.ExactRetry {
				got = got[2:]
			} else {
				got = got[1:]
			}
		}
		h.failed(r)
	}
}

// RetryLoopNeverExtends claims that a client retrying while denied never
// pushes its own deadline back: after a denial at t with retry-after R, any
// retries before t+R that are denied report a deadline no later than t+R,
// and the call at t+R is admitted. All its calls are on one key, in order
// of time.
func RetryLoopNeverExtends(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, times := c.draw(t, spec)
		l := r.l
		lim, calls, now := r.replayAll(times)
		n := c.instant(t, spec, l)
		d := r.allow(lim, 0, now, calls)
		calls = append(calls, call{now, d})
		for i := int64(0); d.Allowed; i++ {
			if i > n {
				t.Fatalf("%s under %v: %d admits at one instant, the promise allows %d%s", spec.Name, l, i+1, n, trace(calls))
			}
			d = r.allow(lim, 0, now, calls)
			calls = append(calls, call{now, d})
		}
		if d.RetryAfter <= 0 {
			t.Fatalf("%s under %v: denied with retry-after %d%s", spec.Name, l, d.RetryAfter, trace(calls))
		}
		deadline := now + d.RetryAfter
		retries := rapid.SliceOfN(rapid.Int64Range(now, deadline-1), 0, 12).Draw(t, "retries")
		slices.Sort(retries)
		for _, at := range retries {
			d := r.allow(lim, 0, at, calls)
			calls = append(calls, call{at, d})
			if d.Allowed {
				return // admitted early: honesty is RetryAfterHonest's concern
			}
			if at+d.RetryAfter > deadline {
				t.Fatalf("%s under %v: a retry at %d moved the deadline from %d to %d%s", spec.Name, l, at, deadline, at+d.RetryAfter, trace(calls))
			}
		}
		if d := r.allow(lim, 0, deadline, calls); !d.Allowed {
			calls = append(calls, call{deadline, d})
			t.Fatalf("%s under %v: after denied retries, the call at the deadline %d was denied%s", spec.Name, l, deadline, trace(calls))
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
