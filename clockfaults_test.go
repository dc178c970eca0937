package overshoot_test

// The simulated clock faults' claims: what a step or a drift of a node's
// clock, or of the store's, does to each algorithm in each deployment
// (golden/clock-faults.txt). The live drills (a failover, a blackholed
// store, eviction, a cluster, a real store's clock stepped) are in package
// drills.

import (
	"fmt"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
)

var clockFaults = sync.OnceValues(func() (*scenarios.ClockFaultReport, error) {
	return scenarios.RunClockFaults(scenarios.DefaultClockFaultOptions())
})

func clockFaultReport(t *testing.T) *scenarios.ClockFaultReport {
	t.Helper()
	r, err := clockFaults()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func clockFaultCell(t *testing.T, r *scenarios.ClockFaultReport, fault string, d model.Deployment, algo string) scenarios.ClockFaultCell {
	t.Helper()
	c, ok := r.Cell(fault, d, algo)
	if !ok {
		t.Fatalf("the clock faults have no cell %q, %s, %s", fault, d, algo)
	}
	if c.NotApplicable != nil {
		t.Fatalf("%q, %s, %s: %v", fault, d, algo, c.NotApplicable)
	}
	return c
}

func TestGoldenClockFaults(t *testing.T) {
	golden.CheckWrite(t, "clock-faults.txt", clockFaultReport(t).Write)
}

// nodeFaults are the report's faults of the nodes' clocks; storeFault the
// store's step of by seconds.
func nodeFaults(r *scenarios.ClockFaultReport) []string {
	var out []string
	for _, f := range r.Options.Faults {
		if f.Clocks.Steps == nil || f.Clocks.Steps[0].Clock != model.StoreClockStep {
			out = append(out, f.Name)
		}
	}
	return out
}

func storeFault(by int) string { return fmt.Sprintf("store steps %+ds at 20.4s", by) }

// Reading the store's clock makes a fleet immune to its nodes' clocks:
// under every step of a node's clock (±1 s, ±60 s) and every drift (±100
// ppm for an hour, on one node or split across the fleet), each of the
// six deployed store-clock admits exactly what it admits without the
// fault and refuses the honest client no more, while deployed node-clock
// every fault changes what some algorithm admits.
//
// Badge: store clock under node clock faults
func TestFindingStoreClockIgnoresNodeClockFaults(t *testing.T) {
	r := clockFaultReport(t)
	faults := nodeFaults(r)
	worst := 0 // the largest change in admits, either way, deployed store-clock
	for _, fault := range faults {
		moved := 0
		for _, s := range r.Options.Limiters {
			c := clockFaultCell(t, r, fault, model.StoreClock, s.Name)
			worst = max(worst, c.Extra, -c.Extra)
			if c.Extra != 0 || c.Refused != 0 || c.Lockout > c.Clean || c.Violations > c.CleanViolations {
				t.Errorf("%s, store-clock %s: %+d admits, %+d honest refused, lockout %d µs (%d without): a node's clock reached it",
					fault, s.Name, c.Extra, c.Refused, c.Lockout, c.Clean)
			}
			if clockFaultCell(t, r, fault, model.NodeClock, s.Name).Extra != 0 {
				moved++
			}
		}
		if moved == 0 {
			t.Errorf("%s changed nothing deployed node-clock either: the fault did not happen", fault)
		}
	}
	t.Logf("measured: store clock ±%d admits under %d node clock faults", worst, len(faults))
}

// A failover to a replica whose clock is off is a step of the store's
// clock. 60 s behind, the leaky bucket and GCRA hold a time in the future
// and lock the honest client (at half the limit) out for most of a minute:
// 58.1 s and 59.1 s, as the docs state (the faults are simulated, so
// the lockouts are exact to the 0.1 s the docs print); the token bucket
// loses nothing. 60 s ahead, each bucket hands out one fresh burst and no
// more: exactly +19 at a burst of 20, as the docs state.
//
// Badge: store clock step
func TestFindingStoreClockStepLocksOutOrHandsOutABurst(t *testing.T) {
	r := clockFaultReport(t)
	burst := int(r.Options.Limit.Burst)
	longest := int64(0)
	for name, want := range map[string]float64{"leaky-bucket": 58.1, "gcra": 59.1} {
		c := clockFaultCell(t, r, storeFault(-60), model.StoreClock, name)
		t.Logf("store 60 s behind, %s: %+d admits, %+d honest refused, locked out %.1f s", name, c.Extra, c.Refused, float64(c.Lockout)/1e6)
		stated(t, name+": a store 60 s behind locks the honest client out (s)", 1, want, want, float64(c.Lockout)/1e6)
		longest = max(longest, c.Lockout)
	}
	if c := clockFaultCell(t, r, storeFault(-60), model.StoreClock, "token-bucket"); c.Extra != 0 || c.Refused != 0 {
		t.Errorf("token bucket, store 60 s behind: %+d admits, %+d honest refused; want nothing lost", c.Extra, c.Refused)
	}
	for _, name := range bucketNames {
		c := clockFaultCell(t, r, storeFault(60), model.StoreClock, name)
		t.Logf("store 60 s ahead, %s: %+d admits", name, c.Extra)
		if c.Extra != burst-1 {
			t.Errorf("%s: a store 60 s ahead handed out %+d admits, want one fresh burst: %+d at a burst of %d", name, c.Extra, burst-1, burst)
		}
	}
	t.Logf("measured: store 60 s behind locks leaky bucket and GCRA out %.1f s", float64(longest)/1e6)
}

// On a node-clock fleet one node's clock is a skew: stepping node 0 by a
// second (either way) or drifting it 100 ppm for an hour makes the token
// bucket and the fixed window admit thousands beyond the same run without
// the fault, while the leaky bucket and GCRA, whose state never moves
// back, hand out at most one burst. The faults are simulated, so each
// count is exact: the docs state the token bucket's +6,312 (1 s ahead)
// and +21,086 (100 ppm slow), the fixed window's +6,312, and the most the
// leaky bucket and GCRA hand out, +19 and +16 (both at the step ahead).
//
// Badge: node clock step
func TestFindingNodeClockStepBreaksTheTokenBucket(t *testing.T) {
	r := clockFaultReport(t)
	burst := int(r.Options.Limit.Burst)
	// The admits beyond the run without the fault, token bucket and fixed
	// window, by fault.
	thousands := map[string][2]int{
		"node 0 steps +1s at 20.4s": {6312, 6312},
		"node 0 steps -1s at 20.4s": {6311, 6313},
		"node 0 drifts +100ppm, 1h": {21092, 6227},
		"node 0 drifts -100ppm, 1h": {21086, 6407},
	}
	least, most := 1<<30, map[string]int{}
	for fault, want := range thousands {
		for i, name := range []string{"token-bucket", "fixed-window"} {
			if c := clockFaultCell(t, r, fault, model.NodeClock, name); c.Extra != want[i] {
				t.Errorf("%s, node-clock %s: %+d admits beyond the run without it, want %+d", fault, name, c.Extra, want[i])
			} else if i == 0 {
				least = min(least, c.Extra)
			}
		}
		for _, name := range []string{"leaky-bucket", "gcra"} {
			c := clockFaultCell(t, r, fault, model.NodeClock, name)
			if c.Extra > burst {
				t.Errorf("%s, node-clock %s: %+d admits, more than one burst (%d)", fault, name, c.Extra, burst)
			}
			most[name] = max(most[name], c.Extra)
		}
	}
	if most["leaky-bucket"] != 19 || most["gcra"] != 16 {
		t.Errorf("at most %+d (leaky bucket) and %+d (GCRA) beyond the run without the fault; the docs state +19 and +16", most["leaky-bucket"], most["gcra"])
	}
	t.Logf("measured: token bucket at least %+d admits after one node's 1 s step or 100 ppm drift", least)
}
