package properties_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/properties"
	"pgregory.net/rapid"
)

type property func(algos.Algorithm, ...properties.Option) func(*rapid.T)

// Each planted bug breaks the property named next to it, and rapid shrinks
// the failure to a counterexample the report shows.
var planted = []struct {
	algo    algos.Algorithm
	name    string
	catches property
	log     bool // quote the report in the test log
}{
	{algos.PlantedUncappedTokenBucket, "refill-capped-after-idle", properties.RefillCappedAfterIdle, true},
	{algos.PlantedLeakyBucketRewinds, "step-back-no-double-refill", properties.StepBackNoDoubleRefill, true},
	{algos.PlantedGCRAWideTolerance, "burst-from-idle", properties.BurstFromIdle, false},
	{algos.PlantedFixedWindowOffByOne, "promise-holds", properties.PromiseHolds, false},
	{algos.PlantedSlidingLogTrimsTooMuch, "promise-holds", properties.PromiseHolds, false},
}

func TestPlantedBugsAreCaught(t *testing.T) {
	for _, p := range planted {
		t.Run(p.algo.Name, func(t *testing.T) {
			failed, report := properties.Fails(p.catches(p.algo), 1000)
			if !failed {
				t.Fatalf("%s passed %s: the planted bug went unnoticed", p.algo.Name, p.name)
			}
			for _, want := range []string{"[rapid] failed after", "[rapid] draw limit: algos.Limit{", p.algo.Name} {
				if !strings.Contains(report, want) {
					t.Errorf("report lacks %q:\n%s", want, report)
				}
			}
			if p.log {
				t.Logf("%s on %s:\n%s", p.name, p.algo.Name, report)
			}
		})
	}
}

// The planted bugs stay out of the registry, and are named as planted.
func TestPlantedBugsAreNotRegistered(t *testing.T) {
	for _, p := range planted {
		if !strings.HasPrefix(p.algo.Name, "planted-") {
			t.Errorf("%q: a planted bug's name starts with planted-", p.algo.Name)
		}
		if slices.Contains(algos.Names(), p.algo.Name) {
			t.Errorf("%q is in algos.All()", p.algo.Name)
		}
		if _, err := algos.ByName(p.algo.Name); err == nil {
			t.Errorf("algos.ByName found %q", p.algo.Name)
		}
	}
}

// The rewinding leaky bucket is the token bucket mirrored, decision for
// decision, so no property the token bucket passes can tell them apart:
// only the leaky bucket's own claim of no double refill does.
func TestLeakyBucketRewindsIsATokenBucket(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := properties.SmallLimits().Draw(t, "limit")
		times := properties.Arrivals(l).Draw(t, "arrivals")
		back := rapid.SliceOfN(rapid.Int64Range(0, 3*l.Window), len(times), len(times)).Draw(t, "behind by")
		var a, b algos.State
		for i, now := range times {
			now = max(0, now-back[i])
			da, db := algos.TokenBucket.Decide(&a, now, l), algos.PlantedLeakyBucketRewinds.Decide(&b, now, l)
			if da != db {
				t.Fatalf("at %d: token bucket %+v, rewinding leaky bucket %+v", now, da, db)
			}
		}
	})
}
