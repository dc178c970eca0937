package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// BurstFromIdle claims that an idle key, at one instant, admits exactly as
// many requests as the promise allows at one instant (Burst for the bucket
// promise, Rate for the window promises) with Remaining counting down to 0,
// and then denies with a positive retry-after.
func BurstFromIdle(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		now := rapid.OneOf(rapid.Int64Range(0, 3*l.Window), rapid.Int64Range(0, algos.MaxTime)).Draw(t, "now")
		r := newRun(t, spec, l)
		n := c.instant(t, spec, l)
		lim := r.open()
		var calls []call
		for i := int64(1); i <= n+1; i++ {
			d := r.allow(lim, 0, now, calls)
			calls = append(calls, call{now, d})
			switch {
			case i <= n && !d.Allowed:
				t.Fatalf("%s under %v: call %d of a burst of %d from idle was denied%s", spec.Name, l, i, n, trace(calls))
			case i <= n && d.Remaining != n-i:
				t.Fatalf("%s under %v: after %d of a burst of %d from idle, remaining %d, want %d%s", spec.Name, l, i, n, d.Remaining, n-i, trace(calls))
			case i > n && (d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0):
				t.Fatalf("%s under %v: call %d at one instant from idle, want a deny with remaining 0 and a retry-after, got %+v%s", spec.Name, l, i, d, trace(calls))
			}
		}
	}
}
