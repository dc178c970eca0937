package traffic_test

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/traffic"
)

// The edge prober hits both µs of every refill instant, and every window
// edge with a burst of L+1 on its last µs, its first, or both, turning
// through all three in any three edges in a row; the same seed gives the
// same requests, sorted.
func TestEdgeProbesLandOnEveryEdge(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10) // a token every 100 ms
	dur := 6 * algos.Second
	reqs, err := traffic.EdgeProbes(3, l, dur)
	if err != nil {
		t.Fatal(err)
	}
	at := map[int64]int{}
	for i, r := range reqs {
		if r.Key != int(traffic.Edge) || (i > 0 && r.Sent < reqs[i-1].Sent) {
			t.Fatalf("request %d: %+v, want key %d in time order", i, r, traffic.Edge)
		}
		at[r.Sent]++
	}
	for tok := int64(100_000); tok < dur; tok += 100_000 {
		if at[tok-1] == 0 || at[tok] == 0 {
			t.Errorf("refill instant %s: %d requests the µs before, %d on it; want at least one each", algos.FormatTime(tok), at[tok-1], at[tok])
		}
	}
	var patterns []string
	for edge := int64(algos.Second); edge < dur; edge += algos.Second {
		last, first := at[edge-1] >= 11, at[edge] >= 11
		patterns = append(patterns, map[[2]bool]string{{true, false}: "last", {false, true}: "first", {true, true}: "both"}[[2]bool{last, first}])
	}
	for i := 2; i < len(patterns); i++ {
		if seen := strings.Join(patterns[i-2:i+1], " "); !strings.Contains(seen, "last") || !strings.Contains(seen, "first") || !strings.Contains(seen, "both") {
			t.Errorf("edges %d to %d: %s; want each pattern once in any three", i-1, i+1, seen)
		}
	}
	again, _ := traffic.EdgeProbes(3, l, dur)
	if len(again) != len(reqs) || again[len(again)/2] != reqs[len(reqs)/2] {
		t.Error("the same seed gave other requests")
	}
	if _, err := traffic.EdgeProbes(3, algos.Limit{}, dur); err == nil {
		t.Error("a zero limit was accepted")
	}
}
