package traffic

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/overshoot-go/overshoot/record"
)

// perSecond is one second in µs, the unit of every time here.
const perSecond = 1_000_000

// MaxTime is the latest time, in µs, a Trace may hold: the first µs of the
// year 10000 as Unix time. A "timestamp in seconds" beyond it is almost
// surely in milliseconds or nanoseconds, so the readers reject it rather
// than plan capacity for the year 55000. Service times are bounded by it too.
const MaxTime int64 = 253_402_300_800 * perSecond

// MaxCost is the largest cost of one request: 2^53, so that a cost written
// as a JSON number reads back exactly in any language that reads doubles.
const MaxCost int64 = 1 << 53

// TraceRequest is one request of a Trace: what a recorded request was
// (when, for which key, its cost and how long it held a slot). Played
// through the simulator it becomes a record.Request (Trace.Model), which
// carries only its key and time.
type TraceRequest struct {
	// Sent is when the request is sent, in µs. It is absolute: a recorded
	// trace keeps its Unix-epoch time (1700000000.000001 s is
	// 1_700_000_000_000_001), because a limiter's windows are aligned to
	// the epoch and moving a trace by anything that is not a whole number
	// of windows changes which window each request falls in.
	Sent int64
	// Key is the request's key, an index into Trace.Keys.
	Key int
	// Cost is how many units the request spends, at least 1.
	Cost int64
	// Service is how long, in µs, the request holds a slot once admitted
	// (for a concurrency limit); 0 means unknown.
	Service int64
}

// Trace is a list of requests and the names of their keys.
//
// A valid Trace (Validate) has unique, well-formed key names, every Key in
// range, and its Requests sorted by Sent; equal times keep the order they were
// generated or read in. Every Trace this package returns is also canonical:
// Keys lists exactly the keys that are used, in the order of their first
// request. That is what makes reading a written trace give back the
// identical Trace (see WriteCSV).
type Trace struct {
	Keys     []string
	Requests []TraceRequest
}

// Model is the trace as the simulator's traffic: Key as is, Sent as is and
// Node 0. An ideal run without closed-loop clients (capacity's) takes Sent
// up to algos.MaxTime, Unix-epoch times included; every other run of the
// simulator only up to algos.MaxTime/8 (about 12.6 years), so a trace at
// epoch times must be moved first, by whole windows: see Rebase. The
// simulator keeps at most record.MaxKeys keys.
func (t Trace) Model() []record.Request {
	out := make([]record.Request, len(t.Requests))
	for i, r := range t.Requests {
		out[i] = record.Request{Key: r.Key, Sent: r.Sent}
	}
	return out
}

// Span is the time from the first request to the last, in µs; 0 for fewer
// than two requests. A trace that is Span long and holds n requests has a
// mean rate of (n-1)/Span per µs between its first and last request.
func (t Trace) Span() int64 {
	if len(t.Requests) < 2 {
		return 0
	}
	return t.Requests[len(t.Requests)-1].Sent - t.Requests[0].Sent
}

// Rebase returns t moved earlier by the largest whole number of periods
// that leaves its first request at or after 0, and the amount it moved, in
// µs. Every window whose length divides period keeps its edges where they
// were relative to the requests, so a limiter sees the same windows: with a
// period of a day, second, minute and hour windows all stay aligned. Use it
// to bring an epoch-time trace within the simulator's range (Model).
func (t Trace) Rebase(period int64) (Trace, int64, error) {
	if period <= 0 {
		return Trace{}, 0, fmt.Errorf("traffic: rebase period of %d µs; it must be positive", period)
	}
	if len(t.Requests) == 0 {
		return t, 0, nil
	}
	if t.Requests[0].Sent < 0 {
		return Trace{}, 0, errors.New("traffic: rebase of a trace with a negative time")
	}
	shift := t.Requests[0].Sent / period * period
	out := Trace{Keys: t.Keys, Requests: slices.Clone(t.Requests)}
	for i := range out.Requests {
		out.Requests[i].Sent -= shift
	}
	return out, shift, nil
}

