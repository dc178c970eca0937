package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// REMAINING. An answer's Remaining says how many more requests the
// key would be admitted at the instant it was decided. So the admits
// certainly decided before that instant in some span, the request itself
// when admitted, and Remaining more at that instant must all fit the
// promise in that span, or the answer overstates what the promise still
// allows. A Remaining of 0 claims nothing more than the admits do, which
// the judge of admits judges, so only a positive one is held to this.
// Sound under the client's timing uncertainty, as the judge of
// admits is: an admit counts only when it was certainly decided before the
// answer's own decision (its span ends before the answer's begins, or,
// both seen at one instant and ranked, record.SeenOrder, it is ranked
// before the answer in the answer's µs), and
// the span is taken as long as the records allow (from the earliest of
// those admits' sends to the answer's return), so a slow answer can only
// excuse a Remaining, never convict one.
//
//   - a bucket promise: for every x that is some such admit's Sent (or the
//     answer's own Sent, with none before it), C(x) + own + R ≤ B +
//     L·(to − x)/W, where C(x) counts the admits sent at or after x and
//     answered before the answer was sent, and to is its Answered. The
//     largest C(x)·W + L·x is kept in a segment tree as admits are added in
//     order of Answered (an admit sent at v raises C(x) for every x ≤ v).
//   - a sliding window promise: C + own + R ≤ L, with C the admits sent
//     after to − W and answered before the answer was sent: all within the
//     window that ends at the decision.
//   - windows whose edges the client cannot see: not judged (a window may
//     have just begun); aligned ones are when every decision was seen
//     (aligned.go).
//
// With the simulator's records (the decision seen, the span an instant,
// the decisions of one µs ranked) it is the hunt's breach.RemainingTooHigh
// rule (judge.Simulation's), which also holds an admit after an answer of
// Remaining 0 in the same µs too high (judgeAdmitAfterZero, for every
// promise); an aligned window counts the ranked admits before the answer
// too (aligned.go). Without ranks, two decisions of one µs are in no known
// order, and neither counts before the other.

