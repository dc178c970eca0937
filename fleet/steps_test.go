package fleet_test

import (
	"context"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/fleet"
	"github.com/overshoot-go/overshoot/limiter"
)

// step is one call and the decision it must get, in the style of
// golang.org/x/time/rate's tests: at t, for key, of cost (0 is 1), handled
// by node. Steps run in order on one fleet.
type step struct {
	t          int64
	key        int
	cost       int64
	node       int
	allowed    bool
	remaining  int64
	retryAfter int64
	reset      int64
}

// run plays the steps on a fresh fleet c under l and returns the fleet.
func run(t *testing.T, c fleet.CachedCounter, l algos.Limit, steps []step) *fleet.Limiter {
	t.Helper()
	f, err := fleet.New(c, l)
	if err != nil {
		t.Fatal(err)
	}
	play(t, f, steps)
	return f
}

// play plays the steps on f (either fleet), and reports every field that
// differs and the node that handled each call.
func play(t *testing.T, f fleetUnderTest, steps []step) {
	t.Helper()
	for i, st := range steps {
		cost := max(st.cost, 1)
		before := f.Handled()
		d, err := f.AllowWeighed(context.Background(), st.key, st.t, limiter.Weight{Cost: cost})
		if err != nil {
			t.Fatalf("step %d at t=%dµs: %v", i, st.t, err)
		}
		after := f.Handled()
		if after[st.node] != before[st.node]+1 {
			t.Errorf("step %d at t=%dµs: not handled by node %d (handled before %v, after %v)", i, st.t, st.node, before, after)
		}
		want := algos.Decision{Allowed: st.allowed, Remaining: st.remaining, RetryAfter: st.retryAfter, Reset: st.reset}
		if d != want {
			t.Errorf("step %d at t=%dµs (node %d): got %+v, want %+v", i, st.t, st.node, d, want)
		}
	}
}

// wantStored checks what f's store (an owner fleet's owner) holds for key.
func wantStored(t *testing.T, f fleetUnderTest, key int, window, count int64) {
	t.Helper()
	w, c, ok := f.Stored(key)
	if !ok || w != window || c != count {
		t.Errorf("the fleet holds key %d as (window %d, count %d, %v), want (window %d, count %d)", key, w, c, ok, window, count)
	}
}

const ms = 1000

