package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// RESETS. An answer's Reset says when the key, left alone, is idle
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
// not early), and the judge assumes so. A record does not say the unit,
// so the judge takes the coarsest one the value allows (the largest power
// of ten, at most a second, that divides it), which can only excuse more.
// So a stated wait v of unit u is, against the true wait w from the
// decision (TrueWait):
//
//   - a delay (record.Answer.Delta: delay-seconds, milliseconds): w in
//     (v − u, v];
//   - possibly an instant (an epoch, an HTTP-date; a record that does not
//     say): the service rounded the instant up and the parser the wait to
//     it, read from the answer's Date or its arrival (the parser assumes
//     the client's clock agrees with the server's when there is no Date),
//     so v may be up to 2u late; and, read once the answer had come, up to
//     the answer's flight (to − from of the record's span) early: w in
//     (v − 2u, v + flight]. No instant is read finer than a second.
//
// In every case the instant the answer names, its span's end plus v, is
// no earlier than the true one: decision + w ≤ to + v.
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
// spread, breach.ResetTooShort holds an idle key to its first request only.
//
// # The rules
//
//   - breach.ResetBeforeRetryAfter: the Reset is shorter than the Retry-After of
//     the same answer (both stated). The true waits of an honest limiter
//     keep Retry-After ≤ Reset (a retry is admitted by the time the key
//     is idle, algos.AnswerBounds), so only a Retry-After whose true wait
//     is certainly longer than the Reset's can be is convicted: no
//     rounding of two honest waits can make it.
//   - breach.ResetPastIdle: the Reset is later than any key of the promise needs
//     to become idle, left alone: ⌈B·W/L⌉ for a bucket (an empty bucket
//     refills in that), W for a sliding window (the latest admit leaves
//     it) and for anchored windows (the window ends), and 2W for aligned
//     windows, whose correct sliding counter counts the previous window in
//     its estimate and so is idle only when the next one ends (a fixed
//     window that names the edge after next cannot be told from it, and is
//     not caught). Only a true wait certainly past bound + spread is
//     convicted. A
//     limiter stricter than its promise (algos.Algorithm.Conservative) may
//     honestly be idle later still; of algos' limiters only the sliding
//     counter is, and the bounds cover it. A promise that is not one of
//     the four is not judged.
//   - breach.ResetTooShort: a key nothing else touched, asked from the instant a
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

// TrueWait bounds the true wait, from r's decision, behind the wait r
// states for field (record.FieldReset or record.FieldRetryAfter): it lies
// in (after, by], and is never negative. A wait r marks as a delay (record.Answer.Delta) was
// rounded up by less than its unit; any other may also have been an
// instant the parser read, later by up to twice its unit and earlier by
// up to the answer's flight (the comment at the top of reset.go says why).
// It assumes an honest service rounds its waits up; for a field r does not
// state it is (0, 0).
func TrueWait(r record.Record, field record.Fields) (after, by int64) {
	var v int64
	switch {
	case field == record.FieldReset && r.Known.Has(field):
		v = r.Reset
	case field == record.FieldRetryAfter && r.Known.Has(field):
		v = r.RetryAfter
	default:
		return 0, 0
	}
	u := resolution(v)
	after, by = v-u, v
	if !r.Delta.Has(field) && u == algos.Second { // no instant is read finer than a second
		from, to := r.Span()
		after, by = v-2*u, v+(to-from)
	}
	if after <= 0 {
		after = -1 // services floor a wait at one unit (Retry-After 1 for a wait of 0): it claims no more than w ≥ 0
	}
	return after, by
}

// resetBeforeRetryAfter says why r's Reset is certainly shorter than its
// Retry-After, or "".
func resetBeforeRetryAfter(r record.Record) string {
	if r.Err != nil || !r.Known.Has(record.FieldReset|record.FieldRetryAfter) || r.Reset < 0 || r.RetryAfter < 0 {
		return "" // a negative wait is a bad answer
	}
	retryAfter, _ := TrueWait(r, record.FieldRetryAfter)
	_, resetBy := TrueWait(r, record.FieldReset)
	if retryAfter < resetBy {
		return ""
	}
	return fmt.Sprintf("key %s was told Retry-After %s but Reset %s: whatever the rounding of honest waits, the retry comes more than %s after the decision, the key is idle by %s",
		r.Key, record.FormatDuration(r.RetryAfter), record.FormatDuration(r.Reset), record.FormatDuration(retryAfter), record.FormatDuration(resetBy))
}

// idleBound is the longest a key of the promise's shape takes to become
// idle, left alone (algos.Promise.LongestIdle), and what it is in words;
// 0 for a shape not judged.
func idleBound(shape promiseShape, promise algos.Promise) (int64, string) {
	if shape == unknownShape {
		return 0, ""
	}
	idle, why, _ := promise.LongestIdle()
	return idle, why
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
	after, _ := TrueWait(r, record.FieldReset)
	if r.Err != nil || !r.Known.Has(record.FieldReset) || bound <= 0 || after-spread < bound {
		return ""
	}
	clocks := ""
	if spread > 0 {
		clocks = fmt.Sprintf(", and the clocks it read were %s apart", record.FormatDuration(spread))
	}
	return fmt.Sprintf("key %s was told Reset %s, more than %s whatever its rounding, but a key left alone is idle by %s (%s)%s",
		r.Key, record.FormatDuration(r.Reset), record.FormatDuration(after), record.FormatDuration(bound), words, clocks)
}

// judgeResetDenied judges one key's records (errors included) by the
// breach.ResetTooShort rule, an idle key granting n, the clocks the limiter read
// spread apart by spread.
func judgeResetDenied(recs []record.Record, n, spread int64) ruleVerdict {
	var rv ruleVerdict
	if spread > 0 {
		n = 1
	}
	s := spansOf(recs)
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
				rv.note(denial, func() string {
					return fmt.Sprintf("key %s was answered by +%s with Reset %s, so idle again by +%s; its next %d requests, nothing else of the key between, came from +%s to +%s, and an idle key grants the first %d decided, but %d %s denied",
						by.Key, algos.FormatTime(ends[c]), record.FormatDuration(by.Reset), algos.FormatTime(idle), k,
						algos.FormatTime(s[hi].from), algos.FormatTime(ends[next]), min(k, n), d, map[bool]string{true: "was", false: "were"}[d == 1])
				})
				break
			}
			if k >= n {
				break // every larger count passes too: each request adds at most one denial
			}
		}
	}
	return rv
}
