package scenarios

import (
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/model"
)

// Merging parts is a stable sort of their concatenation by (time, key):
// on random parts, sorted or not, with ties within and across parts; and
// a seed's traffic made in a worker's reused memory is the traffic made
// afresh, whichever seed that memory last held.
func TestMergeIsAStableSortAndScratchTrafficIsTheTraffic(t *testing.T) {
	s := model.NewStream(1, 2)
	for range 5000 {
		parts := make([][]model.Request, 1+s.Below(8))
		var all []model.Request
		for p := range parts {
			for range s.Below(9) {
				// Node tells the requests apart: it is no part of the order.
				parts[p] = append(parts[p], model.Request{Key: int(s.Below(3)), Sent: int64(s.Below(6)), Node: p*100 + len(parts[p])})
			}
			if s.Below(4) != 0 {
				slices.SortStableFunc(parts[p], cmpSentThenKey)
			}
			all = append(all, parts[p]...)
		}
		slices.SortStableFunc(all, cmpSentThenKey)
		if got := mergeBySentThenKey(nil, parts...); !slices.Equal(got, all) {
			t.Fatalf("parts %v merged to %v, want %v", parts, got, all)
		}
	}
	o := HuntOptions()
	o.Seeds = []uint64{1, 2, 3}
	fresh, err := o.traffic()
	if err != nil {
		t.Fatal(err)
	}
	sc := new(trafficScratch)
	for _, i := range []int{0, 2, 1, 1, 0} {
		got, err := o.seedTraffic(i, sc)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, fresh[i]) {
			t.Fatalf("seed %d made in reused memory differs from its traffic", o.Seeds[i])
		}
	}
}