// Three nodes syncing every 200 ms (node 0 at 0, 200, 400 ms, ...; node 1
// 66.666 ms later; node 2 133.333 ms later), enforcing 10 per second, by
// hand.
func TestThreeNodesSyncingEvery200msByHand(t *testing.T) {
	c := fleet.CachedCounter{Nodes: 3, Sync: 200 * ms}
	if got := []int64{c.Offset(0), c.Offset(1), c.Offset(2)}; got[0] != 0 || got[1] != 66_666 || got[2] != 133_333 {
		t.Fatalf("offsets %v, want [0 66666 133333]", got)
	}
	l := algos.MustLimit(10, algos.Second, 10)
	f := run(t, c, l, []step{
		// Nine requests at 1 ms, three per node: no node has synced, each
		// sees only its own three.
		{t: 1 * ms, node: 0, allowed: true, remaining: 9, reset: 999 * ms},
		{t: 1 * ms, node: 1, allowed: true, remaining: 9, reset: 999 * ms},
		{t: 1 * ms, node: 2, allowed: true, remaining: 9, reset: 999 * ms},
		{t: 1 * ms, node: 0, allowed: true, remaining: 8, reset: 999 * ms},
		{t: 1 * ms, node: 1, allowed: true, remaining: 8, reset: 999 * ms},
		{t: 1 * ms, node: 2, allowed: true, remaining: 8, reset: 999 * ms},
		{t: 1 * ms, node: 0, allowed: true, remaining: 7, reset: 999 * ms},
		{t: 1 * ms, node: 1, allowed: true, remaining: 7, reset: 999 * ms},
		{t: 1 * ms, node: 2, allowed: true, remaining: 7, reset: 999 * ms},
		// Syncs before 210 ms: node 1 at 66.666 ms flushes 3 (store 3, G1
		// 3), node 2 at 133.333 ms flushes 3 (store 6, G2 6), node 0 at 200
		// ms flushes 3 (store 9, G0 9).
		{t: 210 * ms, node: 0, allowed: true, remaining: 0, reset: 790 * ms}, // 9+1: the 10th
		{t: 210 * ms, node: 1, allowed: true, remaining: 6, reset: 790 * ms}, // G1 = 3: the 11th
		{t: 210 * ms, node: 2, allowed: true, remaining: 3, reset: 790 * ms}, // G2 = 6: the 12th
		{t: 210 * ms, node: 0, retryAfter: 790 * ms, reset: 790 * ms},        // G0 9 + D0 1
		// Node 1 syncs at 266.666 ms: flushes its 1 (store 10) and reads
		// G1 = 10. A moment before, with G1 = 3, it would have admitted.
		{t: 270 * ms, node: 1, retryAfter: 730 * ms, reset: 730 * ms},
		{t: 270 * ms, node: 2, allowed: true, remaining: 2, reset: 730 * ms}, // G2 still 6: the 13th
		// Node 2 syncs at 333.333 ms: flushes 2 (store 12), G2 = 12.
		{t: 340 * ms, node: 0, retryAfter: 660 * ms, reset: 660 * ms},
		{t: 340 * ms, node: 1, retryAfter: 660 * ms, reset: 660 * ms},
		{t: 340 * ms, node: 2, retryAfter: 660 * ms, reset: 660 * ms},
	})
	wantStored(t, f, 0, 0, 12)
	if got := f.Cells(); got != 3*3+2 {
		t.Errorf("Cells = %d, want 11 (3 nodes × 3 + the store's 2)", got)
	}
	run2 := []step{
		// At 1 s: node 0 flushed its last 1 at 400 ms (store 13), and its
		// sync at exactly 1 s, before the request, moved it to window 1.
		{t: algos.Second, node: 0, allowed: true, remaining: 9, reset: algos.Second},
		// Node 1 last synced at 866.666 ms, in window 0: the request starts
		// its view over in window 1.
		{t: algos.Second, node: 1, allowed: true, remaining: 9, reset: algos.Second},
	}
	for i, st := range run2 {
		d, err := f.Allow(context.Background(), st.key, st.t)
		want := algos.Decision{Allowed: st.allowed, Remaining: st.remaining, RetryAfter: st.retryAfter, Reset: st.reset}
		if err != nil || d != want {
			t.Errorf("window 1, step %d: got %+v, %v; want %+v", i, d, err, want)
		}
	}
	// 13 admitted in window 0 under a limit of 10; the store saw them all.
	wantStored(t, f, 0, 0, 13)
	if got := f.Handled(); got[0] != 7 || got[1] != 7 || got[2] != 6 {
		t.Errorf("Handled = %v, want [7 7 6]", got)
	}
}

// Nodes·Rate requests at one instant, with no sync between them, are all
// admitted: each node admits Rate against its own delta. This is the bound,
// reached.
func TestABurstReachesNodesTimesRate(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	c := fleet.CachedCounter{Nodes: 4, Sync: algos.Second}
	var steps []step
	for i := range 16 {
		st := step{t: 500 * ms, node: i % 4, reset: 500 * ms}
		if i < 12 {
			st.allowed, st.remaining = true, int64(2-i/4)
		} else {
			st.retryAfter = 500 * ms
		}
		steps = append(steps, st)
	}
	run(t, c, l, steps)
}

