package planted_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
)

// Every planted decision has a FieldsFunc (the simulator's fast way) that
// decides as its Decide, call for call, on two states fed the same seeded
// times (some behind the last, as a skewed node's), under limits whose
// unit is and is not a whole number of µs: a hunt judges the planted bug
// the FieldsFunc makes, and the properties the one Decide makes.
func TestPlantedFieldsDecideAsDecide(t *testing.T) {
	limits := []algos.Limit{algos.MustLimit(100, algos.Second, 100), algos.MustLimit(7, algos.Second, 3)}
	for _, a := range planted.All() {
		f := a.Fields()
		if f == nil {
			t.Fatalf("%s has no FieldsFunc", a.Name)
		}
		for _, l := range limits {
			var s1, s2 algos.State
			now, x := int64(1_000_000), uint64(1)
			for i := range 20_000 {
				x = x*6364136223846793005 + 1442695040888963407
				now += int64(x>>33)%4000 - 500 // up to 0.5 ms behind the last
				d := a.Decide(&s1, now, l)
				allowed, remaining, retryAfter, reset := f(&s2, now, &l)
				got := algos.Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retryAfter, Reset: reset}
				if got != d {
					t.Fatalf("%s under %v, call %d at %d: Fields %+v, Decide %+v", a.Name, l, i, now, got, d)
				}
			}
		}
	}
}
