package judge

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// RETRIES. A denial's Retry-After is a promise to the client: wait
// that long and the request is admitted, if nothing else is decided on the
// key meanwhile. A client that owns its key and retries exactly then (the
// RetryAfter client) can hold the limiter to it from its records alone:
// the denial was decided by its Answered, so a retry sent at or after
// Answered + Retry-After is decided after the wait is over; and when no
// other record of the key could have been decided between the two (every
// earlier record answered before the denial was sent, every later one
// sent after the retry was answered), nothing else took the room. A denied
// retry is then certain to break the promise, whatever the network did.
// Records whose producer saw the decisions are read at those instants.

// EARLY RETRIES. A retry that comes before the wait is over may be denied,
// but, nothing else of the key decided between them, not told to wait
// longer than the denial said: a denial takes nothing, so the key's
// deadline cannot have moved. From the records it is certain only past
// the rounding of both waits (TrueWait) and the spread of the clocks the
// limiter read (clockSpread, as the Reset rules allow it): the retry was
// decided before the earliest the first deadline can be, and the deadline
// it was told is later than the latest the first can be. Both must reach
// one node: a deployment may keep a key's state on each node.

// judgeRetries judges one key's decided records (errors included: an error
// may still have been decided, so it keeps the key from being owned): the
// retries after the wait that were denied (denied), and the early retries
// told a later deadline (extended).
func judgeRetries(recs []record.Record) (denied, extended ruleVerdict) {
	if len(recs) < 2 {
		return denied, extended
	}
	s := spansOf(recs)
	slices.SortStableFunc(s, func(a, b spanned) int { return cmp.Compare(a.from, b.from) })
	spread := clockSpread(recs)
	// latest: the latest end of the spans before i.
	latest := int64(-1 << 62)
	for i := 0; i+1 < len(s); i++ {
		d, r := s[i], s[i+1]
		owned := latest <= d.from && d.to <= r.from && (i+2 >= len(s) || s[i+2].from >= r.to)
		latest = max(latest, d.to)
		if !owned || d.r.Err != nil || r.r.Err != nil || d.r.Allowed || r.r.Allowed || !d.r.Known.Has(record.FieldRetryAfter) || d.r.RetryAfter < 0 {
			continue
		}
		if r.from >= d.to+d.r.RetryAfter {
			denied.note(r.r, func() string {
				return fmt.Sprintf("key %s was denied by +%s with Retry-After %s; its next request, nothing else of the key between them, came at +%s, after the wait, and was denied too",
					r.r.Key, algos.FormatTime(d.to), record.FormatDuration(d.r.RetryAfter), algos.FormatTime(r.from))
			})
			continue
		}
		if !r.r.Known.Has(record.FieldRetryAfter) || r.r.RetryAfter < 0 || r.r.Node != d.r.Node {
			// A negative wait is a bad answer; and a node may keep a key's
			// state of its own (a quota split over the nodes), where the
			// next node's deadline owes nothing to this one's.
			continue
		}
		dAfter, dBy := TrueWait(d.r, record.FieldRetryAfter)
		rAfter, _ := TrueWait(r.r, record.FieldRetryAfter)
		if early, later := r.to+spread < d.from+dAfter, r.from+rAfter >= d.to+dBy+spread; early && later {
			extended.note(r.r, func() string {
				return fmt.Sprintf("key %s was denied by +%s until +%s at the latest (Retry-After %s); its next request, nothing else of the key between them, was decided early, by +%s, denied, and told to wait until +%s at the earliest (Retry-After %s)",
					r.r.Key, algos.FormatTime(d.to), algos.FormatTime(d.to+dBy), record.FormatDuration(d.r.RetryAfter),
					algos.FormatTime(r.to), algos.FormatTime(r.from+rAfter), record.FormatDuration(r.r.RetryAfter))
			})
		}
	}
	return denied, extended
}

// spanned is a record with the interval its decision lies in
// (record.Record.Span), kept beside it for the rules that sort by it.
type spanned struct {
	r        record.Record
	from, to int64
}

// spansOf is recs, each with its span, in the order given.
func spansOf(recs []record.Record) []spanned {
	s := make([]spanned, len(recs))
	for i, r := range recs {
		f, t := r.Span()
		s[i] = spanned{r, f, t}
	}
	return s
}
