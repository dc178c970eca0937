// Package properties holds the contract every rate limiter in overshoot is
// held to, as rapid properties over arbitrary arrivals and small limits.
//
// Check runs them all as subtests on one algorithms.Algorithm, so a user can
// hold their own limiter to the same contract:
//
//	func TestMyLimiter(t *testing.T) { properties.Check(t, myAlgo) }
//
// Each property is also exported on its own (PromiseHolds, BurstFromIdle,
// ...) as a func(*rapid.T), for rapid.Check, and Fails runs one and returns
// rapid's report with the shrunk counterexample, to show that a planted bug
// is caught.
//
// Properties know nothing about the six algorithms: what "a full burst" is
// comes from the algorithm's own promise (the most admits it allows at one
// instant: Burst for the bucket promise, Rate for the window promises), and
// how long a key can take to become idle from WithMaxWait (by default
// max(2·W, ⌈B·W/L⌉), enough for the six).
//
// # What it owns, and what it must not import
//
// The properties (a file per claim), their generators (gen.go), their
// options (options.go), Check and Fails. It imports algos and rapid only:
// a property is about one limiter on one node, never a deployment.
package properties
