package study

import (
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
)

// The deterministic half of the report is golden/concurrency.txt.
func TestModelReportMatchesGolden(t *testing.T) {
	golden.Check(t, "concurrency.txt", []byte(ModelReport()))
}

// The closed form c·⌈L/c⌉ − L is what rounds of c simultaneous reads and
// c increments produce, for every c and L.
func TestLockstepOverIsWhatLockstepRoundsAdmit(t *testing.T) {
	for c := 1; c <= 70; c++ {
		for l := 0; l <= 300; l++ {
			count := 0
			for count < l { // one round: all c read count < l, all c INCR
				count += c
			}
			if got, want := LockstepOver(c, l), count-l; got != want {
				t.Fatalf("LockstepOver(%d, %d) = %d, rounds admit %d over", c, l, got, want)
			}
		}
	}
}

// A refusal is within the limit when fewer than L admits precede it in
// Redis's order, or when an optimistic budget ran out; a refusal carrying no
// order counts only if it is an exhaustion.
func TestRefusedWithinLimitCountsRefusalsBeforeTheLthAdmit(t *testing.T) {
	admit := func(seq int64) Answer { return Answer{Allowed: true, Seq: seq} }
	refuse := func(seq int64) Answer { return Answer{Refusal: AtLimit, Seq: seq} }
	outs := []Answer{admit(1), refuse(2), admit(3), refuse(4), refuse(5), {Refusal: Exhausted}, {Refusal: AtLimit}}
	// L = 2: refusal 2 comes after one admit (within); 4 and 5 after two.
	if got := RefusedWithinLimit(outs, 2); got != 2 {
		t.Errorf("L=2: %d refusals within the limit, want 2 (seq 2 and the exhausted one)", got)
	}
	if got := RefusedWithinLimit(outs, 3); got != 4 {
		t.Errorf("L=3: %d refusals within the limit, want 4 (seq 2, 4, 5 and the exhausted one)", got)
	}
}

// Worker clocks are spread evenly, the first and last exactly 2·Skew apart,
// and the plan offers Load times the rate.
func TestSkewPlanSpreadsClocksAndOffersTheLoad(t *testing.T) {
	p := SkewPlanFor(algos.Second)
	if p.Offset(0) != -algos.Second || p.Offset(p.Workers-1) != algos.Second {
		t.Errorf("offsets %d..%d, want ±1s", p.Offset(0), p.Offset(p.Workers-1))
	}
	n := 0
	for _, ws := range p.Sends() {
		n += len(ws)
		for _, s := range ws {
			if s.Send < 0 || s.Send >= p.Duration {
				t.Fatalf("send at %d outside [0, %d)", s.Send, p.Duration)
			}
		}
	}
	want := int(p.Load * float64(p.Limit.Rate) * float64(p.Duration) / float64(p.Limit.Window))
	if n < want-p.Workers || n > want+p.Workers {
		t.Errorf("%d sends, want %d ± one per worker", n, want)
	}
}

// The edge plan floods from Lead before the edge to one window after it.
func TestEdgePlanCoversLeadAndOneWindow(t *testing.T) {
	p := EdgePlanFor(EdgeLeads[1])
	e := 7 * p.Limit.Window
	ts := p.Times(e)
	if ts[0] != e-p.Lead || ts[len(ts)-1] >= e+p.Limit.Window || ts[len(ts)-1] < e+p.Limit.Window-p.Gap {
		t.Errorf("flood from %d to %d, want [%d, %d)", ts[0], ts[len(ts)-1], e-p.Lead, e+p.Limit.Window)
	}
}

func TestQuantileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 1: 100, 0: 1} {
		if got := quantile(d, q); got != want {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
}
