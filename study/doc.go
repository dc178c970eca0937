// Package study reproduces, against a real Redis, an empirical study of
// Redis-based rate limiting under concurrency: what eight client strategies
// let through when many workers share one key, how far a network delay and
// the way workers are released move that, what happens around a window edge
// with atomic decisions, and what callers' clocks do to a token bucket whose
// refill is clamped at zero and to one whose refill is not.
//
// # What it measures
//
//   - Strategies: check-then-act (GET, compare, INCR), increment-then-check
//     (INCR, compare), WATCH/MULTI with a retry budget of 3 and of 10, and
//     redis/lua's fixed window, token bucket, sliding log and sliding counter
//     scripts on Redis TIME. They share the Strategy interface; each request
//     gets a Ruling.
//   - A Trial: c workers, each on its own connection (Conns), send their
//     share of the offered requests against one fresh key, released together
//     by a barrier (Adversarial), after seeded random offsets (Random), or
//     together for every request (Rounds, the lockstep model's condition). A
//     TrialResult counts admits, over-admission (admitted − L), refusals of
//     requests that were within the limit (RefusedWithinLimit defines them
//     per strategy), and every request's latency. A Grid sweeps trials over
//     strategies, worker counts, paths and releases, one GridPoint each.
//   - A Path: loopback, or an in-process toxiproxy with latency toxics on
//     both legs; its RTT is measured with PING and reported.
//   - Models beside the measurements: the lockstep model of check-then-act
//     (LockstepOver), and the Go algorithms run through package model's
//     simulator on the same plans (EdgeModel, SkewModel). The plans are
//     package traffic's (traffic.EdgePlan, traffic.SkewPlan, and
//     traffic.ReleaseOffsets for the Random release): the study chooses
//     them (EdgePlanFor, SkewPlanFor) and sends what they say. A
//     SkewPlan's Skew is model's: the distance between the first and the
//     last worker's clock; the reports print ±Skew/2. WriteModelReport
//     writes golden/concurrency.txt.
//   - What must be exact is kept apart from what scheduling moves. A live
//     script's every decision is replayed through its Go twin at the time
//     Redis decided it (EdgeResult and SkewResult count the differences,
//     which must be 0 however busy the machine); counts that depend on the
//     plan being kept are judged only on trials that kept it (EdgeResult's
//     OnPlan, TrialResult's RoundsOutOfStep), and a trial that did not is
//     rerun.
//
// The findings are the package's TestFinding tests; TestStudy prints the
// live tables (`make study` runs the full sweep). Every load loop is bounded
// in requests and in time, and talks to a loopback Redis only.
//
// # What it owns
//
// The study owns its strategies, trials, live runs against Redis, which
// plans run (config.go) and rendering (report.go). The algorithms are
// package algos's, the scripts redis/lua's, the simulator package model's
// (EdgeModel and SkewModel run model.Run rather than a loop of their own),
// and the traffic package traffic's: the plans' send times, phases and
// offsets, which the live trials and the models share; the workers'
// connections and the store's clock the plans are played by are
// redis/conn's, as the live replay's are, and every live trial is sent
// by package live's driver (live.Drive): the edge and caller-clock trials
// each a plan from a start on the store's clock, each script a
// live.Observer target that reports the Redis TIME and the order it
// decided in; the concurrency trials each a closed loop of its workers on
// one key, each worker a client sending to its own connection (Sticky),
// released together and, for Rounds, held in step. Every live trial (concurrency,
// caller clocks, window edge) keeps what its workers saw as the one record
// (TrialResult.Records, SkewResult.Records, EdgeResult.Records:
// record.Record), which the judge of records holds to a promise as it
// holds a deployed service's (its tests do). It imports algos, redis/conn,
// redis/lua, internal/planted (the negative-refill bucket), limiter, live,
// model, record, traffic and infrastructure (go-redis, toxiproxy; internal/golden,
// internal/redistest and judge in its tests); it must not import
// scenarios, replay, properties or the root package.
package study
