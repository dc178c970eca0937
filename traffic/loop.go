package traffic

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// The closed-loop clients: each sends its next request only when the
// answer to its last one has arrived, at a time it takes from that answer,
// and never sooner than gap µs after its last request (a client is a
// program with a pace of its own; with no latency and a limiter that
// admits everything, "at once" would otherwise be forever at one instant).
// They are record.Clients, for model.Config.Loop, each on its own key: what
// to send next given an answer is theirs, and how a run plays them is the
// model's.
//
// A wait they are told is taken as a program takes it: one that is
// negative is none (they come back at once), and one that reaches past
// their end ends them (wait). Such answers are the judge's to report
// (package scenarios' BadAnswer), not a reason to stop a run.

// wait is a wait of d µs as a client takes it, at most most: none for a
// negative d, so that the time it comes back is never before the answer
// and never overflows.
func wait(d, most int64) int64 { return min(max(d, 0), most) }

// stated is the wait v of last's answer when the answer stated it (f in
// Known) and is a decision, else 0: a wait a live answer did not state
// (or a failed request) is no wait. The simulator's answers state every
// wait.
func stated(last *record.Record, f record.Fields, v int64) int64 {
	if last.Err != nil || !last.Known.Has(f) {
		return 0
	}
	return v
}

// loop is what every client here shares: it sends from start until end,
// paced by gap µs (at least 1: see above), and keeps the answers it is
// handed.
type loop struct {
	start, end, gap int64
	answers
}

// newLoop is the loop from start to end (at most algos.MaxTime, so that
// no wait added to an answer's time overflows) at pace gap.
func newLoop(start, end, gap int64) loop {
	return loop{start: start, end: min(end, algos.MaxTime), gap: max(1, gap)}
}

// next is the Next of a client whose own rule, given an answer, is after:
// the first request at start, then the answer kept and the time after
// takes from it, until end.
func (c *loop) next(last *record.Record, after func(last *record.Record) int64) (int64, bool) {
	if last == nil {
		return c.start, c.start < c.end
	}
	c.keep(last)
	next := after(last)
	return next, next < c.end
}

// RetryAfterClient is a greedy client that honours Retry-After: from start
// it sends, gap µs after its last request once an admit arrives, and
// exactly at the Retry-After after a denial (counted from when the answer
// arrived, and at least gap after its last request), until end. Behind an
// honest limiter on one node it gets exactly the limit; a Retry-After that
// is too short shows as denied retries, one that is too long as admits the
// limit would have allowed and the client never asked for.
func RetryAfterClient(start, end, gap int64) func() record.Client {
	return func() record.Client { return &retryAfter{newLoop(start, end, gap)} }
}

type retryAfter struct{ loop }

func (c *retryAfter) Next(last *record.Record) (int64, bool) { return c.next(last, c.after) }

func (c *retryAfter) after(last *record.Record) int64 {
	next := last.Answered
	if !last.Allowed {
		next += wait(stated(last, record.FieldRetryAfter, last.RetryAfter), c.end)
	}
	return max(next, last.Sent+c.gap)
}

// DrainIdleClient drains its key (it sends gap µs after each admitted
// request until one is denied), then idles for a part of the Reset that denial
// named (the µs until the key is idle again) plus 1 ms, and drains again,
// from start until end. The parts go 1/8, 2/8, ... 8/8 and round again, so
// a key that is forgotten before it is idle (a TTL too short) hands this
// client a fresh burst at one of them, where the limiter would give a part.
func DrainIdleClient(start, end, gap int64) func() record.Client {
	return func() record.Client { return &drainIdle{loop: newLoop(start, end, gap)} }
}

type drainIdle struct {
	loop
	cycle int64
}

func (c *drainIdle) Next(last *record.Record) (int64, bool) { return c.next(last, c.after) }

func (c *drainIdle) after(last *record.Record) int64 {
	if last.Allowed {
		return max(last.Answered, last.Sent+c.gap)
	}
	c.cycle++
	return last.Answered + wait(stated(last, record.FieldReset, last.Reset), c.end)*(1+(c.cycle-1)%8)/8 + 1000
}

