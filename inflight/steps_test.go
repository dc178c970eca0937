package inflight_test

import (
	"context"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/inflight"
	"github.com/overshoot-go/overshoot/limiter"
)

// step is one call and the decision it must get, in the style of
// golang.org/x/time/rate's tests: at t, for key, of cost (0 is 1) held for
// service µs (0: the assumed one), and the cells held after it.
type step struct {
	t          int64
	key        int
	cost       int64
	service    int64
	allowed    bool
	remaining  int64
	retryAfter int64
	reset      int64
	cells      int64
}

// run plays the steps on a fresh limiter capping l.Burst in flight,
// assuming assumed µs, and reports every field that differs.
func run(t *testing.T, l algos.Limit, assumed int64, steps []step) *inflight.Limiter {
	t.Helper()
	c, err := inflight.New(l, assumed)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		w := limiter.Weight{Cost: max(st.cost, 1), Service: st.service}
		d, err := c.AllowWeighed(context.Background(), st.key, st.t, w)
		if err != nil {
			t.Fatalf("step %d at t=%dµs: %v", i, st.t, err)
		}
		want := algos.Decision{Allowed: st.allowed, Remaining: st.remaining, RetryAfter: st.retryAfter, Reset: st.reset}
		if d != want {
			t.Errorf("step %d at t=%dµs: got %+v, want %+v", i, st.t, d, want)
		}
		if got := c.Cells(); got != st.cells {
			t.Errorf("step %d at t=%dµs: %d cells, want %d", i, st.t, got, st.cells)
		}
	}
	return c
}

const ms = 1000

// capOf is a cap of n in flight (the rate and window are not used).
func capOf(n int64) algos.Limit { return algos.MustLimit(1, algos.Second, n) }

// A cap of 2, requests of 100 ms.
func TestCapOfTwoSteps(t *testing.T) {
	run(t, capOf(2), 100*ms, []step{
		{t: 0, allowed: true, remaining: 1, reset: 100 * ms, cells: 1},
		{t: 10 * ms, allowed: true, remaining: 0, reset: 100 * ms, cells: 2},                // ends at 110 ms
		{t: 20 * ms, retryAfter: 80 * ms, reset: 90 * ms, cells: 2},                         // the first ends at 100 ms
		{t: 100*ms - 1, retryAfter: 1, reset: 10*ms + 1, cells: 2},                          // one µs early
		{t: 100 * ms, allowed: true, remaining: 0, reset: 100 * ms, cells: 2},               // at the release instant
		{t: 100 * ms, retryAfter: 10 * ms, reset: 100 * ms, cells: 2},                       // next release: 110 ms
		{t: 110 * ms, cost: 2, retryAfter: 90 * ms, remaining: 1, reset: 90 * ms, cells: 1}, // whole or nothing
		{t: 200 * ms, cost: 2, service: 5, allowed: true, remaining: 0, reset: 5, cells: 1}, // a service of its own
		{t: 200 * ms, key: 1, allowed: true, remaining: 1, reset: 100 * ms, cells: 2},       // keys apart
		{t: 205 * ms, allowed: true, remaining: 1, reset: 100 * ms, cells: 2},
	})
}

// Units held by several requests are released one request at a time: a
// request of cost 3 waits for the release that frees its third unit.
func TestRetryAfterCountsUnits(t *testing.T) {
	run(t, capOf(4), 0, []step{
		{t: 0, service: 30, allowed: true, remaining: 3, reset: 30, cells: 1},
		{t: 0, service: 10, cost: 2, allowed: true, remaining: 1, reset: 30, cells: 2},
		{t: 0, service: 20, allowed: true, remaining: 0, reset: 30, cells: 3},
		{t: 0, service: 1, cost: 3, retryAfter: 20, reset: 30, cells: 3}, // 10 frees 2, 20 the third
		{t: 0, service: 1, cost: 2, retryAfter: 10, reset: 30, cells: 3},
		{t: 19, service: 1, cost: 3, retryAfter: 1, remaining: 2, reset: 11, cells: 2},
		{t: 20, service: 1, cost: 3, allowed: true, remaining: 0, reset: 10, cells: 2},
	})
}

// A caller told an earlier time: released slots stay released, and held
// ones stay held, whatever its now says.
func TestSkewedCallers(t *testing.T) {
	run(t, capOf(2), 100*ms, []step{
		{t: 0, allowed: true, remaining: 1, reset: 100 * ms, cells: 1},                                 // [0, 100 ms)
		{t: 10 * ms, allowed: true, remaining: 0, reset: 100 * ms, cells: 2},                           // [10, 110 ms)
		{t: 100 * ms, allowed: true, remaining: 0, reset: 100 * ms, cells: 2},                          // releases the first: [100, 200 ms)
		{t: 50 * ms, retryAfter: 60 * ms, reset: 150 * ms, cells: 2},                                   // behind: both held end after 50 ms
		{t: 150 * ms, cost: 2, retryAfter: 50 * ms, remaining: 1, reset: 50 * ms, cells: 1},            // releases [10, 110 ms)
		{t: 105 * ms, allowed: true, remaining: 0, reset: 100 * ms, cells: 2},                          // behind, but that slot is released: free
		{t: 300 * ms, key: 1, service: 50 * ms, allowed: true, remaining: 1, reset: 50 * ms, cells: 3}, // ahead: [300, 350 ms)
		{t: 200 * ms, key: 1, allowed: true, remaining: 0, reset: 150 * ms, cells: 4},                  // held before its start
		{t: 250 * ms, key: 1, retryAfter: 50 * ms, reset: 100 * ms, cells: 4},
	})
}

