package record_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// Offset spreads n clocks evenly over skew: the first at -skew/2, the
// last exactly skew after it, never decreasing in between, at any skew
// the simulator accepts; one node has none.
func TestOffsets(t *testing.T) {
	for _, n := range []int{2, 3, 4, 7} {
		for _, skew := range []int64{0, 1, 49_999, 50_000, 200_000, algos.MaxTime / 8} {
			first, last := record.Offset(0, n, skew), record.Offset(n-1, n, skew)
			if last-first != skew || first != -skew/2 {
				t.Errorf("%d nodes, skew %d: offsets %d .. %d", n, skew, first, last)
			}
			for i := 1; i < n; i++ {
				if record.Offset(i, n, skew) < record.Offset(i-1, n, skew) {
					t.Errorf("%d nodes, skew %d: offsets not increasing at %d", n, skew, i)
				}
			}
		}
	}
	if got := record.Offset(0, 4, 60_000) + 30_000; got != 0 {
		t.Errorf("first of four nodes at 60 ms: %d from -30 ms", got)
	}
	if got := record.Offset(1, 4, 60_000); got != -10_000 {
		t.Errorf("second of four nodes at 60 ms: %d, want -10 ms", got)
	}
	if record.Offset(0, 1, 50_000) != 0 {
		t.Error("one node has an offset")
	}
}
