package live

import (
	"math"
	"time"

	"github.com/overshoot-go/overshoot/record"
)

// Client is a closed-loop client on one key, in real time: it sends its
// next request only when the answer to its last has come back, at a time
// it chooses from that answer. Drive calls Next once with last nil, then
// once per answer with its record; Next returns when to send next, in µs
// since the drive started (a time already past means at once), and false
// when the client is done. Drive gives each key a client of its own
// (Load.Loop makes them).
type Client interface {
	Next(last *record.Record) (send int64, more bool)
}

// RetryAfter is the greedy client that honours Retry-After, as the
// simulator's retry-after client does: it sends Gap after its last request
// once an admit comes back, and after a denial exactly when its
// Retry-After says (from the answer's arrival; at once when the answer
// states none), never sooner than Gap after its last request. Behind an
// honest limiter that owns the key it gets what the limit allows, and
// every retry at a Retry-After is admitted: a denied one is the judge's
// breach.RetryDenied.
type RetryAfter struct {
	// Gap is the least time between two of its requests (at least 1 µs).
	Gap time.Duration
}

// Next is the time of the client's next request: see RetryAfter.
func (c RetryAfter) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return 0, true
	}
	next := last.Answered
	if last.Err == nil && !last.Allowed && last.Known.Has(record.FieldRetryAfter) {
		next += max(last.RetryAfter, 0)
	}
	return max(next, last.Sent+max(c.Gap.Microseconds(), 1)), true
}

// AtReset is RetryAfter's twin for Reset: it sends Gap after its last
// request until one is denied (or fails), then waits the Reset that answer
// named, from the answer's arrival (Gap when it states none), and starts
// over. Each run of requests after a wait is the first a key idle again
// is asked, nothing else of the key between: behind an honest limiter
// that owns the key the first burst's worth of each run is admitted, and
// a denied one is the judge's breach.ResetTooShort.
type AtReset struct {
	// Gap is the least time between two of its requests (at least 1 µs).
	Gap time.Duration
}

// Next is the time of the client's next request: see AtReset.
func (c AtReset) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return 0, true
	}
	gap := max(c.Gap.Microseconds(), 1)
	next := last.Sent + gap
	if last.Err != nil || !last.Allowed {
		wait := int64(0)
		if last.Err == nil && last.Known.Has(record.FieldReset) {
			wait = min(max(last.Reset, 0), math.MaxInt64-last.Answered)
		}
		next = max(next, last.Answered+wait)
	}
	return next, true
}
