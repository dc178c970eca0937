// Package properties holds the contract every rate limiter in overshoot is
// held to, as rapid properties over arbitrary arrivals, at small limits
// (SmallLimits, where every edge gets hit) or at the limit a user runs
// (WithLimit).
//
// Every property takes a limiter.Spec, any of them: a pure algorithm
// (limiter.FromAlgorithm), a Go object per key (limiter.PerKey), or a
// library on a (simulated) store. Check runs them all as subtests on one
// Spec, so a user can hold their own limiter to the same contract:
//
//	func TestMyLimiter(t *testing.T) { properties.Check(t, mySpec) }
//
// Each property is also exported on its own (PromiseHolds, BurstFromIdle,
// ...) as a func(*rapid.T), for rapid.Check, and Fails runs one and returns
// rapid's report with the shrunk counterexample, to show that a planted bug
// is caught; FailsWithSeed does so from a seed of the caller's, for a report
// that must read the same on every run. rapid's flags are the test binary's:
// every Check and Fails reads them under one lock (flags.go), so tests run
// them in parallel, and FailsWithSeed changes the seed while none runs.
//
// A property drives the limiter only as its users would: it opens fresh
// limiters (Spec.Open), calls them (limiter.Allow) and closes them. A
// limiter cannot be cloned, so to ask what a key would do from some point of
// its history a property replays that history on a fresh key of a fresh
// limiter, which must decide it the same way. The calls on any one limiter
// never go back in time, so a store-clock limiter (whose store's clock only
// moves forward) keeps every property but the step-back ones, which apply
// to caller-clock limiters only: Check leaves them out for a store-clock
// Spec and says so. An error from Open or Allow fails the property, naming
// the call; it is never taken for a denial. A limiter that drops idle keys
// (an algorithm's KeyTTL, a store's expiry) is judged with its expiry.
//
// The arrivals (Arrivals) are sized by the limit under test: they flood a
// key with max(L, B)+2 calls at one instant, wait about its idle time and
// flood it again, so a bug that shows only past the burst, or only when a
// key expires early, shows at a real limit too (up to the bounds MaxBurst
// and MaxArrivals). Check and Fails run exactly the number of cases asked
// (WithChecks), over as many runs of rapid as that takes, and stop
// shrinking a failure after DefaultShrinkTime with the smallest case found
// by then (WithShrinkTime, -rapid.shrinktime), so that a limiter on a store,
// whose every case is a round trip, can be checked at its own limit.
//
// Properties know nothing about the six algorithms: what "a full burst" is
// comes from the Spec's own promise (the most admits it allows at one
// instant: Burst for the bucket promise, Rate for the window promises), and
// how long a key can take to become idle from WithMaxWait (by default
// max(2·W, ⌈B·W/L⌉), enough for the six).
//
// # What it owns, and what it must not import
//
// The properties (a file per claim), their generators (gen.go), their
// options (options.go), Check and Fails, and the lock over rapid's flags.
// It imports algos, limiter and rapid, and differential and model for
// AgreesWith alone, which runs two limiters on the same requests on one
// node with a true clock: a property is about one limiter on one node,
// never a deployment.
package properties
