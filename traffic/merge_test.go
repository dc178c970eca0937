package traffic

import (
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// Merging parts is a stable sort of their concatenation by (time, key):
// on random parts, sorted or not, with ties within and across parts; and
// a seed's traffic made in a worker's reused memory is the traffic made
// afresh, whichever seed that memory last held.
func TestMergeIsAStableSortAndScratchTrafficIsTheTraffic(t *testing.T) {
	s := record.NewStream(1, 2)
	for range 5000 {
		parts := make([][]record.Request, 1+s.Below(8))
		var all []record.Request
		for p := range parts {
			for range s.Below(9) {
				// Node tells the requests apart: it is no part of the order.
				parts[p] = append(parts[p], record.Request{Key: int(s.Below(3)), Sent: int64(s.Below(6)), Node: p*100 + len(parts[p])})
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
	// A hunt's traffic (100 per second, 20 s, the edge prober too), and a
	// limit whose parts are of other lengths.
	for _, l := range []algos.Limit{algos.MustLimit(100, algos.Second, 100), algos.MustLimit(7, 3*algos.Second, 9)} {
		seeds := []uint64{1, 2, 3}
		fresh := make([][]record.Request, len(seeds))
		for i, seed := range seeds {
			var err error
			if fresh[i], err = new(Scratch).Make(seed, l, 20*algos.Second, true); err != nil {
				t.Fatal(err)
			}
		}
		sc := new(Scratch)
		for _, i := range []int{0, 2, 1, 1, 0} {
			got, err := sc.Make(seeds[i], l, 20*algos.Second, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, fresh[i]) {
				t.Fatalf("%v, seed %d made in reused memory differs from its traffic", l, seeds[i])
			}
		}
		// Made together, the open-loop clients' and the edge prober's are
		// each of theirs, merged.
		open, err := OpenLoop(seeds[0], l, 20*algos.Second)
		if err != nil {
			t.Fatal(err)
		}
		edge, err := EdgeProbes(seeds[0], l, 20*algos.Second)
		if err != nil {
			t.Fatal(err)
		}
		all := append(slices.Clone(open), edge...)
		slices.SortStableFunc(all, cmpSentThenKey)
		if !slices.Equal(all, fresh[0]) {
			t.Fatalf("%v: the open-loop clients and the edge prober made together are not each of them merged", l)
		}
	}
}
