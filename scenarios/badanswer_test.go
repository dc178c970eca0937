package scenarios_test

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
)

// negativeRetryAfter is the token bucket answering every denial with its
// Retry-After negated: a wait in the past, which sends a closed-loop
// client back before it was answered.
var negativeRetryAfter = algos.Algorithm{
	Name: "negative-retry-after", Promise: algos.BucketPromise, StateInts: algos.TokenBucket.StateInts,
	Decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		d := algos.TokenBucket.Decide(s, now, l)
		d.RetryAfter = -d.RetryAfter
		return d
	},
}

// epochReset is a Go object per key (a user's library, not a pure
// decision) answering its Reset as a Unix time in µs instead of a wait.
var epochReset = limiter.Spec{
	Name: "epoch-reset", Clock: limiter.CallerClock, Promise: algos.BucketPromise, ExactRetry: true,
	New: limiter.PerKey(func(l algos.Limit, _ int64) (limiter.Decider, error) {
		var s algos.State
		return limiter.DeciderFunc(func(now int64) algos.Decision {
			d := algos.TokenBucket.Decide(&s, now, l)
			d.Reset += 1_764_633_600 * algos.Second // 2025-12-02, where the wait should start
			return d
		}), nil
	}),
}

// panicsOnTheHundredth is a Go object per key that panics on its key's
// hundredth call (an index out of range, a nil map, in a real one) and
// decides every other call as the token bucket does.
var panicsOnTheHundredth = limiter.Spec{
	Name: "panics-on-the-hundredth", Clock: limiter.CallerClock, Promise: algos.BucketPromise, ExactRetry: true,
	New: limiter.PerKey(func(l algos.Limit, _ int64) (limiter.Decider, error) {
		var s algos.State
		calls := 0
		return limiter.DeciderFunc(func(now int64) algos.Decision {
			if calls++; calls == 100 {
				panic("index out of range [100] with length 100")
			}
			return algos.TokenBucket.Decide(&s, now, l)
		}), nil
	}),
}

// A limiter that answers what no limiter may, or panics, is caught on
// every seed by that breach, with the answer that showed it, and never stops the hunt:
// the correct suspect beside it keeps its clean verdict. Before bad answers
// were judged, the negative Retry-After aborted Hunt and RunMatrix with an
// error blaming the Retry-After client.
func TestBadAnswersAreBreachesNotAborts(t *testing.T) {
	t.Parallel()
	o := scenarios.HuntOptions()
	o.Seeds = o.Seeds[:10]
	suspects := []scenarios.Suspect{
		{Limiter: limiter.FromAlgorithm(negativeRetryAfter), Deployment: model.StoreClock},
		{Limiter: epochReset, Deployment: model.StoreClock},
		{Limiter: panicsOnTheHundredth, Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Deployment: model.StoreClock},
	}
	verdicts, err := scenarios.Hunt(suspects, o)
	if err != nil {
		t.Fatalf("a bad answer stopped the hunt: %v", err)
	}
	for i, want := range []string{"with a negative Retry-After", "longer than any limit of this size needs", "the limiter panicked"} {
		v := verdicts[i]
		if v.SeedsBy[breach.BadAnswer] != v.Seeds || !strings.Contains(v.First.Reason, want) || len(v.Trace) != 1 {
			t.Errorf("%s: bad answers on %d of %d seeds, first %s: %q (trace %q), want every seed, %q",
				v.Suspect, v.SeedsBy[breach.BadAnswer], v.Seeds, v.FirstBreach, v.First.Reason, v.Trace, want)
		}
		t.Logf("%s: %s on %d of %d seeds: %s\n    %s", v.Suspect, v.FirstBreach, v.SeedsCaught, v.Seeds, v.First.Reason, strings.Join(v.Trace, "\n    "))
	}
	if v := verdicts[2]; v.Errors == 0 || v.FirstError == nil || !strings.Contains(v.FirstError.Error(), "index out of range") {
		t.Errorf("%s: %d errors, first %v; want each panic counted as an error too, with what it panicked with", v.Suspect, v.Errors, v.FirstError)
	}
	if v := verdicts[3]; v.Caught {
		t.Errorf("the correct token bucket beside them was caught: %s: %s", v.FirstBreach, v.First.Reason)
	}

	if _, err := scenarios.RunMatrix([]limiter.Spec{limiter.FromAlgorithm(negativeRetryAfter), epochReset}, small()); err != nil {
		t.Errorf("a bad answer stopped the matrix: %v", err)
	}
}
