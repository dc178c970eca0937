package inflight_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/inflight"
	"github.com/overshoot-go/overshoot/limiter"
)

// call is one request of a drawn trace; service 0 is the assumed one.
type call struct {
	key           int
	t             int64
	cost, service int64
}

// drawCase draws a cap of 1..5, an assumed service time (0: none, and then
// every call names its own) and up to 80 calls on keys 0..2 at times in
// [-50, 300], of cost 1..cap, sorted by time when inOrder.
func drawCase(t *rapid.T, inOrder bool) (algos.Limit, int64, []call) {
	l := capOf(rapid.Int64Range(1, 5).Draw(t, "cap"))
	assumed := rapid.Int64Range(0, 30).Draw(t, "assumed")
	calls := make([]call, rapid.IntRange(0, 80).Draw(t, "calls"))
	for i := range calls {
		c := call{
			key:  rapid.IntRange(0, 2).Draw(t, "key"),
			t:    rapid.Int64Range(-50, 300).Draw(t, "t"),
			cost: rapid.Int64Range(1, l.Burst).Draw(t, "cost"),
		}
		if assumed == 0 || rapid.Bool().Draw(t, "own service") {
			c.service = rapid.Int64Range(1, 60).Draw(t, "service")
		}
		calls[i] = c
	}
	if inOrder {
		slices.SortStableFunc(calls, func(a, b call) int { return cmp.Compare(a.t, b.t) })
	}
	return l, assumed, calls
}

// interval is an admitted request: cost units over [start, end).
type interval struct {
	start, end, cost int64
}

// inFlightAt is the units of the intervals covering t.
func inFlightAt(admitted []interval, t int64) int64 {
	var n int64
	for _, a := range admitted {
		if a.start <= t && t < a.end {
			n += a.cost
		}
	}
	return n
}

// For calls in time order the limiter is exact. Recomputed from the
// admitted requests' [start, end) intervals alone: the units in flight
// never exceed the cap; a request is admitted exactly when it fits
// (so every denial was necessary, and costs above 1 are whole or
// nothing); a denial's RetryAfter is the first instant it would fit with
// no other traffic; Reset, Remaining, InFlight and Cells say what the
// intervals say; and the admit times keep the promise.
func TestExactInTimeOrder(t *testing.T) {
	var admits, denials, weighedDenials int
	rapid.Check(t, func(t *rapid.T) {
		l, assumed, calls := drawCase(t, true)
		lim, err := inflight.New(l, assumed)
		if err != nil {
			t.Fatal(err)
		}
		admitted := make([][]interval, 3)
		last := []int64{-1 << 62, -1 << 62, -1 << 62} // each key's latest call
		admitTimes := make([][]int64, 3)              // per key: a promise is about one key
		for i, c := range calls {
			service := c.service
			if service == 0 {
				service = assumed
			}
			d, err := lim.AllowWeighed(context.Background(), c.key, c.t, limiter.Weight{Cost: c.cost, Service: c.service})
			if err != nil {
				t.Fatalf("call %d %+v: %v", i, c, err)
			}
			before := inFlightAt(admitted[c.key], c.t)
			fits := before+c.cost <= l.Burst
			if d.Allowed != fits {
				t.Fatalf("call %d %+v: allowed %v with %d in flight of %d", i, c, d.Allowed, before, l.Burst)
			}
			if fits {
				admits++
				admitted[c.key] = append(admitted[c.key], interval{c.t, c.t + service, c.cost})
				admitTimes[c.key] = append(admitTimes[c.key], c.t)
			} else {
				denials++
				if c.cost > 1 && before < l.Burst {
					weighedDenials++ // some units were free: whole or nothing
				}
				// The first instant after c.t at which it fits is an end.
				var retry int64 = -1
				for at := c.t + 1; retry < 0; at++ {
					if inFlightAt(admitted[c.key], at)+c.cost <= l.Burst {
						retry = at - c.t
					}
				}
				if d.RetryAfter != retry {
					t.Fatalf("call %d %+v: RetryAfter %d, but it fits first %d µs later", i, c, d.RetryAfter, retry)
				}
			}
			after := inFlightAt(admitted[c.key], c.t)
			if after > l.Burst {
				t.Fatalf("call %d %+v: %d in flight over a cap of %d", i, c, after, l.Burst)
			}
			var reset int64
			for _, a := range admitted[c.key] {
				reset = max(reset, a.end-c.t)
			}
			if d.Remaining != l.Burst-after || d.Reset != reset || lim.InFlight(c.key) != after {
				t.Fatalf("call %d %+v: %+v and InFlight %d; the intervals say %d in flight, reset %d", i, c, d, lim.InFlight(c.key), after, reset)
			}
			last[c.key] = c.t
			var held int64
			for k, as := range admitted {
				for _, a := range as {
					if a.end > last[k] {
						held++
					}
				}
			}
			if lim.Cells() != held {
				t.Fatalf("call %d %+v: %d cells, %d requests held", i, c, lim.Cells(), held)
			}
		}
		for key, times := range admitTimes {
			if v := inflight.Promise(l).CheckAdmits(times); v != nil {
				t.Fatalf("key %d's admits break the promise: %v", key, v)
			}
		}
	})
	t.Logf("%d admits, %d denials, %d of them of a cost that partly fit", admits, denials, weighedDenials)
	if denials < admits/10 || weighedDenials == 0 {
		t.Errorf("%d admits, %d denials, %d partly fitting: the draws do not test the cap", admits, denials, weighedDenials)
	}
}

