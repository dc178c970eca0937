package properties

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// sameInstant reads from the history what a branch after every decision
// would say, with one branch an instant: on any history, of any limiter,
// it answers as that branch after every decision does (how many calls at
// the decision's instant are admitted after it, counting to Remaining+1).
// The limiters are the six and the planted bugs that get Remaining or the
// burst wrong, at small limits and at 10 a second (burst 20).
func TestSameInstantIsABranchAfterEveryDecision(t *testing.T) {
	specs := limiter.FromAlgorithms(append(algos.All(), planted.TokenBucketRemainingBeforeTake, planted.TokenBucketBurstOneShort,
		planted.GCRAWideTolerance, planted.FixedWindowOffByOne, planted.UncappedTokenBucket)...)
	limits := rapid.OneOf(SmallLimits(), rapid.Just(algos.MustLimit(10, algos.Second, 20)))
	rapid.Check(t, func(t *rapid.T) {
		spec := rapid.SampledFrom(specs).Draw(t, "spec")
		l := limits.Draw(t, "limit")
		r := newRun(t, spec, l)
		n := configure(nil).instant(t, spec, l)
		h := r.replayHistory(Arrivals(l).Draw(t, "arrivals"))
		// Up to the first decision whose Remaining is above n, as
		// RemainingIsExact asks.
		var bs []branch
		for i, c := range h.calls {
			if c.d.Remaining > n {
				break
			}
			bs = append(bs, branch{upto: i, at: c.t, limit: max(0, c.d.Remaining) + 1})
		}
		want := r.branches(h, bs)
		got := sameInstant(r, h, len(bs))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s under %v: after call %d, %d admits read at the same instant, %d by a branch%s", spec.Name, l, i, got[i], want[i], trace(h.calls[:i+1]))
			}
		}
	})
}
