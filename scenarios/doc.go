// Package scenarios owns overshoot's traffic and what is measured with it:
// the five clients (Traffic), the deployment matrix (RunMatrix, rendered by
// Matrix.WriteTo as the table), the skew sweep (RunSweep, rendered as a
// text table and an SVG chart), and the hunt for broken promises (Hunt,
// WriteVerdicts). Every run is played by package model, which checks each
// admit against the algorithm's own promise.
//
// The traffic depends on the seed, the limit and the duration alone, so
// every algorithm and every deployment sees exactly the same requests, and a
// difference between two cells is the algorithm's or the deployment's doing.
// RunMatrix, RunSweep and Hunt take any limiter.Spec, so a user can put
// their own limiter through the same matrix as the six built in. What they
// return, and the bytes it renders, depend on their arguments alone, not on
// the number of workers.
//
// Of overshoot's packages, scenarios imports algos and model only: never
// algos/lua, study, replay, properties, a Redis client or the root package.
package scenarios
