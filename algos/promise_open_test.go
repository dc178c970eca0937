package algos_test

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
)

// two is 2 per 10 µs, for the anchored window.
var two = algos.MustLimit(2, 10, 2)

// The anchored window opens at an admit and at the first admit after each
// window ends; it says nothing of a window that straddles two of them.
func TestAnchoredWindowPromiseEdges(t *testing.T) {
	anchored := algos.AnchoredWindowPromise(two)
	for _, tc := range []struct {
		name  string
		times []int64
		ok    bool
	}{
		{"L in the first window", []int64{3, 12}, true},
		{"L+1 in the first window", []int64{3, 8, 12}, false},
		{"the next window opens at the first admit after the end", []int64{3, 12, 13, 22}, true},
		{"... and holds what is within W of that admit", []int64{3, 12, 13, 14, 22}, false},
		{"a window that straddles two anchored ones holds 2L", []int64{0, 9, 10, 10}, true},
		{"the end of a window belongs to the next", []int64{0, 1, 10, 11}, true},
		{"2L at one instant", []int64{5, 5, 5, 5}, false},
		{"negative times", []int64{-20, -15, -10, -1}, true},
		{"empty", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := anchored.CheckAdmits(tc.times)
			if (v == nil) != tc.ok {
				t.Fatalf("%v: violation %v, want ok=%v", tc.times, v, tc.ok)
			}
			if v != nil && (v.Admits != 3 || v.Allowed != 2 || !strings.Contains(v.Reason, "anchored at an admit")) {
				t.Errorf("%v: violation %+v", tc.times, v)
			}
		})
	}
}

// bruteAnchored finds the anchors by their definition, one at a time, and
// counts the admits of each window by looking at every admit.
func bruteAnchored(sorted []int64, l algos.Limit) bool {
	if len(sorted) == 0 {
		return true
	}
	for anchor, ok := sorted[0], true; ok; {
		n := int64(0)
		ok = false
		next := int64(0)
		for _, t := range sorted {
			if t >= anchor && t < anchor+l.Window {
				n++
			}
			if t >= anchor+l.Window && !ok {
				next, ok = t, true
			}
		}
		if n > l.Rate {
			return false
		}
		anchor = next
	}
	return true
}

func TestAnchoredWindowCheckAgreesWithItsDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := algos.MustLimit(rapid.Int64Range(1, 4).Draw(t, "rate"), rapid.Int64Range(1, 20).Draw(t, "window"), 1)
		times := rapid.SliceOfN(rapid.Int64Range(-30, 60), 0, 14).Draw(t, "times")
		slices.Sort(times)
		if got, want := algos.AnchoredWindowPromise(l).CheckAdmits(times) == nil, bruteAnchored(times, l); got != want {
			t.Fatalf("%v under %v: the check says ok=%v, the definition ok=%v", times, l, got, want)
		}
	})
}

// A promise of the user's own is judged by its check, on the admits sorted,
// without the caller's slice being touched.
func TestOwnPromiseSeesTheAdmitsSorted(t *testing.T) {
	var seen []int64
	p := algos.NewPromise("at most 3 admits in all", func(sorted []int64) *algos.Violation {
		seen = slices.Clone(sorted)
		if len(sorted) > 3 {
			return &algos.Violation{From: sorted[0], To: sorted[3], Admits: int64(len(sorted)), Allowed: 3, Reason: "more than 3 admits"}
		}
		return nil
	})
	times := []int64{30, 10, 20}
	if v := p.CheckAdmits(times); v != nil || !slices.Equal(seen, []int64{10, 20, 30}) || !slices.Equal(times, []int64{30, 10, 20}) {
		t.Errorf("violation %v, the check saw %v, the caller's slice is now %v", v, seen, times)
	}
	if v := p.Check([]algos.Event{{Time: 1, Admitted: true}, {Time: 2}, {Time: 3, Admitted: true}, {Time: 4, Admitted: true}, {Time: 5, Admitted: true}}); v == nil || v.Admits != 4 {
		t.Errorf("4 admits of 5 events: violation %v, want one of 4 admits", v)
	}
	if v := algos.NewPromise("no check", nil).CheckAdmits(times); v == nil || !strings.Contains(v.Reason, "no check") {
		t.Errorf("a promise without a check: %v, want a violation saying so", v)
	}
}
