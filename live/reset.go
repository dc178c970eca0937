package live

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// RESETS, live. An answer's Reset says when the key, left alone, is idle
// again: a whole burst is granted from then on. Three rules hold a
// limiter to it, each sound under the client's timing uncertainty and
// under the rounding of the header conventions.
//
// # Rounding
//
// The judge reads waits the client was told, and services round them: a
// Reset in whole seconds, in milliseconds or in tenths of a second, a
// Retry-After in whole seconds, an epoch or an HTTP-date to the second.
// An honest service rounds a wait up (so that a client that waits it is
// not early), and the judge assumes so. A record does not say its unit,
// so the judge takes the coarsest one the value allows (resolution: the
// largest power of ten, at most a second, that divides it), which can
// only excuse more. A wait in whole seconds may moreover have been an
// absolute time (an epoch, an HTTP-date) the parser turned into a wait
// from the answer's arrival on the client's clock, rounded up again: the
// judge assumes the service's clock agrees with the client's, as it must
// for such a header to mean anything. So a stated wait v of unit u is,
// against the true wait w measured from the decision:
//
//   - at most u later (v < w + u), or 2u when u is a second (the service
//     rounded the time up, the parser the wait to it): lateBy;
//   - never earlier for a wait of a sub-second unit (v ≥ w), and at most
//     the answer's flight earlier for whole seconds (an absolute time read
//     when the answer came, the decision somewhere before: v ≥ w − (to −
//     from) of the record's span): earlyBy.
//
// And in either case the instant the answer names, its span's end plus v,
// is no earlier than the true one: decision + w ≤ to + v.
//
// # Clocks
//
// A limiter measures its waits on the clock it reads. A live client
// cannot see it, and judges on its own: a deployment whose nodes' clocks
// disagree answers waits that are wrong on the client's clock, and is
// judged so. A record whose producer saw the clock the limiter read
// (record.SeenTold: the simulator's) shows how far each node's clock was
// from true time; the judge then allows, on each key, the spread of those
// offsets (a wait measured on one node's clock is late, on the clock of
// the node that decides next, by at most that much). Behind clocks that
// disagree the decisions of one burst read times that go back and forth,
// and a node behind finds less room than its neighbours left it: with a
// spread, ResetDenied holds an idle key to its first request only.
//
// # The rules
//
//   - ResetBeforeRetryAfter: the Reset is shorter than the Retry-After of
//     the same answer (both stated). The true waits of an honest limiter
//     keep Retry-After ≤ Reset (a retry is admitted by the time the key
//     is idle, algos.AnswerBounds), so only RA − lateBy(RA) ≥ R +
//     earlyBy(R) is certain: no rounding of two honest waits can make it.
//   - ResetPastIdle: the Reset is later than any key of the promise needs
//     to become idle, left alone: ⌈B·W/L⌉ for a bucket (an empty bucket
//     refills in that), W for a sliding window (the latest admit leaves
//     it) and for anchored windows (the window ends), and 2W for aligned
//     windows, whose correct sliding counter counts the previous window in
//     its estimate and so is idle only when the next one ends (a fixed
//     window that names the edge after next cannot be told from it, and is
//     not caught). Only R ≥ bound + lateBy(R) + spread is certain. A
//     limiter stricter than its promise (algos.Algorithm.Conservative) may
//     honestly be idle later still; of algos' limiters only the sliding
//     counter is, and the bounds cover it. A promise that is not one of
//     the four is not judged.
//   - ResetDenied: a key nothing else touched, asked from the instant a
//     Reset named, denied what a key idle again must grant. The key's
//     records are split into clusters (sorted by Sent, a new cluster where
//     a record is sent after every earlier one was answered: every
//     decision of a cluster certainly comes after every decision of the
//     clusters before it). The last decision of a cluster is one of its
//     records whose span reaches the latest Sent of the cluster; when every
//     such record is a decision with a stated Reset, the key is idle again
//     by T, the latest of their ends plus Reset plus the clocks' spread
//     (the instant the last decision named is no earlier than the true
//     one). If the next cluster is sent from T on, the requests of it and
//     of the clusters after it, up to any cluster boundary, are the key's
//     first requests decided after idle, nothing else between. An idle key
//     grants n of them, whatever their spacing: n = B for a bucket, L for
//     windows, 1 for a promise the judge does not know. That is what an
//     idle key grants at one instant (the ResetReachesIdle property every
//     limiter is held to), and a refill or a window's end only adds room:
//     each of algos' limiters admits the first n from idle however they
//     are spread. So with k such requests, more than max(0, k − n) denials
//     is certain: the first min(k, n) decided, which are among them, were
//     all admitted. A record that failed is counted among the k (it may
//     have been decided, and admitted) but never as a denial; a request of
//     Cost above 1 ends the count. A deployment that splits a key's quota
//     over its nodes grants less than n from idle, and on a client's clock
//     is caught so: its Reset names an idle key that is not the promise's.
//
// Decisions at one instant (the simulator's) are never ordered among
// themselves: every order is considered.

