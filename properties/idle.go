package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// RefillCappedAfterIdle claims that a long idle spell refills the key to
// idle and no further: after any traffic and then at least max(1 h,
// MaxWait(l)) without a call (up to the end of MaxTime), one call is
// admitted and leaves exactly the promised burst minus one (Burst-1 for
// buckets, Rate-1 for windows). A limiter that drops an idle key (a KeyTTL)
// is held to the same: a key it forgot must come back as idle.
func RefillCappedAfterIdle(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, times := c.draw(t, spec)
		l := r.l
		lim, calls, last := r.replayAll(times)
		least := max(Hour, c.maxWait(l))
		extra := rapid.OneOf(
			rapid.Int64Range(0, 2*l.Window),
			rapid.Int64Range(0, 30*24*Hour),
			rapid.Int64Range(0, max(0, algos.MaxTime-last-least)),
		).Draw(t, "idle beyond the least")
		at := last + least + extra
		n := c.instant(t, spec, l)
		d := r.allow(lim, 0, at, calls)
		calls = append(calls, call{at, d})
		if !d.Allowed || d.Remaining != n-1 {
			t.Fatalf("%s under %v: after %s idle, want an admit leaving %d, got %+v%s", spec.Name, l, algos.FormatMicros(at-last), n-1, d, trace(calls))
		}
	}
}