// ResetBurstClient aims at the key's own reported reset: it sends one
// request, takes the Reset its answer names (the µs until the key is idle
// again), and bursts from margin µs before that instant until margin µs
// after it, each request gap µs after the last once admitted and after a
// denial at its Retry-After, but no later than the burst's end; then it waits until the
// key is idle (the last answer's Reset, plus 1 ms) and starts over, from
// start until end. A window that starts over at its reset (a fixed window,
// or one anchored at the key's first hit) admits it up to twice its limit
// within 2·margin.
func ResetBurstClient(start, end, margin, gap int64) func() record.Client {
	return func() record.Client { return &resetBurst{loop: newLoop(start, end, gap), margin: margin} }
}

type resetBurst struct {
	loop
	margin   int64
	until    int64 // the end of the current burst; 0 before the first
	bursting bool
}

func (c *resetBurst) Next(last *record.Record) (int64, bool) { return c.next(last, c.after) }

func (c *resetBurst) after(last *record.Record) int64 {
	reset, retryAfter := stated(last, record.FieldReset, last.Reset), stated(last, record.FieldRetryAfter, last.RetryAfter)
	next := last.Answered
	switch {
	case !c.bursting: // the probe's answer names the reset to aim at
		target := last.Answered + wait(reset, c.end)
		next = max(last.Answered, target-c.margin)
		c.until, c.bursting = target+c.margin, true
	case last.Answered < c.until && last.Allowed:
		next = max(next, last.Sent+c.gap)
	case last.Answered < c.until:
		next = max(next+min(wait(retryAfter, c.end), c.until-last.Answered), last.Sent+c.gap)
	default: // the burst is over: wait until the key is idle, then probe again
		next += wait(reset, c.end) + 1000
		c.bursting = false
	}
	return next
}

// AtResetClient is RetryAfterClient's twin for Reset: from start it sends
// gap µs after its last request until one is denied (or fails), then waits
// the Reset that answer named, from the answer's arrival (no wait when it
// named none), and starts over, until end. Each run of requests after a
// wait is the first a key idle again is asked, nothing else of the key
// between: behind an honest limiter that owns the key the first burst's
// worth of each run is admitted, and a denied one is a Reset too short.
func AtResetClient(start, end, gap int64) func() record.Client {
	return func() record.Client { return &atReset{newLoop(start, end, gap)} }
}

type atReset struct{ loop }

func (c *atReset) Next(last *record.Record) (int64, bool) { return c.next(last, c.after) }

func (c *atReset) after(last *record.Record) int64 {
	next := last.Sent + c.gap
	if last.Err != nil || !last.Allowed {
		next = max(next, last.Answered+wait(stated(last, record.FieldReset, last.Reset), c.end))
	}
	return next
}

// RetryAfterKeeper is a closed-loop client that can keep, itself, the
// Retry-After of every answer it is handed: every client this package's
// RetryAfterClient, DrainIdleClient, ResetBurstClient and AtResetClient make is one. A
// judge of the clients' retries reads those (package scenarios' hunt); kept
// by the client, they cost no wrapper's call per answer.
type RetryAfterKeeper interface {
	// KeepRetryAfters makes the client append the Retry-After of every
	// answer it is handed from now on to *dst, in order.
	KeepRetryAfters(dst *[]int64)
}

// answers is what a client above keeps of the answers it is handed: their
// Retry-Afters, in order, in *retryAfter when it is set.
type answers struct{ retryAfter *[]int64 }

var _ = []RetryAfterKeeper{(*retryAfter)(nil), (*drainIdle)(nil), (*resetBurst)(nil), (*atReset)(nil)}

func (a *answers) keep(last *record.Record) {
	if a.retryAfter != nil {
		*a.retryAfter = append(*a.retryAfter, last.Decision.RetryAfter)
	}
}

// KeepRetryAfters makes the client keep its answers' Retry-Afters in *dst
// (RetryAfterKeeper).
func (a *answers) KeepRetryAfters(dst *[]int64) { a.retryAfter = dst }

// LoopClients are the three closed-loop clients on keys from, from+1 and
// from+2, for a run of duration µs under l: the Retry-After client, the
// drain-then-idle client and the reset-burst client (bursting W/100 either
// side of each reset), each at most one request per W/(100·L), the
// boundary client's pace.
func LoopClients(from int, l algos.Limit, duration int64) []record.LoopClient {
	gap := max(1, l.Window/100/l.Rate)
	return []record.LoopClient{
		{Key: from, New: RetryAfterClient(0, duration, gap)},
		{Key: from + 1, New: DrainIdleClient(0, duration, gap)},
		{Key: from + 2, New: ResetBurstClient(0, duration, max(1, l.Window/100), gap)},
	}
}