// Synchronous, the fleet is the fixed window whatever node takes the call,
// weakness included: a caller behind at a window edge restarts the window
// it returns to.
func TestSynchronousIsTheFixedWindow(t *testing.T) {
	l := algos.MustLimit(2, 10, 2)
	f := run(t, fleet.CachedCounter{Nodes: 3}, l, []step{
		{t: 100, node: 0, allowed: true, remaining: 1, reset: 10},
		{t: 100, node: 1, allowed: true, remaining: 0, reset: 10},
		{t: 100, node: 2, retryAfter: 10, reset: 10},
		{t: 109, node: 0, retryAfter: 1, reset: 1},
		{t: 110, node: 1, allowed: true, remaining: 1, reset: 10},
		{t: 105, node: 2, allowed: true, remaining: 1, reset: 5},  // behind: window 10 starts over
		{t: 110, node: 0, allowed: true, remaining: 1, reset: 10}, // and so does window 11
		{t: 110, node: 1, cost: 2, retryAfter: 10, reset: 10, remaining: 1},
		{t: 110, key: 1, node: 2, cost: 3, retryAfter: 10, reset: 10, remaining: 2}, // never fits: nothing stored
	})
	wantStored(t, f, 0, 11, 1)
	if _, _, ok := f.Stored(1); ok {
		t.Error("a refused request stored key 1")
	}
	if got := f.Cells(); got != 2 {
		t.Errorf("Cells = %d, want 2: the store's one key, and nothing on the nodes", got)
	}
}

// A delta flushed after the store has moved to a later window is dropped.
// Two nodes syncing every 100 µs (node 0 at 0, 100, 200; node 1 at 50,
// 150), windows of 60 µs.
func TestAStaleDeltaIsDropped(t *testing.T) {
	l := algos.MustLimit(2, 60, 2)
	f := run(t, fleet.CachedCounter{Nodes: 2, Sync: 100}, l, []step{
		{t: 55, node: 0, allowed: true, remaining: 1, reset: 5},
		{t: 55, node: 1, allowed: true, remaining: 1, reset: 5},  // D1 = 1 in window 0
		{t: 65, node: 0, allowed: true, remaining: 1, reset: 55}, // window 1: node 0's view starts over
		// Node 0 at 100 flushes window 1's 1 (store (1, 1)); node 1 at 150
		// flushes window 0's 1: the store is in window 1, so it is dropped,
		// and node 1's view moves to window 2 with G = 0.
		{t: 160, node: 1, allowed: true, remaining: 1, reset: 20},
	})
	wantStored(t, f, 0, 1, 1)
}

// After a long idle gap the syncs are skipped, not walked: a fleet of five
// nodes syncing every µs (all five phases are 0, since Sync < Nodes)
// answers a request two centuries later at once, and exactly.
func TestLongIdleGapIsSkipped(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	c := fleet.CachedCounter{Nodes: 5, Sync: 1}
	var steps []step
	// −MaxTime is a whole second. No sync between requests at one instant:
	// each node sees only its own unit, and all five are admitted.
	for i := range 5 {
		steps = append(steps, step{t: -algos.MaxTime, node: i, allowed: true, remaining: 2, reset: algos.Second})
	}
	// At −MaxTime+1 every node flushes its unit (store 5, in that window);
	// at MaxTime−10 every node's last sync has moved it to the window
	// ending at MaxTime, where the store holds nothing. From there each
	// µs's sync brings every node up to date: the fleet is nearly exact.
	t1 := algos.MaxTime - 10
	steps = append(steps,
		step{t: t1, node: 0, allowed: true, remaining: 2, reset: 10},
		step{t: t1 + 1, node: 1, allowed: true, remaining: 1, reset: 9},
		step{t: t1 + 2, node: 2, allowed: true, remaining: 0, reset: 8},
		step{t: t1 + 3, node: 3, retryAfter: 7, reset: 7},
	)
	f := run(t, c, l, steps)
	wantStored(t, f, 0, algos.FloorDiv(t1, algos.Second), 3) // node 2's unit flushed at t1+3, before node 3 decided
	if got := f.Cells(); got != 5*3+2 {
		t.Errorf("Cells = %d, want 17", got)
	}
}