func TestSpecAndErrors(t *testing.T) {
	for _, tc := range []struct {
		assumed int64
		name    string
		err     string
	}{
		{0, "concurrency", ""},
		{50 * ms, "concurrency(assumed 50ms)", ""},
		{1500, "concurrency(assumed 1500µs)", ""},
		{-1, "", "must not be negative"},
		{algos.MaxTime + 1, "", "longer than algos.MaxTime"},
	} {
		spec, err := inflight.Spec(tc.assumed)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Spec(%d): error %v, want one saying %q", tc.assumed, err, tc.err)
			}
			if _, err := inflight.New(capOf(1), tc.assumed); err == nil {
				t.Errorf("New(%d) accepted it", tc.assumed)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if spec.Name != tc.name || spec.Clock != limiter.CallerClock || !spec.ExactRetry || !spec.Conservative {
			t.Errorf("Spec(%d): %q, clock %v, exact retry %v, conservative %v", tc.assumed, spec.Name, spec.Clock, spec.ExactRetry, spec.Conservative)
		}
		lim, err := spec.Open(capOf(3))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := lim.(limiter.Weighed); !ok {
			t.Error("not a limiter.Weighed")
		}
		if _, ok := lim.(limiter.Sized); !ok {
			t.Error("not a limiter.Sized")
		}
	}
	if _, err := inflight.New(algos.Limit{Burst: 2}, 1); err == nil || !strings.Contains(err.Error(), "invalid limit") {
		t.Errorf("New with a hand-made limit: %v", err)
	}

	ctx := context.Background()
	none, err := inflight.New(capOf(2), 0)
	if err != nil {
		t.Fatal(err)
	}
	some, err := inflight.New(capOf(2), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		lim  *inflight.Limiter
		key  int
		now  int64
		w    limiter.Weight
		err  string
	}{
		{"cost 0", some, 0, 0, limiter.Weight{}, "cost must be at least 1"},
		{"negative service", some, 0, 0, limiter.Weight{Cost: 1, Service: -1}, "must not be negative"},
		{"no service time, none assumed", none, 0, 0, limiter.Weight{Cost: 1}, "names no service time"},
		{"negative key", some, -1, 0, limiter.Weight{Cost: 1}, "negative key -1"},
		{"cost above the cap", some, 0, 0, limiter.Weight{Cost: 3}, "can never fit under a cap of 2"},
		{"service past MaxTime", some, 0, 0, limiter.Weight{Cost: 1, Service: algos.MaxTime + 1}, "longer than algos.MaxTime"},
		{"time past MaxTime", some, 0, algos.MaxTime + 1, limiter.Weight{Cost: 1}, "outside ±algos.MaxTime"},
	} {
		if _, err := tc.lim.AllowWeighed(ctx, tc.key, tc.now, tc.w); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		}
	}
	if _, err := none.Allow(ctx, 0, 0); err == nil {
		t.Error("Allow with no assumed service time succeeded")
	}
	if none.Cells() != 0 || some.Cells() != 0 || some.InFlight(0) != 0 {
		t.Error("a failed call held something")
	}
	// Allow uses the assumed service time.
	if d, err := some.Allow(ctx, 0, 0); err != nil || !d.Allowed || d.Reset != 10 {
		t.Errorf("Allow: %+v, %v", d, err)
	}
	if d, err := none.AllowWeighed(ctx, 0, 0, limiter.Weight{Cost: 2, Service: 7}); err != nil || !d.Allowed || d.Reset != 7 || none.InFlight(0) != 2 {
		t.Errorf("a named service time with none assumed: %+v, %v", d, err)
	}
}

// The promise: at most Burst requests within one µs, and nothing else.
func TestPromiseEdges(t *testing.T) {
	p := inflight.Promise(capOf(2))
	if !strings.Contains(p.Text, "at most 2 requests admitted within any single µs") || !strings.Contains(p.Text, "nothing about rate") {
		t.Errorf("text %q", p.Text)
	}
	for _, tc := range []struct {
		times []int64
		ok    bool
	}{
		{nil, true},
		{[]int64{5, 5}, true},
		{[]int64{5, 5, 5}, false},
		{[]int64{4, 5, 5, 6}, true},
		{[]int64{1, 1, 2, 2, 3, 3, 4, 4}, true}, // 8 in 4 µs: no rate promised
		{[]int64{-3, -3, -3}, false},
	} {
		v := p.CheckAdmits(tc.times)
		if (v == nil) != tc.ok {
			t.Errorf("%v: violation %v, want ok=%v", tc.times, v, tc.ok)
		}
		if v != nil && (v.Admits != 3 || v.Allowed != 2 || v.From != tc.times[0] || v.To != tc.times[0]) {
			t.Errorf("%v: violation %+v", tc.times, v)
		}
	}
}
