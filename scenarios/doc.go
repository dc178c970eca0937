// Package scenarios owns the clients the checks run and what is measured
// with them: the clients (the five open-loop ones of Traffic, the three
// closed-loop ones of LoopClients, the edge prober of EdgeTraffic; the
// traffic profiles of capacity planning are package traffic's), the
// deployment matrix (RunMatrix, rendered by Matrix.WriteTo as the table,
// with each limiter's over also against its named reference), the sweeps
// (RunSweep over skew, RunCurve over any one parameter, each rendered as a
// text table and an SVG chart, with the models that explain them), the
// simulated clock drill (RunClockDrill: node clocks that drift and step),
// and the hunt (Hunt, WriteVerdicts, WriteBreaches, WriteTraces), which
// judges a deployed limiter's whole contract (judge.go): its promise,
// honest requests turned away, retries at their Retry-After, answers no
// limiter may give, Remaining and Reset against the promise, keys that
// share state (isolation.go), a store-clock claim that node clocks move
// (clockclaim.go), and agreement with a named reference.
//
// The traffic depends on the seed, the limit and the duration alone, so
// every algorithm and every deployment sees exactly the same requests, and a
// difference between two cells is the algorithm's or the deployment's doing.
// RunMatrix, RunSweep, RunCurve and Hunt take any limiter.Spec, so a user
// can put their own limiter through the same checks as the six built in.
// What they return, and the bytes it renders, depend on their arguments
// alone, not on the number of workers.
//
// Of overshoot's packages, scenarios imports algos, differential, limiter
// and model only, with internal/encode for its JSON and CSV and
// internal/svgchart for its charts: never redis/lua, study, replay,
// properties, a Redis client or the root package.
package scenarios
