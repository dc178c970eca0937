package properties_test

import (
	"os"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
)

// noDoubleRefill names the algorithms whose state only moves forward, so a
// node behind cannot hand out the same interval twice.
var noDoubleRefill = map[string]bool{
	algos.LeakyBucket.Name: true,
	algos.GCRA.Name:        true,
	algos.SlidingLog.Name:  true,
}

// All six keep the whole contract (and the three that claim it, no double
// refill after a step back).
func TestSixKeepTheContract(t *testing.T) {
	t.Parallel()
	for _, algo := range algos.All() {
		t.Run(algo.Name, func(t *testing.T) {
			t.Parallel()
			var opts []properties.Option
			if noDoubleRefill[algo.Name] {
				opts = append(opts, properties.WithNoDoubleRefill())
			}
			properties.Check(t, limiter.FromAlgorithm(algo), opts...)
		})
	}
}

// The other three hand out the same interval twice after a step back, by
// design (the token bucket stores last = now, and the windows restart), and
// the property says so with a counterexample.
func TestDoubleRefillIsTheWeaknessOfTheOtherThree(t *testing.T) {
	for _, algo := range algos.All() {
		if noDoubleRefill[algo.Name] {
			continue
		}
		t.Run(algo.Name, func(t *testing.T) {
			failed, report := properties.Fails(properties.StepBackNoDoubleRefill(limiter.FromAlgorithm(algo)), 1000)
			if !failed {
				t.Fatalf("%s never refilled twice after a step back", algo.Name)
			}
			if algo.Name == algos.TokenBucket.Name {
				t.Logf("the token bucket's weakness, shrunk:\n%s", report)
			}
		})
	}
}

// Fails on a property that holds reports nothing and leaves no fail file.
func TestFailsOnAPassingProperty(t *testing.T) {
	failed, report := properties.Fails(properties.PromiseHolds(limiter.FromAlgorithm(algos.GCRA)), 200)
	if failed || report != "" {
		t.Fatalf("Fails on GCRA's promise: %v, %q", failed, report)
	}
	if _, err := os.Stat("testdata"); !os.IsNotExist(err) {
		t.Errorf("testdata exists after Fails: %v", err)
	}
}

// Fails on a failing property cleans up the fail file rapid writes.
func TestFailsLeavesNoFailFile(t *testing.T) {
	failed, report := properties.Fails(properties.BurstFromIdle(limiter.FromAlgorithm(planted.GCRAWideTolerance)), 100)
	if !failed || strings.Contains(report, "To reproduce") {
		t.Fatalf("failed %v, report:\n%s", failed, report)
	}
	if _, err := os.Stat("testdata"); !os.IsNotExist(err) {
		t.Errorf("testdata exists after Fails: %v", err)
	}
}

// Limits can be fixed, and a user's algorithm goes through the same Check.
func TestCheckWithOneLimit(t *testing.T) {
	t.Parallel()
	properties.Check(t, limiter.FromAlgorithm(algos.SlidingCounter), properties.WithLimit(algos.MustLimit(100, algos.Second, 100)), properties.WithChecks(100))
}

// alignedOwn states the fixed window's promise as a user would, with
// algos.NewPromise and a check of their own: each aligned window's admits.
func alignedOwn(l algos.Limit) algos.Promise {
	return algos.NewPromise("at most L admits in each aligned window, counted by the user", func(sorted []int64) *algos.Violation {
		for i := int64(0); i+l.Rate < int64(len(sorted)); i++ {
			from, to := sorted[i], sorted[i+l.Rate]
			if algos.FloorDiv(from, l.Window) == algos.FloorDiv(to, l.Window) {
				return &algos.Violation{From: from, To: to, Admits: l.Rate + 1, Allowed: l.Rate, Reason: "L+1 admits in one aligned window"}
			}
		}
		return nil
	})
}

// A promise of the user's own is judged like the built-in ones: the fixed
// window keeps the whole contract under its promise stated by the user,
// and breaks the anchored window's promise, which it does not make (a window
// anchored at an admit mid-window spans an aligned edge, where it admits 2L).
func TestOwnPromiseIsJudgedLikeTheBuiltIns(t *testing.T) {
	t.Parallel()
	own := algos.FixedWindow
	own.Name, own.Promise = "fixed-window-own-promise", alignedOwn
	properties.Check(t, limiter.FromAlgorithm(own))

	anchored := algos.FixedWindow
	anchored.Name, anchored.Promise = "fixed-window-anchored-promise", algos.AnchoredWindowPromise
	failed, report := properties.Fails(properties.PromiseHolds(limiter.FromAlgorithm(anchored)), 1000)
	if !failed {
		t.Fatal("the aligned fixed window kept the anchored window's promise on 1000 runs")
	}
	t.Logf("the aligned fixed window against the anchored promise, shrunk:\n%s", report)
}

// The fixed window anchored at the key's first hit (INCR, EXPIRE on the
// first) keeps the contract under its own promise, the anchored window,
// key expiry included.
func TestFirstHitWindowKeepsTheContract(t *testing.T) {
	t.Parallel()
	properties.Check(t, limiter.FromAlgorithm(algos.FirstHitWindow))
}
