package scenarios_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
)

// storeClockBucket is a keyed token bucket that keeps the claim its Spec
// makes: it decides at now, the store's time, and never at the time its
// node sent, which it is given all the same.
func storeClockBucket(name string, decideAt func(ctx context.Context, now int64) int64) limiter.Spec {
	return limiter.Spec{
		Name: name, Clock: limiter.StoreClock, Promise: algos.BucketPromise, ExactRetry: true,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			mem, err := limiter.NewMemory(algos.TokenBucket, l)
			if err != nil {
				return nil, err
			}
			return limiterFunc(func(ctx context.Context, key int, now int64) (algos.Decision, error) {
				return mem.Allow(ctx, key, decideAt(ctx, now))
			}), nil
		},
	}
}

type limiterFunc func(ctx context.Context, key int, now int64) (algos.Decision, error)

func (f limiterFunc) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	return f(ctx, key, now)
}

// A limiter that claims the store's clock is played again with the nodes'
// clocks ±60 s apart and must answer every client alike: one that takes
// the time its node sends, even only when it is the later, is caught on
// every seed by that breach alone (it keeps the rest of its contract while
// the clocks agree); one that keeps its claim, though it is handed the
// node's time on every call, stays clean, on four nodes and on one.
func TestStoreClockClaimIsCheckedWithNodeClocksApart(t *testing.T) {
	t.Parallel()
	o := scenarios.HuntOptions()
	o.Seeds = o.Seeds[:10]
	var sawNodeTime atomic.Bool // the hunt's workers call it at once
	honest := storeClockBucket("keeps-its-claim", func(ctx context.Context, now int64) int64 {
		if _, ok := limiter.NodeTime(ctx); ok {
			sawNodeTime.Store(true)
		}
		return now
	})
	suspects := []scenarios.Suspect{
		{Limiter: planted.StoreClockClaimReadsNode(), Deployment: model.StoreClock},
		{Limiter: honest, Deployment: model.StoreClock},
	}
	verdicts, err := scenarios.Hunt(suspects, o)
	if err != nil {
		t.Fatal(err)
	}
	caught := verdicts[0]
	if caught.SeedsBy[breach.ReadsNodeClock] != caught.Seeds || caught.SeedsCaught != caught.SeedsBy[breach.ReadsNodeClock] {
		t.Errorf("%s: reads node clock on %d of %d seeds, caught on %d, want every seed and by that alone: %v",
			caught.Suspect, caught.SeedsBy[breach.ReadsNodeClock], caught.Seeds, caught.SeedsCaught, caught.SeedsBy)
	}
	if caught.FirstBreach != breach.ReadsNodeClock || !strings.Contains(caught.First.Reason, "±60 s apart") || len(caught.Trace) != 2 {
		t.Errorf("%s: first %s: %v, trace %q; want reads node clock with both runs' answers", caught.Suspect, caught.FirstBreach, caught.First, caught.Trace)
	}
	for _, v := range verdicts[1:] {
		if v.Caught {
			t.Errorf("%s keeps its claim but was caught on %d of %d seeds: %s: %s", v.Suspect, v.SeedsCaught, v.Seeds, v.FirstBreach, v.First.Reason)
		}
	}
	if !sawNodeTime.Load() {
		t.Error("the honest limiter was never given its node's time: the check proves nothing")
	}

	one := o
	one.Nodes = 1
	verdicts, err = scenarios.Hunt(suspects, one)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts[0]; v.SeedsBy[breach.ReadsNodeClock] != v.Seeds {
		t.Errorf("one node: %s reads node clock on %d of %d seeds, want every seed", v.Suspect, v.SeedsBy[breach.ReadsNodeClock], v.Seeds)
	}
	if v := verdicts[1]; v.Caught {
		t.Errorf("one node: %s caught: %s: %s", v.Suspect, v.FirstBreach, v.First.Reason)
	}
}