// resolution is the coarsest unit a stated wait v (µs) can have been
// rounded to: the largest power of ten, at most a second, that divides it.
func resolution(v int64) int64 {
	u := algos.Second
	for u > 1 && v%u != 0 {
		u /= 10
	}
	return u
}

// lateBy is how much later than the true wait a stated wait v can be.
func lateBy(v int64) int64 {
	u := resolution(v)
	if u == algos.Second {
		return 2 * u // an absolute time rounded up, and the wait to it
	}
	return u
}

// earlyBy is how much earlier than the true wait a stated wait v of r can
// be: none for a sub-second unit, the answer's flight for whole seconds.
func earlyBy(v int64, r record.Record) int64 {
	if resolution(v) < algos.Second {
		return 0
	}
	from, to := r.Span()
	return to - from
}

// resetBeforeRetryAfter says why r's Reset is certainly shorter than its
// Retry-After, or "".
func resetBeforeRetryAfter(r record.Record) string {
	if r.Err != nil || !r.Known.Has(record.FieldReset|record.FieldRetryAfter) || r.Reset < 0 || r.RetryAfter < 0 {
		return "" // a negative wait is a bad answer
	}
	if r.RetryAfter-lateBy(r.RetryAfter) < r.Reset+earlyBy(r.Reset, r) {
		return ""
	}
	return fmt.Sprintf("key %s was told Retry-After %s but Reset %s: no rounding of honest waits (Retry-After up to %s late, Reset up to %s early) puts the retry after the key is idle again",
		r.Key, record.FormatDuration(r.RetryAfter), record.FormatDuration(r.Reset), record.FormatDuration(lateBy(r.RetryAfter)), record.FormatDuration(earlyBy(r.Reset, r)))
}

// idleBound is the longest a key of the promise's shape takes to become
// idle, left alone (see the comment at the top), and what it is in words;
// 0 for a shape not judged.
func idleBound(shape promiseShape, promise algos.Promise, l algos.Limit) (int64, string) {
	switch shape {
	case bucketShape:
		b := (l.Burst*l.Unit + l.Refill - 1) / l.Refill
		return b, fmt.Sprintf("an empty bucket of %d refills in %s", l.Burst, record.FormatDuration(b))
	case slidingShape:
		return l.Window, fmt.Sprintf("the latest admit leaves the window in %s", algos.FormatMicros(l.Window))
	case windowsShape:
		if s, _ := promise.Shape(); s == algos.AnchoredWindowShape {
			return l.Window, fmt.Sprintf("a window ends within %s", algos.FormatMicros(l.Window))
		}
		return 2 * l.Window, fmt.Sprintf("the next aligned window ends within %s", algos.FormatMicros(2*l.Window))
	}
	return 0, ""
}

// clockSpread is how far apart the clocks the limiter read for recs were,
// as far as their producer saw them (record.SeenTold): the largest
// offset from true time less the smallest; 0 when none was seen.
func clockSpread(recs []record.Record) int64 {
	lo, hi, seen := int64(0), int64(0), false
	for _, r := range recs {
		if !r.Seen.Has(record.SeenTold | record.SeenDecided) {
			continue
		}
		off := r.Told - r.Decided
		if !seen {
			lo, hi, seen = off, off, true
		}
		lo, hi = min(lo, off), max(hi, off)
	}
	return hi - lo
}