// judgeRemaining judges the Remaining of every decided answer of one key
// that states it (answers) against its admits (admits, each Answered ≥
// Sent), under a bucket or sliding promise; other shapes say nothing.
func judgeRemaining(answers, admits []record.Record, shape promiseShape, l algos.Limit) ruleVerdict {
	var rv ruleVerdict
	if shape != bucketShape && shape != slidingShape || len(answers) == 0 {
		return rv
	}
	// A span's ends, each with a rank within its µs: an admit ranked
	// before an answer in the answer's own µs (record.SeenOrder, both
	// seen at one instant) is certainly before it; unranked, an admit
	// ends after and an answer begins before every rank of its µs.
	type span struct{ from, fromRank, to, toRank int64 }
	spanOf := func(r record.Record) span {
		f, t := r.Span()
		if r.Seen.Has(record.SeenOrder|record.SeenDecided) && f == t {
			return span{f, r.Order, t, r.Order}
		}
		return span{f, math.MinInt64, t, math.MaxInt64}
	}
	before := func(a, r span) bool { return a.to < r.from || a.to == r.from && a.toRank < r.fromRank }
	n := len(admits)
	// The admits by from (ascending): their ranks; and the order in which
	// they are added, by to.
	byFrom := make([]span, n)
	for i, a := range admits {
		byFrom[i] = spanOf(a)
	}
	slices.SortFunc(byFrom, func(a, b span) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	froms := make([]int64, n)
	for i, s := range byFrom {
		froms[i] = s.from
	}
	added := make([]int, n) // ranks by from, in order of to
	for i := range added {
		added[i] = i
	}
	slices.SortStableFunc(added, func(i, j int) int {
		return cmp.Or(cmp.Compare(byFrom[i].to, byFrom[j].to), cmp.Compare(byFrom[i].toRank, byFrom[j].toRank))
	})
	order := make([]int, len(answers))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := spanOf(answers[i]), spanOf(answers[j])
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.fromRank, b.fromRank))
	})

	g := gcdOf(l.Rate, l.Window)
	w, rt := l.Window/g, l.Rate/g
	// Bucket: at the rank of the first admit sent at v, C(v)·w + rt·v,
	// where C counts the admits added so far sent at or after v; ranks are
	// ascending by from, so adding an admit sent at v raises every rank
	// whose from ≤ v: the prefix up to its group's end. The tree adds to a
	// suffix, so it is kept over reversed ranks.
	var tree *maxTree
	if shape == bucketShape && n > 0 {
		tree = newMaxTree(n)
	}
	counts := newFenwick(max(n, 1))
	inserted := 0
	next := 0
	for _, ai := range order {
		r := answers[ai]
		sr := spanOf(r)
		for ; next < n && before(byFrom[added[next]], sr); next++ {
			k := added[next]
			counts.add(k)
			inserted++
			if tree != nil {
				// Ranks with from ≤ froms[k] are those below the end of k's group.
				end, _ := slices.BinarySearch(froms, froms[k]+1) // first rank with from > froms[k]
				first, _ := slices.BinarySearch(froms, froms[k]) // k's group starts here
				tree.addFrom(n-end, w)                           // reversed: ranks ≤ end−1
				c := int64(inserted - counts.prefix(first-1))    // added, sent at or after froms[k]
				tree.set(n-1-first, c*w+rt*froms[k])
			}
		}
		if !r.Known.Has(record.FieldRemaining) || r.Remaining <= 0 {
			continue // Remaining 0 claims nothing: the admits alone are the judge of admits' business
		}
		own := int64(0)
		if r.Allowed {
			own = 1
		}
		claimed := own + r.Remaining
		var why string
		switch shape {
		case bucketShape:
			// x = the answer's own Sent, with no admit counted.
			best, x, c := rt*sr.from, sr.from, int64(0)
			if tree != nil && inserted > 0 {
				if v, at := tree.max(); v > best {
					first := n - 1 - at
					best, x = v, froms[first]
					c = int64(inserted - counts.prefix(first-1))
				}
			}
			if best+claimed*w > l.Burst*w+rt*sr.to {
				allowed := l.Burst + l.Rate*(sr.to-x)/l.Window
				why = fmt.Sprintf("key %s answered Remaining %d%s after %d admits certainly decided from +%s on, but at most %d + %d·%s/%s = %d are promised from then to +%s (%d + %d + %d > %d)",
					r.Key, r.Remaining, ownText(own), c, algos.FormatTime(x), l.Burst, l.Rate, record.FormatDuration(sr.to-x), algos.FormatMicros(l.Window), allowed,
					algos.FormatTime(sr.to), c, own, r.Remaining, allowed)
			}
		case slidingShape:
			below, _ := slices.BinarySearch(froms, sr.to-l.Window+1) // ranks with from ≤ to − W
			c := int64(inserted - countAddedBelow(counts, below))
			if c+claimed > l.Rate {
				why = fmt.Sprintf("key %s answered Remaining %d%s after %d admits certainly decided within the %s before it, but at most %d in any %s are promised (%d + %d + %d > %d)",
					r.Key, r.Remaining, ownText(own), c, algos.FormatMicros(l.Window), l.Rate, algos.FormatMicros(l.Window), c, own, r.Remaining, l.Rate)
			}
		}
		if why != "" {
			rv.note(r, func() string { return why })
		}
	}
	return rv
}

// countAddedBelow is how many added admits have a rank below i.
func countAddedBelow(f fenwick, i int) int { return f.prefix(i - 1) }

func ownText(own int64) string {
	if own == 1 {
		return " on an admit"
	}
	return " on a denial"
}

// judgeAdmitAfterZero finds, among one limiter's records (all[k], any
// order), every admit ranked after an answer of Remaining 0 in the same
// µs (record.SeenOrder: the simulator's records, a live run ordered by
// MONITOR): no time passed that could have refilled it, so the Remaining
// was too high, whatever the promise. Records without a rank say nothing
// of the order within their µs and are passed over.
func judgeAdmitAfterZero(records []record.Record) ruleVerdict {
	var rv ruleVerdict
	var ranked []record.Record
	for _, r := range records {
		if r.Err == nil && r.Seen.Has(record.SeenOrder|record.SeenDecided) {
			ranked = append(ranked, r)
		}
	}
	slices.SortFunc(ranked, func(a, b record.Record) int { return decidedAtOf(a).compare(decidedAtOf(b)) })
	var zero *record.Record // the first answer of Remaining 0 in the current µs
	for i := range ranked {
		r := &ranked[i]
		if zero != nil && zero.Decided != r.Decided {
			zero = nil
		}
		switch {
		case zero != nil && r.Allowed:
			rv.note(*r, func() string {
				return fmt.Sprintf("key %s admitted a request at +%s (rank %d), in the µs it had answered Remaining 0 (rank %d): no time passed to refill it",
					r.Key, algos.FormatTime(r.Decided), r.Order, zero.Order)
			})
		case zero == nil && r.Known.Has(record.FieldRemaining) && r.Remaining == 0:
			zero = r
		}
	}
	return rv
}
