package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// RemainingNeverNegative claims that on one node with a true clock every
// decision has remaining, retry-after and reset of at least 0, that an
// admit has retry-after 0, and that a denial has remaining 0 and a positive
// retry-after.
func RemainingNeverNegative(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		r := newRun(t, spec, l)
		times := withFlood(Arrivals(l).Draw(t, "arrivals"), c.instant(t, spec, l)+1)
		calls := r.replay(r.open(), 0, times, nil)
		for i, c := range calls {
			if msg := badDecision(c.d); msg != "" {
				t.Fatalf("%s under %v: %s%s", spec.Name, l, msg, trace(calls[:i+1]))
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
// never above what the promise allows at one instant). What follows each
// decision is asked of a fresh key that has seen the same calls.
func RemainingIsExact(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		r := newRun(t, spec, l)
		n := c.instant(t, spec, l)
		h := r.replayHistory(times)
		// A branch after each decision, up to the first that claims too much.
		var bs []branch
		for i, c := range h.calls {
			if c.d.Remaining > n {
				break
			}
			bs = append(bs, branch{upto: i, at: c.t, limit: c.d.Remaining + 1})
		}
		got := r.branches(h, bs)
		for i, c := range h.calls {
			if c.d.Remaining > n {
				t.Fatalf("%s under %v: remaining %d, more than the promise allows at one instant (%d)%s", spec.Name, l, c.d.Remaining, n, trace(h.calls[:i+1]))
			}
			if got[i] != c.d.Remaining {
				t.Fatalf("%s under %v: remaining %d, but %d more were admitted at the same instant%s", spec.Name, l, c.d.Remaining, got[i], trace(h.calls[:i+1]))
			}
		}
		h.failed(r)
	}
}

// ResetReachesIdle claims that Reset is honest: at now+Reset, with no other
// traffic, the key grants a full burst from idle again (as many admits at
// one instant as the promise allows). A negative Reset, which points into
// the past, breaks it. What follows each decision is asked of a fresh key
// that has seen the same calls.
func ResetReachesIdle(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		r := newRun(t, spec, l)
		n := c.instant(t, spec, l)
		h := r.replayHistory(times)
		var bs []branch
		for i, c := range h.calls {
			if c.d.Reset < 0 {
				break
			}
			bs = append(bs, branch{upto: i, at: c.t + c.d.Reset, limit: n + 1})
		}
		got := r.branches(h, bs)
		for i, c := range h.calls {
			if c.d.Reset < 0 {
				t.Fatalf("%s under %v: negative reset %d, a time before the call%s", spec.Name, l, c.d.Reset, trace(h.calls[:i+1]))
			}
			if at := c.t + c.d.Reset; got[i] != n {
				t.Fatalf("%s under %v: at %d, reset %d later, %d admits at one instant, want the full %d%s", spec.Name, l, at, c.d.Reset, got[i], n, trace(h.calls[:i+1]))
			}
		}
		h.failed(r)
	}
}
