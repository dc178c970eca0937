package properties_test

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
	"pgregory.net/rapid"
)

type property func(limiter.Spec, ...properties.Option) func(*rapid.T)

// Each planted bug breaks the property named next to it, and rapid shrinks
// the failure to a counterexample the report shows.
var plantedBugs = []struct {
	algo    algos.Algorithm
	name    string
	catches property
	log     bool // quote the report in the test log
}{
	{planted.UncappedTokenBucket, "refill-capped-after-idle", properties.RefillCappedAfterIdle, true},
	{planted.LeakyBucketRewinds, "step-back-no-double-refill", properties.StepBackNoDoubleRefill, true},
	{planted.GCRAWideTolerance, "burst-from-idle", properties.BurstFromIdle, false},
	{planted.FixedWindowOffByOne, "promise-holds", properties.PromiseHolds, false},
	{planted.SlidingLogTrimsTooMuch, "promise-holds", properties.PromiseHolds, false},
}

func TestPlantedBugsAreCaught(t *testing.T) {
	for _, p := range plantedBugs {
		t.Run(p.algo.Name, func(t *testing.T) {
			failed, report := properties.Fails(p.catches(limiter.FromAlgorithm(p.algo)), 1000)
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

// uncaught are the planted bugs that no property of the contract catches,
// each with the test that says why.
//
// The negative-refill token bucket is GCRA decision for decision
// (TestTokenBucketNegativeRefillIsGCRA): what it gets wrong, it gets wrong
// only when callers tell it their own clocks, and there GCRA does the same
// (the study's caller-clock trials measure it). Every step-back property
// draws one node that steps back and then catches up, and over such an
// episode the negative refill is paid back in full by the refill that
// follows (last = now moved back with it), so the key ends where it would
// have been: it passes StepBackNoNegativeRefill, StepBackNoLongLockout (the
// lockout is the step plus the wait, within the bound) and even
// StepBackNoDoubleRefill, which the shipped token bucket breaks.
var uncaught = []algos.Algorithm{planted.TokenBucketNegativeRefill}

// The planted bugs stay out of the registry, and are named as planted.
func TestPlantedBugsAreNotRegistered(t *testing.T) {
	all := slices.Clone(uncaught)
	for _, p := range plantedBugs {
		all = append(all, p.algo)
	}
	for _, a := range all {
		if !strings.HasPrefix(a.Name, "planted-") {
			t.Errorf("%q: a planted bug's name starts with planted-", a.Name)
		}
		if slices.Contains(algos.Names(), a.Name) {
			t.Errorf("%q is in algos.All()", a.Name)
		}
		if _, err := algos.ByName(a.Name); err == nil {
			t.Errorf("algos.ByName found %q", a.Name)
		}
	}
}

// The token bucket without the clamp is GCRA written as a bucket: with
// P = tokens - now·rate, the refill min(capacity, tokens + (now-last)·rate)
// and last = now keep P = min(P, capacity - now·rate), which is GCRA's
// TAT = max(TAT, now), and an admit takes one request's worth off P, which
// is TAT += T. So every decision (allowed, remaining, retry-after, reset) is
// GCRA's, for any order of times: clocks behind included, as long as the
// debt stays above the twin's floor (a step back of about 2^52/Refill µs;
// the steps here go up to an hour).
func TestTokenBucketNegativeRefillIsGCRA(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := properties.SmallLimits().Draw(t, "limit")
		times := properties.Arrivals(l).Draw(t, "arrivals")
		step := rapid.OneOf(rapid.Int64Range(0, 3*l.Window), rapid.Int64Range(0, properties.Hour))
		back := rapid.SliceOfN(step, len(times), len(times)).Draw(t, "behind by")
		var g, b algos.State
		for i, now := range times {
			now = max(0, now-back[i])
			dg, db := algos.GCRA.Decide(&g, now, l), planted.TokenBucketNegativeRefill.Decide(&b, now, l)
			if dg != db {
				t.Fatalf("call %d at %d: gcra %+v, negative-refill bucket %+v", i, now, dg, db)
			}
		}
	})
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
			da, db := algos.TokenBucket.Decide(&a, now, l), planted.LeakyBucketRewinds.Decide(&b, now, l)
			if da != db {
				t.Fatalf("at %d: token bucket %+v, rewinding leaky bucket %+v", now, da, db)
			}
		}
	})
}

// FailsWithSeed reports one shrunk counterexample for one seed, call after
// call, while other tests' Checks run beside it (the race detector holds
// that rapid's flags are never read as they change), and it leaves the
// binary's seed as it found it.
func TestFailsWithSeedIsReproducibleBesideParallelChecks(t *testing.T) {
	t.Parallel()
	before := flagValue(t, "rapid.seed")
	prop := properties.PromiseHolds(limiter.FromAlgorithm(planted.FixedWindowOffByOne))
	reports := make([]string, 3)
	t.Run("group", func(t *testing.T) {
		for i := range reports {
			t.Run("check", func(t *testing.T) {
				t.Parallel()
				properties.Check(t, limiter.FromAlgorithm(algos.GCRA), properties.WithChecks(20))
			})
			t.Run("seeded", func(t *testing.T) {
				t.Parallel()
				failed, report := properties.FailsWithSeed(prop, 1000, 7)
				if !failed {
					t.Error("the planted fixed window passed promise-holds on seed 7")
				}
				reports[i] = report
			})
		}
	})
	for i, r := range reports[1:] {
		if r != reports[0] {
			t.Errorf("call %d reported another counterexample than the first:\n%s\nfirst:\n%s", i+2, r, reports[0])
		}
	}
	if after := flagValue(t, "rapid.seed"); after != before {
		t.Errorf("-rapid.seed was %s before and %s after", before, after)
	}
}

// flagValue is the named flag's value as text.
func flagValue(t *testing.T, name string) string {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no -%s flag", name)
	}
	return f.Value.String()
}
