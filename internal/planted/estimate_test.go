package planted_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
)

// The wrong-weight counter passes the whole contract, its own promise
// included: only a differential against the correct counter catches it
// (package differential's tests). If a property ever catches it, this
// test fails, and the doc comment's claim must change with it.
func TestSlidingCounterWrongWeightKeepsTheContract(t *testing.T) {
	t.Parallel()
	properties.Check(t, limiter.FromAlgorithm(planted.SlidingCounterWrongWeight))
}

// It differs from the correct counter by its estimate alone: where the
// previous window does not count (the first window, or prev = 0), every
// decision is the same.
func TestSlidingCounterWrongWeightIsTheCounterWithoutAPreviousWindow(t *testing.T) {
	l := algos.MustLimit(5, 1000, 5)
	var a, b algos.State
	for now := int64(0); now < 1000; now += 37 {
		da := planted.SlidingCounterWrongWeight.Decide(&a, now, l)
		db := algos.SlidingCounter.Decide(&b, now, l)
		if da.Allowed != db.Allowed || da.Remaining != db.Remaining || a.Window().Count != b.Window().Count {
			t.Fatalf("at %dµs in the first window: planted %+v, correct %+v", now, da, db)
		}
	}
}
