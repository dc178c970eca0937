// Package scenarios owns what the checks run and what is measured with
// it: which clients a run has and how it wires them into the model (the
// open-loop clients' requests in its Config, the closed-loop ones in its
// Loop, Options.Clients; package traffic makes their requests and decides
// what a closed-loop client sends next), the deployment matrix (RunMatrix,
// rendered by Matrix.WriteTo as the table, with each limiter's over also
// against its named reference), the curves (RunCurve over any one
// parameter, the skew sweep among them: SkewCurve, rendered by SkewSweep;
// each rendered as a text table and an SVG chart, with the models that
// explain them), the simulated clock faults (RunClockFaults: node clocks
// that drift and step), and the hunt (Hunt,
// WriteVerdicts, WriteBreaches, WriteTraces), which holds a deployed
// limiter to its whole contract: every run judged by package judge
// (judge.Simulation: its promise, honest requests turned away, retries at
// their Retry-After, answers no limiter may give, Remaining and Reset
// against the promise), and the rules that play a run again here: keys
// that share state (isolation.go), a store-clock claim that node clocks
// move (clockclaim.go), and agreement with a named reference
// (offReference).
//
// The traffic depends on the seed, the limit and the duration alone, so
// every algorithm and every deployment sees exactly the same requests, and a
// difference between two cells is the algorithm's or the deployment's doing.
// RunMatrix, RunCurve and Hunt take any limiter.Spec, so a user
// can put their own limiter through the same checks as the six built in.
// What they return, and the bytes it renders, depend on their arguments
// alone, not on the number of workers.
//
// Of overshoot's packages, scenarios imports algos, differential, judge,
// limiter, model and traffic only, with breach for the names of the
// breaches its hunt reports, internal/encode for its JSON and CSV and
// internal/svgchart for its charts: never redis/lua, study, replay,
// properties, a Redis client or the root package. It generates no
// request itself: every request a run sends comes from package traffic.
package scenarios