// resetPastIdle says why r's Reset is certainly later than bound, with
// the clocks spread apart, or "".
func resetPastIdle(r record.Record, bound int64, words string, spread int64) string {
	if r.Err != nil || !r.Known.Has(record.FieldReset) || bound <= 0 || r.Reset-lateBy(r.Reset)-spread < bound {
		return ""
	}
	clocks := ""
	if spread > 0 {
		clocks = fmt.Sprintf(", and the clocks it read were %s apart", record.FormatDuration(spread))
	}
	return fmt.Sprintf("key %s was told Reset %s, but a key left alone is idle by %s (%s), rounding makes a Reset at most %s late%s",
		r.Key, record.FormatDuration(r.Reset), record.FormatDuration(bound), words, record.FormatDuration(lateBy(r.Reset)), clocks)
}

// resetVerdict is one key's Resets held to what follows them.
type resetVerdict struct {
	count int64         // the Resets disproved
	first record.Record // the earliest sent denial that disproves one
	why   string
}

// judgeResetDenied judges one key's records (errors included) by the
// ResetDenied rule, an idle key granting n, the clocks the limiter read
// spread apart by spread.
func judgeResetDenied(recs []record.Record, n, spread int64) resetVerdict {
	var rv resetVerdict
	if spread > 0 {
		n = 1
	}
	type spanned struct {
		r        record.Record
		from, to int64
	}
	s := make([]spanned, len(recs))
	for i, r := range recs {
		f, t := r.Span()
		s[i] = spanned{r, f, t}
	}
	slices.SortStableFunc(s, func(a, b spanned) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	// starts[c] is the first record of cluster c; ends[c] its latest end.
	var starts []int
	var ends []int64
	for i, x := range s {
		if i == 0 || x.from > ends[len(ends)-1] {
			starts, ends = append(starts, i), append(ends, x.to)
		} else {
			ends[len(ends)-1] = max(ends[len(ends)-1], x.to)
		}
	}
	starts = append(starts, len(s))
	clusters := len(ends)
	for c := 0; c+1 < clusters; c++ {
		lo, hi := starts[c], starts[c+1]
		lastFrom := s[hi-1].from // the latest Sent of the cluster
		idle, claimed, found := int64(0), true, false
		var by record.Record
		for _, x := range s[lo:hi] {
			if x.to < lastFrom {
				continue // decided before another of the cluster: not the last
			}
			if x.r.Err != nil || !x.r.Known.Has(record.FieldReset) || x.r.Reset < 0 || x.r.Reset > math.MaxInt64-x.to-spread {
				claimed = false
				break
			}
			if t := x.to + x.r.Reset + spread; !found || t >= idle {
				idle, by, found = t, x.r, true
			}
		}
		if !claimed || s[hi].from < idle {
			continue
		}
		// The clusters from c+1 on, one at a time: k requests, d denials.
		var k, d int64
		var denial record.Record
		for next := c + 1; next < clusters; next++ {
			costly := false
			for _, x := range s[starts[next]:starts[next+1]] {
				if x.r.Cost > 1 {
					costly = true
					break
				}
				k++
				if x.r.Err == nil && !x.r.Allowed {
					d++
					if d == 1 || x.r.Sent < denial.Sent {
						denial = x.r
					}
				}
			}
			if costly {
				break
			}
			if d > max(0, k-n) {
				rv.count++
				if rv.count == 1 || denial.Sent < rv.first.Sent {
					rv.first = denial
					rv.why = fmt.Sprintf("key %s was answered by +%s with Reset %s, so idle again by +%s; its next %d requests, nothing else of the key between, came from +%s to +%s, and an idle key grants the first %d decided, but %d were denied",
						by.Key, algos.FormatTime(ends[c]), record.FormatDuration(by.Reset), algos.FormatTime(idle), k,
						algos.FormatTime(s[hi].from), algos.FormatTime(ends[next]), min(k, n), d)
				}
				break
			}
			if k >= n {
				break // every larger count passes too: each request adds at most one denial
			}
		}
	}
	return rv
}
