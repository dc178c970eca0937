// Package metrics measures what a run of a rate limiter did to its traffic,
// for capacity planning: how much it let through, in total and per key; the
// most it let through in any rolling second and ten seconds; how evenly it
// treated the keys (Jain's index and the Gini coefficient over their accept
// ratios, and the worst-starved key); how long it told rejected callers to
// wait (Retry-After percentiles); how long a queueing limiter held what it
// admitted before letting it through (wait percentiles, reported only for
// a run where a request was held); how many windows let through how much
// (a histogram and a timeline); and the peak size of the limiter's state.
//
// Measure takes the record of every request of a run (package record, the
// one record every producer makes: the simulator, capacity, a live run, a
// file), one at a time and in time order, and returns a Run. A record is
// read at its decision when its producer saw it, and at its sending
// otherwise. WriteRun renders one Run as a fixed-width text table with a
// sparkline timeline, WriteComparison puts several runs side by side, and
// WriteSVG draws accepted-per-window over time as an SVG line chart. Times
// are integer µs, as everywhere in overshoot. Everything is deterministic:
// the same records give the same Run, and the same Run the same bytes; no
// clock is read and no map order reaches the output.
//
// # What it owns, and what it must not import
//
// The measures of a finished run (measure.go, with the arithmetic of the
// rolling maximum, the fairness indices and the percentiles) and their
// reports (text.go; svg.go, which says what its chart shows and leaves the
// drawing to internal/svgchart, the module's one chart writer, as
// scenarios does). It knows nothing of how the records were produced, so
// of this module it imports package record and internal/svgchart alone:
// not the simulator, not scenarios, and nothing outside the standard
// library.
package metrics
