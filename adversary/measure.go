package adversary

import "slices"

// score is an attack's measure: its Excess and its Peak (see Attack).
type score struct {
	excess, peak int
}

// beats orders scores by excess, then by peak: what the climb climbs.
func (sc score) beats(o score) bool {
	return sc.excess > o.excess || sc.excess == o.excess && sc.peak > o.peak
}

// excess is how many of the sorted admit times a limiter keeping the
// promise would have refused: while the promise's check finds a violation,
// take out one admit at its end (the admit that overflowed), and count.
// Each pass removes one admit, so it ends; a check that names an end among
// no admit (a promise of the user's own that misreports) ends it too, with
// that violation counted once.
func (s *searcher) excess(sorted []int64) int {
	v := s.promise.CheckAdmits(sorted)
	if v == nil {
		return 0 // the common case: no copy
	}
	times := append(s.times[:0], sorted...)
	defer func() { s.times = times[:0] }()
	n := 0
	for ; v != nil; v = s.promise.CheckAdmits(times) {
		n++
		i, _ := slices.BinarySearch(times, v.To+1) // just past the last admit at To
		if i == 0 || times[i-1] != v.To {
			break
		}
		times = slices.Delete(times, i-1, i)
	}
	return n
}
