// Package capacity answers the question users bring to a rate limiter
// before they deploy it: "what happens if I set this to 100 per minute,
// with my traffic?" It plays a trace (package traffic: synthetic, or
// recorded in production) through any limiter.Spec under a limit, on one
// node with a true clock, and measures what got through (package metrics):
// accepted and rejected, the most admitted in any rolling second and ten
// seconds and in one window, the first rejection, fairness across keys,
// Retry-After, peak state, and how long a queueing limiter held what it
// let through (the wait). Compare puts several limiters side by side on
// the same trace; Sweep finds the tightest setting (a limit, a burst, a
// sync interval) that keeps rejects within a budget; RequireFits makes
// that sweep a CI gate that fails a test, with the table, when no setting
// in the range fits a recorded trace.
//
// # What a run is
//
// Run decides the trace's requests in order, each at its own time (the
// trace's times as they are: windows are aligned to the epoch, so a
// recorded trace keeps its timestamps), with its key, cost and service
// time. A limiter.Weighed limiter gets the cost and the service time (the
// six algorithms spend a cost of n as n units at one instant, whole or not
// at all; the concurrency limiter holds its slot for the service time);
// any other limiter is refused a trace with costs other than 1 rather than
// silently charged 1. The run is the simulator's own ideal deployment
// (model.Ideal: one node, a true clock), not a copy of it: the model
// decides, a thin adapter hands the limiter each request's cost and notes
// what the model keeps no place for (a queue's delay, the state's size),
// and package metrics measures the model's records. No other deployment
// is played here: the fleet of nodes that share a cached counter is itself
// a limiter (package fleet), and the deployments of package model (skewed
// clocks, a store a round trip away) are the simulator's business. A run
// is deterministic: the same trace, spec and limit give the same TraceResult
// and the same report bytes.
//
// # What it owns, and what it must not import
//
// The run of a trace through a limiter (run.go), the sweep and its CI gate
// (sweep.go) and their text and JSON reports (report.go, report_json.go).
// It imports algos, limiter, model (for its ideal deployment and its
// records), record, metrics and traffic, internal/encode for the JSON, and
// fleet for the sync-interval sweep's setting: no scenario, no Redis.
package capacity
