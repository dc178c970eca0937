// Package differential runs two limiters on the same requests and compares
// what they admit, window by window: the user's limiter ("mine") against a
// reference ("ref"), say a sliding counter against the sliding log, or a
// token bucket of one's own against overshoot's.
//
// Run plays one model.Config twice, once with each limiter and everything
// else identical (the seed, so the balancer and the legs to the store, and
// the requests), then counts each side's admits in every aligned window
// [k·W, (k+1)·W) of the limit's window, by the true time each admit was
// decided, for every key. The signed error of a window is mine − ref: over
// when positive, under when negative. A limiter's error is counted apart,
// never as a denial. Comparison.Write prints the windows that differ and a
// summary; Comparison.Check holds the errors to a Bound and names the worst
// window past it in words. properties.AgreesWith is the same comparison as
// a rapid property on one node with a true clock, so that rapid shrinks a
// failure to a small counterexample; scenarios.Hunt runs it at deployment
// level for a suspect that names a Reference.
//
// A promise says what one limiter guarantees on its own; a differential
// says how far it is from another on the same traffic, which catches what
// no promise can, such as a sliding counter whose estimate is wrong but
// which still never admits more than L in an aligned window.
//
// # What it owns, and what it must not import
//
// The comparison (Run, and RunAgainst for a caller that has run mine
// already; Comparison, Window, Bound, Check, Write). It imports algos,
// limiter and model only: never properties, scenarios,
// redis/lua, replay, study, internal/planted or the root package. Traffic
// is the caller's: a test that wants the simulator's clients builds it
// with traffic.OpenLoop and hands it over in the Config.
package differential
