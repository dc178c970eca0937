// Package drills breaks the store under a deployed limiter, on purpose, and
// measures what the limiter then lets through. Each drill is a finding (a
// TestFinding... test with a Badge line): it starts real Redis servers in
// containers shaped for the fault (internal/redistest.StartWith), drives
// overshoot's Lua scripts at them, makes the fault happen, and asserts
// the measured numbers against the bounds its doc comment states, logging
// its conditions, its numbers and a `measured:` headline.
//
//   - Eviction (eviction_test.go): a store with a small maxmemory, filled
//     past it with cache keys. Under allkeys-lru the limiter's keys are
//     evicted like any other, and each evicted key that had spent its
//     burst hands out a fresh one; under volatile-ttl the limiter's keys,
//     which alone carry a TTL, are the only ones that can go; a store kept
//     for the limiter alone evicts nothing.
//   - Cluster (cluster_test.go): a one-node Redis Cluster. The two-key call
//     (a limiter key and the sequence key) is refused with CROSSSLOT unless
//     both keys share a hash tag, and with one it decides as on a plain
//     Redis; the live replay runs on the cluster only under a tagged prefix.
//   - Failover (failover_test.go): a primary, a replica and a Sentinel.
//     The primary is killed while the script is driven at an overload;
//     the drill measures each key's admits beyond the limit's promise
//     across the promotion, the requests that failed, and how long the
//     switch took.
//   - Blackhole (blackhole_test.go): a store that stops answering, behind
//     the HTTP middleware: what a request costs, and the recovery.
//   - A real store's clock step (clock_test.go): a Redis whose clock
//     libfaketime steps 60 s ahead and behind, as a failover to a replica
//     with its clock off would: what each bucket read by TIME then admits
//     or refuses, and its keys' expiry (the simulated clock faults are
//     scenarios.RunClockFaults, not a drill).
//
// The drills need Docker and a Redis image (`make redis-image` builds one
// where no registry is reachable); without them they skip, or fail under
// OVERSHOOT_REQUIRE_REDIS=1. They talk to 127.0.0.1 only, and every
// container they start is removed when the test ends or is interrupted.
// Each takes a few seconds; -drills.full runs the longer versions.
//
// # What it owns, and what it must not import
//
// The drills: tests only, beside this file. Its non-test code (this file)
// imports nothing of the module; the tests import algos, redis/lua,
// replay, httplimit and the test helper internal/redistest, never the
// other way round.
package drills