// Validate reports the first way t breaks the promises of Trace, or nil:
// a key name that is empty, not UTF-8, holds a control character, is
// longer than MaxKeyLen or appears twice; a Key out of range; a time outside [0, MaxTime]; a cost
// outside [1, MaxCost]; a service time outside [0, MaxTime]; requests out
// of time order. The writers write only a valid Trace.
func (t Trace) Validate() error {
	seen := make(map[string]int, len(t.Keys))
	for i, k := range t.Keys {
		if err := checkKey(k); err != nil {
			return fmt.Errorf("traffic: key %d (%q): %w", i, k, err)
		}
		if j, dup := seen[k]; dup {
			return fmt.Errorf("traffic: keys %d and %d are both named %q", j, i, k)
		}
		seen[k] = i
	}
	prev := int64(0)
	for i, r := range t.Requests {
		switch {
		case r.Key < 0 || r.Key >= len(t.Keys):
			return fmt.Errorf("traffic: request %d has key %d, outside the %d keys", i, r.Key, len(t.Keys))
		case r.Sent < 0 || r.Sent > MaxTime:
			return fmt.Errorf("traffic: request %d is at %d µs, outside [0, MaxTime]", i, r.Sent)
		case r.Cost < 1 || r.Cost > MaxCost:
			return fmt.Errorf("traffic: request %d costs %d, outside [1, MaxCost]", i, r.Cost)
		case r.Service < 0 || r.Service > MaxTime:
			return fmt.Errorf("traffic: request %d has a service time of %d µs, outside [0, MaxTime]", i, r.Service)
		case r.Sent < prev:
			return fmt.Errorf("traffic: request %d at %d µs comes after one at %d µs; requests must be sorted by time", i, r.Sent, prev)
		}
		prev = r.Sent
	}
	return nil
}

// Canonical returns a valid t in canonical form: requests stably sorted by
// Sent, Keys reduced to the keys used and numbered in the order of their first
// request. Each request keeps its key name. It is what reading a written t
// gives back.
func (t Trace) Canonical() Trace {
	reqs := slices.Clone(t.Requests)
	sortStable(reqs)
	return renumber(t.Keys, reqs)
}

// sortStable sorts requests by time, keeping the order of equal times.
func sortStable(reqs []TraceRequest) {
	slices.SortStableFunc(reqs, func(a, b TraceRequest) int {
		switch {
		case a.Sent < b.Sent:
			return -1
		case a.Sent > b.Sent:
			return 1
		}
		return 0
	})
}

// renumber numbers keys in the order of their first request in reqs, which
// it rewrites in place, and drops the keys no request uses.
func renumber(keys []string, reqs []TraceRequest) Trace {
	index := make([]int, len(keys))
	for i := range index {
		index[i] = -1
	}
	var out []string
	for i, r := range reqs {
		if index[r.Key] < 0 {
			index[r.Key] = len(out)
			out = append(out, keys[r.Key])
		}
		reqs[i].Key = index[r.Key]
	}
	return Trace{Keys: out, Requests: reqs}
}

// MaxKeyLen is the longest key name, in bytes: a key is an identifier
// (a user, a tenant, an address, a route), and a longer "key" is a broken
// file, which must not become a JSON line too long to read back.
const MaxKeyLen = 4096

// checkKey is the rule for a key name, the same for every source and
// format: non-empty UTF-8 without control characters, at most MaxKeyLen
// bytes. It is what lets a key survive CSV quoting and JSON escaping
// unchanged (a CSV reader turns a quoted "\r\n" into "\n"; a JSON decoder
// turns bad UTF-8 into U+FFFD).
func checkKey(k string) error {
	if k == "" {
		return ErrEmptyKey
	}
	if len(k) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrKey, len(k), MaxKeyLen)
	}
	if !utf8.ValidString(k) {
		return fmt.Errorf("%w: not valid UTF-8", ErrKey)
	}
	for _, c := range k {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: control character %U", ErrKey, c)
		}
	}
	return nil
}
