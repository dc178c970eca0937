package properties

import (
	"fmt"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// call is one decision as a counterexample shows it.
type call struct {
	t int64
	d algos.Decision
}

func (c call) String() string {
	if c.d.Allowed {
		return fmt.Sprintf("%d: admit (remaining %d, reset %d)", c.t, c.d.Remaining, c.d.Reset)
	}
	return fmt.Sprintf("%d: deny (retry-after %d, reset %d)", c.t, c.d.RetryAfter, c.d.Reset)
}

// trace prints the last calls, newest last, for a failure message.
func trace(calls []call) string {
	const keep = 12
	var b strings.Builder
	if len(calls) > keep {
		fmt.Fprintf(&b, "\n  ... %d earlier calls", len(calls)-keep)
		calls = calls[len(calls)-keep:]
	}
	for _, c := range calls {
		b.WriteString("\n  ")
		b.WriteString(c.String())
	}
	return b.String()
}

// replay calls algo at each time on a fresh key, calling visit (if not nil)
// after every decision with the state as it stands then.
func replay(algo algos.Algorithm, l algos.Limit, times []int64, visit func(i int, s *algos.State, d algos.Decision)) (algos.State, []call) {
	var s algos.State
	calls := make([]call, 0, len(times))
	for i, now := range times {
		d := algo.Decide(&s, now, l)
		calls = append(calls, call{now, d})
		if visit != nil {
			visit(i, &s, d)
		}
	}
	return s, calls
}

// admitsAt is how many calls at the one instant now a copy of s admits
// before the first denial, counting to at most limit.
func admitsAt(algo algos.Algorithm, s algos.State, now int64, l algos.Limit, limit int64) int64 {
	s = s.Clone()
	var n int64
	for n < limit && algo.Decide(&s, now, l).Allowed {
		n++
	}
	return n
}

// atOneInstant is the most admits the promise allows at one instant: Burst
// for the bucket promise, Rate for the window promises, found by asking the
// promise's own checker, so it holds for any Promise a user builds.
func atOneInstant(t *rapid.T, p algos.Promise) int64 {
	const most = 1 << 20
	ok := func(n int64) bool {
		times := make([]int64, n)
		return p.CheckAdmits(times) == nil
	}
	hi := int64(1)
	for ok(hi) {
		if hi >= most {
			t.Fatalf("promise %q allows more than %d admits at one instant; draw smaller limits", p.Text, most)
		}
		hi *= 2
	}
	lo := hi / 2 // ok(lo) unless hi is 1
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
