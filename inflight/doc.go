// Package inflight is the concurrency limiter, as a limiter under test: it
// caps how many units of a key are admitted and not yet completed, using
// each request's service time. Spec is its entry point.
//
// It promises no rate. What a cap of Burst in flight does imply, when
// every service time is at least 1 µs, is that at most Burst requests are
// admitted within any single µs; that is its promise (Promise), and the
// check judges nothing more.
//
// # The model
//
// Time is integer µs on the caller's clock, within ±algos.MaxTime. The cap
// is Limit.Burst units in flight per key; Rate and Window are not used.
//
//   - A request of cost c and service time s (limiter.Weight; a Service of
//     0 means the assumed service time Spec was given, and is an error if
//     that is 0 too) is admitted at now when the units in flight plus c are
//     at most Burst, whole or not at all. It then holds c units from now
//     until now + s, and releases them at exactly now + s: a request at
//     that instant finds them free.
//   - Denied, RetryAfter is the exact µs until enough units are released,
//     from the releases already scheduled, for c to fit; Reset the µs until
//     everything in flight has completed (0 when nothing is); Remaining is
//     Burst minus the units in flight after the decision. A request of
//     cost more than Burst could never be admitted, and is an error rather
//     than a denial with no honest RetryAfter.
//   - Each key keeps its admitted requests in a min-heap by end time. A
//     call at now first releases, for good, every request whose end is at
//     or before now; the requests still held are the units in flight.
//   - Skewed callers. A call may be told a time earlier than one already
//     told for its key. It releases nothing new, and it counts every
//     request still held as in flight: a slot is free for a call at now if
//     its end is at or before now, or if an earlier call was told a time
//     at or after its end (a release is final, as in a Redis sorted set of
//     end times whose ZREMRANGEBYSCORE drops the ended ones). So a request
//     admitted by a caller whose clock is ahead holds its units, for every
//     later call, until its end, even for a caller told a time before its
//     start; and a caller whose clock is behind finds free the slots that
//     calls on later clocks have released. Units held never exceed Burst.
//
// For calls in time order this is exact: the units in flight at any
// instant, computed from the admitted requests' [start, end) intervals,
// never exceed Burst, and every denial was necessary (admitting it would
// have exceeded Burst at that instant). Properties hold both, and hold
// skewed calls to the rule above.
//
// Limiter answers limiter.Weighed and limiter.Sized (one cell per request
// held).
//
// # What it owns, and what it must not import
//
// The concurrency limiter: its per-key heaps of end times and their
// arithmetic, and its promise. From this module it imports algos and
// limiter only: no simulator, no Redis. Outside it imports the standard
// library only.
package inflight
