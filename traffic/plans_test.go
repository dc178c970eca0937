package traffic_test

import (
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// skewPlan is the study's caller-clock plan at a skew of 2 s (study's
// SkewPlanFor): 8 workers offering 1.2 times 100 per second, burst 10, for
// 3 s.
var skewPlan = traffic.SkewPlan{Limit: algos.MustLimit(100, algos.Second, 10), Workers: 8,
	Skew: 2 * algos.Second, Load: 1.2, Duration: 3 * algos.Second, Seed: 1}

// Worker clocks are spread evenly, the first and last exactly Skew apart
// (±Skew/2), and the plan offers Load times the rate.
func TestSkewPlanSpreadsClocksAndOffersTheLoad(t *testing.T) {
	p := skewPlan
	if p.Offset(0) != -algos.Second || p.Offset(p.Workers-1) != algos.Second {
		t.Errorf("offsets %d..%d, want ±1s (a skew of 2s)", p.Offset(0), p.Offset(p.Workers-1))
	}
	n := 0
	for _, ws := range p.Sends() {
		n += len(ws)
		for _, s := range ws {
			if s.Sent < 0 || s.Sent >= p.Duration {
				t.Fatalf("send at %d outside [0, %d)", s.Sent, p.Duration)
			}
		}
	}
	want := int(p.Load * float64(p.Limit.Rate) * float64(p.Duration) / float64(p.Limit.Window))
	if n < want-p.Workers || n > want+p.Workers {
		t.Errorf("%d sends, want %d ± one per worker", n, want)
	}
}

// The simulator's requests are the sends, shifted by the start, in time
// order with ties in worker order, each on its worker's node; the same plan
// gives the same requests.
func TestSkewPlanRequestsAreTheSendsInTimeOrder(t *testing.T) {
	p := skewPlan
	const start = 1000 * algos.Second
	reqs := p.Requests(start)
	n := 0
	for _, ws := range p.Sends() {
		n += len(ws)
		for _, s := range ws {
			if !slices.Contains(reqs, record.Request{Sent: start + s.Sent, Node: s.Worker}) {
				t.Fatalf("send %+v is not among the requests", s)
			}
		}
	}
	if len(reqs) != n {
		t.Fatalf("%d requests for %d sends", len(reqs), n)
	}
	for i := 1; i < len(reqs); i++ {
		a, b := reqs[i-1], reqs[i]
		if b.Sent < a.Sent || b.Sent == a.Sent && b.Node < a.Node {
			t.Fatalf("request %d %+v before %+v: not in time, then worker, order", i, a, b)
		}
	}
	if !slices.Equal(reqs, p.Requests(start)) {
		t.Error("the same plan gave other requests")
	}
}

// The edge plan floods from Lead before the edge to one window after it,
// and its requests are its times.
func TestEdgePlanCoversLeadAndOneWindow(t *testing.T) {
	p := traffic.EdgePlan{Limit: algos.MustLimit(20, algos.Second, 20), Lead: 400 * algos.Second / 1000, Gap: 5000}
	e := 7 * p.Limit.Window
	ts := p.Times(e)
	if ts[0] != e-p.Lead || ts[len(ts)-1] >= e+p.Limit.Window || ts[len(ts)-1] < e+p.Limit.Window-p.Gap {
		t.Errorf("flood from %d to %d, want [%d, %d)", ts[0], ts[len(ts)-1], e-p.Lead, e+p.Limit.Window)
	}
	reqs := p.Requests(e)
	if len(reqs) != len(ts) {
		t.Fatalf("%d requests for %d times", len(reqs), len(ts))
	}
	for i, r := range reqs {
		if r.Sent != ts[i] || r.Key != 0 || r.Node != 0 {
			t.Fatalf("request %d is %+v, want key 0, node 0, at %d", i, r, ts[i])
		}
	}
}

// A plan that leaves no request, or no worker, is refused.
func TestPlansRefuseWhatTheyCannotPlay(t *testing.T) {
	edge := traffic.EdgePlan{Limit: algos.MustLimit(20, algos.Second, 20), Lead: 1, Gap: 1}
	if err := edge.Validate(); err != nil {
		t.Fatalf("a valid edge plan: %v", err)
	}
	for _, bad := range []traffic.EdgePlan{{Limit: edge.Limit, Lead: 0, Gap: 1}, {Limit: edge.Limit, Lead: algos.Second, Gap: 1}, {Limit: edge.Limit, Lead: 1, Gap: 0}, {Lead: 1, Gap: 1}} {
		if bad.Validate() == nil {
			t.Errorf("edge plan %+v accepted", bad)
		}
	}
	if err := skewPlan.Validate(); err != nil {
		t.Fatalf("a valid caller-clock plan: %v", err)
	}
	for _, change := range []func(*traffic.SkewPlan){
		func(p *traffic.SkewPlan) { p.Workers = 0 },
		func(p *traffic.SkewPlan) { p.Skew = -1 },
		func(p *traffic.SkewPlan) { p.Load = 0 },
		func(p *traffic.SkewPlan) { p.Duration = 0 },
		func(p *traffic.SkewPlan) { p.Load = 1e12 }, // a period under 1 µs
	} {
		bad := skewPlan
		change(&bad)
		if bad.Validate() == nil {
			t.Errorf("caller-clock plan %+v accepted", bad)
		}
	}
}

// Random release offsets are in [0, spread), the same for the same seed,
// and all 0 without a spread.
func TestReleaseOffsetsAreSeededWithinTheSpread(t *testing.T) {
	const spread = 5_000 // µs
	a := traffic.ReleaseOffsets(64, spread, 3)
	if len(a) != 64 {
		t.Fatalf("%d offsets for 64 workers", len(a))
	}
	distinct := map[int64]bool{}
	for _, o := range a {
		if o < 0 || o >= spread {
			t.Fatalf("offset %d µs outside [0, %d)", o, spread)
		}
		distinct[o] = true
	}
	if len(distinct) < 60 {
		t.Errorf("%d distinct offsets among 64: not drawn", len(distinct))
	}
	if !slices.Equal(a, traffic.ReleaseOffsets(64, spread, 3)) {
		t.Error("the same seed gave other offsets")
	}
	if slices.Equal(a, traffic.ReleaseOffsets(64, spread, 4)) {
		t.Error("another seed gave the same offsets")
	}
	for _, o := range traffic.ReleaseOffsets(8, 0, 3) {
		if o != 0 {
			t.Fatalf("offset %d µs without a spread", o)
		}
	}
}
