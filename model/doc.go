// Package model is overshoot's deterministic discrete-event simulator: it
// plays a list of requests through one limiter deployed one way (several
// nodes with skewed clocks, a store a round trip away, wipes, restarts, two
// classic deployment bugs) and reports what was admitted, when in true time,
// and whether the algorithm's own promise held.
//
// # The model in one page
//
// Time is an int64 count of microseconds of true time. Everything below is a
// statement about that one timeline; a node's clock is true time plus its
// offset (Skew), its drift and its steps (Config.Clocks), and the store's
// clock is true time itself (Redis TIME) unless Clocks steps it too.
//
//   - Requests. Config.Requests lists them (record.Request): a key index
//     and Sent, the true time a node sends the request. The list is sorted by Sent and is the
//     only traffic; the model never invents requests. The same list can be
//     handed to every deployment, so that deployments differ only in how
//     they decide.
//   - Nodes. A load balancer sends each request to a node chosen uniformly at
//     random (or, with Config.Pinned, to the node the request names). Node
//     i's clock reads true time + record.Offset(i, N, Skew): Skew is the distance
//     between the extreme clocks, offsets spread evenly from -Skew/2 so the
//     first and the last node are exactly Skew apart. This is the module's
//     one definition of skew.
//   - The store. It is a round trip away: the leg to the store and the leg
//     back each take RTT/2 (or Config.Legs), jittered uniformly by ±Jitter%.
//     An operation runs when it arrives, instantly and one at a time; two that
//     arrive in the same µs run in request order, and a request's GET runs
//     before its own SET. A script that reads TIME sees true time.
//   - Decisions. The limiter is a limiter.Spec. A pure algorithm
//     (limiter.FromAlgorithm) decides with algos.DecideFunc calls on the
//     model's own Store, its keys expiring at its KeyTTL by the store's
//     clock; any other limiter is made fresh by the Spec for the run (for
//     each node of a local deployment, and again after a wipe or restart)
//     and asked Allow(key, now), its errors counted apart from its admits
//     and denials. Who tells the limiter the time, and where the state
//     lives, is the Deployment; Applies says which deployments a limiter
//     fits (a store-clock limiter has no node clock and no local form; only
//     a pure algorithm's state can be copied by GET, decide, SET).
//   - Closed-loop clients. Config.Loop adds clients that send their next
//     request only once their last answer arrived, when the answer says
//     (a record.LoopClient, a record.Client handed each answer's Record:
//     retry at Retry-After, drain and idle, burst at the Reset); the
//     requests they send are Result.LoopRequests.
//   - The check. Every admitted request is placed at Decided, the true
//     time it was decided (when the store ran the script; when a local node decided;
//     when a GET/SET node decided on its copy), and each key's admits are
//     checked against Limiter.Promise(Limit) for the whole configured
//     limit: the promise the deployment is supposed to keep.
//
// # The names a request carries
//
// record.Request{Key, Sent} → Planned{Key, Node, Sent, Clock} (Plan) → the time
// the algorithm is told: Clock for NodeClock, the store's true time when the
// script runs for StoreClock → Outcome{Decided, Told, Key, Node, Admitted, and the rest
// of the answer: Remaining, RetryAfter, Reset} (Run). A limiter that is not
// a pure algorithm is also given Clock with every call (limiter.NodeTime). A live replay adds what
// Redis measured: Told, Ran, Decided (package replay).
//
// # Determinism
//
// Randomness comes from PCG generators (record.Stream), one per purpose, each
// seeded from (Config.Seed, a constant naming the purpose): the balancer,
// the legs to the store, the legs back and to SET, and each node's restarts.
// Changing the number of deployments, or the deployment, never changes the
// draws of another purpose. The simulator starts no goroutines, iterates no
// maps and reads no clock, so the same Config gives the same Result, bit for
// bit, on any number of CPUs. The only floating point in overshoot's traffic
// lives in package traffic, not here: the model is integer arithmetic.
//
// # Cost
//
// Run allocates a handful of slices per run (the outcomes, the admit times,
// the closed-loop requests) and nothing per request, apart from the sliding
// log's buffer when a key starts from empty. Its working memory (the plan,
// the outcomes while closed-loop clients add to them, what is in flight) is
// borrowed from a pool and given back, so that thousands of runs in a row
// do not allocate and collect it thousands of times; a run on the requests
// the memory's last run had (a matrix's, a sweep's or a hunt's next limiter
// on a seed), compared whole with a copy, neither checks nor plans them
// again, nor draws their legs. Atomic deployments keep the store's pending
// operations in a small binary heap ordered by (arrival at the store,
// request, GET before SET); when the legs to the store take time it holds
// only the closed-loop clients' operations in flight, the others' being
// drawn and sorted before the run.
//
// # What it owns, and what it must not import
//
// The deployments and their configuration (config.go), the clocks' drifts
// and steps (clocks.go), the plan of who sends what when (plan.go), the
// store (store.go: its clock and its four operations on a
// limiter.KeyStates, the state per key, which the live replay drives
// too), how a run plays the closed-loop clients (loop.go), the event heaps
// (heap.go), the run (run.go) and the run as package record's records
// (records.go). The words a run is told and tells (the request, the
// random stream, the closed-loop client and its reply, the clocks' even
// spread, the bound on keys) are package record's, which the traffic
// generators speak too. It imports algos, limiter and record only: no
// Redis, no traffic generator, no report. A Redis-backed limiter reaches it as a limiter.Spec whose
// store the Spec owns.
package model
