package traffic_test

import (
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

func TestOpenLoopIsTheSeedsAlone(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 100)
	a, err := traffic.OpenLoop(1, l, 20*algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := traffic.OpenLoop(1, l, 20*algos.Second)
	c, _ := traffic.OpenLoop(2, l, 20*algos.Second)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different traffic")
	}
	if slices.Equal(a, c) {
		t.Fatal("seeds 1 and 2 gave the same traffic")
	}
	// The burst's limit does not change the traffic: it depends on L and W.
	if d, _ := traffic.OpenLoop(1, algos.MustLimit(100, algos.Second, 7), 20*algos.Second); !slices.Equal(a, d) {
		t.Error("the burst changed the traffic")
	}
	if !slices.IsSortedFunc(a, func(x, y record.Request) int { return int(x.Sent - y.Sent) }) {
		t.Fatal("traffic is not sorted by time")
	}
	per := make([][]int64, len(traffic.OpenLoopClients()))
	for _, r := range a {
		if r.Key < 0 || r.Key >= len(traffic.OpenLoopClients()) || r.Sent < 0 || r.Sent >= 20*algos.Second {
			t.Fatalf("request %+v outside the four keys or the run", r)
		}
		per[r.Key] = append(per[r.Key], r.Sent)
	}
	// Flood: Poisson at 500/s for 20 s, 10,000 expected (sd 100).
	if n := len(per[traffic.Flood]); n < 9_500 || n > 10_500 {
		t.Errorf("flood sent %d requests in 20 s, want about 10,000", n)
	}
	// Boundary: 100 in the 10 ms before and 100 in the 10 ms after 1 s, 3 s, ..., 19 s.
	if n := len(per[traffic.Boundary]); n != 10*200 {
		t.Errorf("boundary sent %d requests, want 2,000", n)
	}
	for _, ts := range per[traffic.Boundary] {
		edge := (ts + algos.Second/2) / algos.Second * algos.Second
		if edge%(2*algos.Second) != algos.Second || ts < edge-10_000 || ts >= edge+10_000 {
			t.Fatalf("boundary request at %s is not within 10 ms of an odd second", algos.FormatTime(ts))
		}
	}
	// On-off: only during [5k, 5k+2) s, about 4 × 1,000.
	for _, ts := range per[traffic.OnOff] {
		if ts%(5*algos.Second) >= 2*algos.Second {
			t.Fatalf("on-off request at %s falls in an off period", algos.FormatTime(ts))
		}
	}
	if n := len(per[traffic.OnOff]); n < 3_700 || n > 4_300 {
		t.Errorf("on-off sent %d requests, want about 4,000", n)
	}
	// Honest: evenly at 90/s, 1,800 in 20 s, gaps of 11,111 or 11,112 µs.
	h := per[traffic.Honest]
	if len(h) != 1_800 {
		t.Errorf("honest sent %d requests in 20 s, want 1,800", len(h))
	}
	for i := 1; i < len(h); i++ {
		if gap := h[i] - h[i-1]; gap != 11_111 && gap != 11_112 {
			t.Fatalf("honest gap %d µs at request %d", gap, i)
		}
	}
	if _, err := traffic.OpenLoop(1, algos.Limit{}, algos.Second); err == nil {
		t.Error("OpenLoop accepted a zero limit")
	}
	if _, err := traffic.OpenLoop(1, l, 0); err == nil {
		t.Error("OpenLoop accepted a zero duration")
	}
}
