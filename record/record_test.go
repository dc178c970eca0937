package record_test

import (
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/record"
)

// Decisions are ranked by time, those of one µs by the order their
// producer made them in, whatever order they are listed in; one with no
// place in that order gets no rank.
func TestRanksAreByTimeThenByTheProducersOrder(t *testing.T) {
	type d struct {
		decided, order int64
		ok             bool
	}
	ds := []d{{50, 9, true}, {10, 4, true}, {50, 2, true}, {30, 0, false}, {10, 3, true}}
	got := record.Ranks(len(ds), func(i int) (int64, int64, bool) { return ds[i].decided, ds[i].order, ds[i].ok })
	if want := []int64{4, 2, 3, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("ranks %v, want %v", got, want)
	}
}