func TestConfigAndErrors(t *testing.T) {
	for _, tc := range []struct {
		c    fleet.CachedCounter
		name string
		err  string
	}{
		{fleet.CachedCounter{Nodes: 5, Sync: 200 * ms}, "cached-counter(5 nodes, sync 200ms)", ""},
		{fleet.CachedCounter{Nodes: 1, Sync: 0}, "cached-counter(1 node, synchronous)", ""},
		{fleet.CachedCounter{Nodes: 3, Sync: 2 * algos.Second}, "cached-counter(3 nodes, sync 2s)", ""},
		{fleet.CachedCounter{Nodes: 2, Sync: 1500}, "cached-counter(2 nodes, sync 1500µs)", ""},
		{fleet.CachedCounter{Nodes: 0}, "", "at least 1 node"},
		{fleet.CachedCounter{Nodes: fleet.MaxNodes + 1}, "", "at most 1024 nodes"},
		{fleet.CachedCounter{Nodes: 2, Sync: -1}, "", "must not be negative"},
		{fleet.CachedCounter{Nodes: 2, Sync: algos.MaxTime + 1}, "", "longer than algos.MaxTime"},
	} {
		spec, err := tc.c.Spec()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: Spec error %v, want one saying %q", tc.c, err, tc.err)
			}
			if _, err := fleet.New(tc.c, algos.MustLimit(1, 1, 1)); err == nil {
				t.Errorf("%+v: New accepted it", tc.c)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc.c, err)
		}
		if spec.Name != tc.name || spec.Clock != limiter.CallerClock || spec.ExactRetry || spec.Conservative {
			t.Errorf("%+v: spec %q, clock %v, exact retry %v, conservative %v", tc.c, spec.Name, spec.Clock, spec.ExactRetry, spec.Conservative)
		}
		l := algos.MustLimit(10, algos.Second, 10)
		if got, want := spec.Promise(l).Text, algos.AlignedWindowPromise(l).Text; got != want {
			t.Errorf("%+v: promise %q, want %q", tc.c, got, want)
		}
		lim, err := spec.Open(l)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := lim.(limiter.Weighed); !ok {
			t.Errorf("%+v: not a limiter.Weighed", tc.c)
		}
		if _, ok := lim.(limiter.Sized); !ok {
			t.Errorf("%+v: not a limiter.Sized", tc.c)
		}
	}

	if _, err := fleet.New(fleet.CachedCounter{Nodes: 2}, algos.Limit{Rate: 1}); err == nil || !strings.Contains(err.Error(), "invalid limit") {
		t.Errorf("New with a hand-made limit: %v", err)
	}
	f, err := fleet.New(fleet.CachedCounter{Nodes: 2, Sync: 10}, algos.MustLimit(1, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		err  string
	}{
		{"negative key", func() error { _, err := f.Allow(ctx, -1, 0); return err }, "negative key -1"},
		{"cost 0", func() error { _, err := f.AllowWeighed(ctx, 0, 0, limiter.Weight{}); return err }, "cost must be at least 1"},
		{"negative service", func() error {
			_, err := f.AllowWeighed(ctx, 0, 0, limiter.Weight{Cost: 1, Service: -1})
			return err
		}, "must not be negative"},
		{"time past MaxTime", func() error { _, err := f.Allow(ctx, 0, algos.MaxTime+1); return err }, "outside ±algos.MaxTime"},
		{"time before -MaxTime", func() error { _, err := f.Allow(ctx, 0, -algos.MaxTime-1); return err }, "outside ±algos.MaxTime"},
	} {
		if err := tc.call(); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		}
	}
	// Failed calls reach no node: the next call is still node 0's.
	if got := f.Handled(); got[0] != 0 || got[1] != 0 {
		t.Errorf("failed calls were handled: %v", got)
	}
	if got := f.Cells(); got != 0 {
		t.Errorf("failed calls stored %d cells", got)
	}
	// Service is ignored.
	if d, err := f.AllowWeighed(ctx, 0, 0, limiter.Weight{Cost: 1, Service: 5}); err != nil || !d.Allowed {
		t.Errorf("a request with a service time: %+v, %v", d, err)
	}
}
