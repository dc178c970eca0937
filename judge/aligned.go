package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// ALIGNED WINDOWS, SEEN. A promise of at most L admits in each aligned
// window [k·W, (k+1)·W) says nothing a client can hold it to from spans
// alone: a window may have begun or ended anywhere in a span, so the most
// the records certainly show is 2L in a span shorter than W. When every
// decision of the run was seen (record.SeenDecided: the simulator's
// records), each admit lies in exactly one window of the records' clock
// (their true time, which for the simulator is the clock its limiters
// align their windows on; a file of records judged this way must be in
// the clock the limiter aligns on), and the promise is judged as it is
// stated:
//
//   - admits: at most L decided in each aligned window; every admit past
//     the L-th of a window is one too many (breach.OverAdmission);
//   - Remaining: an answer's Remaining, its own admit and the admits
//     decided in its window before it must fit L (breach.RemainingTooHigh).
//     An admit counts when decided before the answer: at an earlier µs,
//     or in the answer's µs ahead of it by their ranks when both records
//     carry one (record.SeenOrder); two decisions of one µs without ranks
//     are never certainly ordered.
//
// These are the hunt's rules for the fixed window (judge.Simulation's,
// which place the admits at their true decision times), so the judge of
// records and the hunt agree on the same run's records.

// alignedSeen reports whether Records judges promise's windows by
// judgeAlignedSeen: an aligned window promise, and every decided record
// seen at its decision.
func alignedSeen(records []record.Record, promise algos.Promise, shape promiseShape) bool {
	if s, _ := promise.Shape(); shape != windowsShape || s != algos.AlignedWindowShape {
		return false
	}
	for _, r := range records {
		if r.Err == nil && !r.Seen.Has(record.SeenDecided) {
			return false
		}
	}
	return true
}

// windowOf is the aligned window of l that holds t, as [from, to).
func windowOf(t int64, l algos.Limit) (from, to int64) {
	from = algos.AlignedWindowStart(t, l.Window)
	return from, from + l.Window
}

// decidedAt is a decision's place in time: its µs, then its rank
// (record.Record.Order) within that µs, unranked last.
type decidedAt struct{ at, rank int64 }

func decidedAtOf(r record.Record) decidedAt {
	if r.Seen.Has(record.SeenOrder) {
		return decidedAt{r.Decided, r.Order}
	}
	return decidedAt{r.Decided, math.MaxInt64}
}

func (d decidedAt) compare(e decidedAt) int {
	return cmp.Or(cmp.Compare(d.at, e.at), cmp.Compare(d.rank, e.rank))
}

// decidedTimes is the admits' places in time, in order.
func decidedTimes(admits []record.Record) []decidedAt {
	at := make([]decidedAt, len(admits))
	for i, a := range admits {
		at[i] = decidedAtOf(a)
	}
	slices.SortFunc(at, decidedAt.compare)
	return at
}

// certainlyBefore is how many of at (in order) were certainly decided
// before r: at an earlier µs, or in r's µs with a lower rank when r has
// one.
func certainlyBefore(at []decidedAt, r record.Record) int {
	limit := decidedAt{r.Decided, math.MinInt64} // none of r's µs
	if r.Seen.Has(record.SeenOrder) {
		limit.rank = r.Order
	}
	n, _ := slices.BinarySearchFunc(at, limit, decidedAt.compare)
	return n
}

// judgeAlignedSeen judges one key's admits, each seen at its decision,
// against at most l.Rate in each aligned window of l.Window: the most in
// one window, the admits beyond l.Rate summed over the windows, and the
// first admit past the promise, in its window's words.
func judgeAlignedSeen(admits []record.Record, l algos.Limit) keyVerdict {
	kv := keyVerdict{allowed: l.Rate}
	byDecided := slices.Clone(admits)
	slices.SortStableFunc(byDecided, func(a, b record.Record) int { return cmp.Compare(a.Decided, b.Decided) })
	for i := 0; i < len(byDecided); {
		from, to := windowOf(byDecided[i].Decided, l)
		j := i
		for j < len(byDecided) && byDecided[j].Decided < to {
			j++
		}
		n := int64(j - i)
		kv.most = max(kv.most, n)
		if n > l.Rate {
			kv.excess += n - l.Rate
			if kv.why == "" {
				kv.last = byDecided[i+int(l.Rate)]
				kv.why = fmt.Sprintf("%d admits of key %s were decided in the aligned window [%s, %s), but at most %d are promised",
					n, kv.last.Key, algos.FormatTime(from), algos.FormatTime(to), l.Rate)
			}
		}
		i = j
	}
	return kv
}

// judgeRemainingAlignedSeen judges the Remaining of every answer of one
// key that states it (answers) against the admits decided before it in its
// aligned window (admits), every record seen at its decision.
func judgeRemainingAlignedSeen(answers, admits []record.Record, l algos.Limit) ruleVerdict {
	var rv ruleVerdict
	at := decidedTimes(admits)
	for _, r := range answers {
		if !r.Known.Has(record.FieldRemaining) || r.Remaining <= 0 {
			continue // Remaining 0 claims nothing the admits do not
		}
		from, to := windowOf(r.Decided, l)
		first, _ := slices.BinarySearchFunc(at, decidedAt{from, math.MinInt64}, decidedAt.compare)
		c := int64(certainlyBefore(at, r) - first)
		own := int64(0)
		if r.Allowed {
			own = 1
		}
		if c+own+r.Remaining > l.Rate {
			rv.note(r, func() string {
				return fmt.Sprintf("key %s answered Remaining %d%s after %d admits decided before it in the aligned window [%s, %s), but at most %d are promised there (%d + %d + %d > %d)",
					r.Key, r.Remaining, ownText(own), c, algos.FormatTime(from), algos.FormatTime(to), l.Rate, c, own, r.Remaining, l.Rate)
			})
		}
	}
	return rv
}