// With calls in any order (skewed callers), the limiter keeps its stated
// rule, recomputed here from the call order alone: a request admitted at
// call j is held at call i > j unless some call on its key from j+1 to i
// was told a time at or after its end. Then: admitted exactly when the
// held units plus its cost fit, held units never above the cap, and
// RetryAfter the first held end that frees enough.
func TestSkewedCallsKeepTheRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l, assumed, calls := drawCase(t, false)
		lim, err := inflight.New(l, assumed)
		if err != nil {
			t.Fatal(err)
		}
		type req struct {
			end, cost int64
			released  bool
		}
		reqs := make([][]req, 3)
		for i, c := range calls {
			for j := range reqs[c.key] {
				if reqs[c.key][j].end <= c.t {
					reqs[c.key][j].released = true
				}
			}
			var held int64
			var ends []int64
			for _, r := range reqs[c.key] {
				if !r.released {
					held += r.cost
					ends = append(ends, r.end)
				}
			}
			d, err := lim.AllowWeighed(context.Background(), c.key, c.t, limiter.Weight{Cost: c.cost, Service: c.service})
			if err != nil {
				t.Fatalf("call %d %+v: %v", i, c, err)
			}
			fits := held+c.cost <= l.Burst
			if d.Allowed != fits {
				t.Fatalf("call %d %+v: allowed %v with %d held of %d", i, c, d.Allowed, held, l.Burst)
			}
			if fits {
				service := c.service
				if service == 0 {
					service = assumed
				}
				reqs[c.key] = append(reqs[c.key], req{end: c.t + service, cost: c.cost})
				held += c.cost
				ends = append(ends, c.t+service)
			} else {
				slices.Sort(ends)
				retry := int64(-1)
				for _, e := range ends {
					var freed int64
					for _, r := range reqs[c.key] {
						if !r.released && r.end <= e {
							freed += r.cost
						}
					}
					if held-freed+c.cost <= l.Burst {
						retry = e - c.t
						break
					}
				}
				if d.RetryAfter != retry || retry < 1 {
					t.Fatalf("call %d %+v: RetryAfter %d, the rule says %d", i, c, d.RetryAfter, retry)
				}
			}
			var reset int64
			if len(ends) > 0 {
				reset = slices.Max(ends) - c.t
			}
			if held > l.Burst || d.Remaining != l.Burst-held || d.Reset != reset {
				t.Fatalf("call %d %+v: %+v; the rule says %d held, reset %d", i, c, d, held, reset)
			}
			var cells int64
			for _, rs := range reqs {
				for _, r := range rs {
					if !r.released {
						cells++
					}
				}
			}
			if lim.Cells() != cells {
				t.Fatalf("call %d %+v: %d cells, the rule holds %d", i, c, lim.Cells(), cells)
			}
		}
	})
}

// The promise's check is algos.MostInAnyWindow(sorted, 1) ≤ Burst, and it
// names the first instant holding more.
func TestPromiseIsMostInOneMicrosecond(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := capOf(rapid.Int64Range(1, 4).Draw(t, "cap"))
		times := rapid.SliceOfN(rapid.Int64Range(-5, 5), 0, 16).Draw(t, "times")
		slices.Sort(times)
		v := inflight.Promise(l).CheckAdmits(times)
		if want := int64(algos.MostInAnyWindow(times, 1)) <= l.Burst; (v == nil) != want {
			t.Fatalf("%v under a cap of %d: violation %v, MostInAnyWindow %d", times, l.Burst, v, algos.MostInAnyWindow(times, 1))
		}
		if v != nil {
			first := -1
			for i := range times {
				if i >= int(l.Burst) && times[i-int(l.Burst)] == times[i] {
					first = i
					break
				}
			}
			if first < 0 || v.From != times[first] || v.To != times[first] || v.Allowed != l.Burst || v.Admits <= l.Burst {
				t.Fatalf("%v under a cap of %d: violation %+v", times, l.Burst, v)
			}
		}
	})
}
