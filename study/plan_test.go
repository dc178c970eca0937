package study

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
)

// Worker clocks are spread evenly, the first and last exactly Skew apart
// (±Skew/2), and the plan offers Load times the rate.
func TestSkewPlanSpreadsClocksAndOffersTheLoad(t *testing.T) {
	p := SkewPlanFor(2 * algos.Second)
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

// The edge plan floods from Lead before the edge to one window after it.
func TestEdgePlanCoversLeadAndOneWindow(t *testing.T) {
	p := EdgePlanFor(EdgeLeads[1])
	e := 7 * p.Limit.Window
	ts := p.Times(e)
	if ts[0] != e-p.Lead || ts[len(ts)-1] >= e+p.Limit.Window || ts[len(ts)-1] < e+p.Limit.Window-p.Gap {
		t.Errorf("flood from %d to %d, want [%d, %d)", ts[0], ts[len(ts)-1], e-p.Lead, e+p.Limit.Window)
	}
}
