// Package adversary searches for the traffic that breaks a deployed
// limiter: the arrival pattern of requests on one key, within bounds (how
// many requests, over how long, at what offered rate), that makes the
// deployment admit the most beyond its limiter's own promise, and the
// fewest requests, at the simplest times, that break that promise at all.
//
// # The search
//
// It is targeted property-based testing (PropEr's target, Hypothesis's
// target()) built on rapid, which has no targeting of its own. A round is
// one rapid.Check of the property "this attack admits at most T beyond the
// promise", run through a rapid.TB that records instead of failing. Each
// case draws an attack (generate.go: a start and its waits, or edits of the
// best attack so far), which a traffic.AttackBounds places within the bounds,
// plays it through model.Run on the deployment under attack and measures it
// (measure.go). A round that fails hands back rapid's shrunk
// counterexample, the last failing case rapid replays; the threshold T then
// climbs to the best measure seen, and the next round looks for more. The
// search stops when two rounds in a row find nothing better, or when its
// budget of simulated runs is spent.
//
// rapid's shrinker leaves slack (it minimises its draws, not the trace), so
// the search finishes with a deterministic shrink of its own (shrink.go):
// drop requests one at a time, move each to rounder times, send it to a
// lower node, for as long as the attack still reaches what it must, until
// nothing changes. The attack it reports therefore stops breaking the
// promise when any single request is removed.
//
// # The measure
//
// Excess is how many of an attack's admits a limiter keeping the promise
// would have refused: while the promise's own check (algos.Promise) finds a
// violation among the admit times (model.Result.AdmitTimes, the true times
// the model says they were decided), take out one admit at the end of that
// violation, and count. It is an integer, zero exactly when the promise
// holds, and it works for any limiter.Spec's promise, built-in or not. Peak
// (the most admits in any window of the limit's length) is reported beside
// it, and ranks attacks when none breaks the promise.
//
// # Determinism
//
// Search reads no clock and no global random source. rapid's seed is set by
// Search from its own seed argument for each round, whatever -rapid.seed
// says, as are -rapid.checks (corrected for -short), the fail file and the
// shrink time, and they are restored afterwards; Searches take a lock of
// this package while they hold rapid's flags, so they run one at a time.
// The same Config, Bounds and seed give the same SearchReport, byte for byte, on
// any number of CPUs and in any test order. rapid reads the test flags, so
// Search runs inside a test binary only (it returns an error elsewhere), and
// it must not run beside another rapid check of the same test binary.
//
// # What it owns, and what it must not import
//
// The search (Search, Bounds, SearchReport, Attack, Fate), its rapid generators
// (what it draws, and how the draws spread over the gaps that break a
// deployment), its measure, its shrink and the report's text. What the
// draws become is package traffic's: traffic.AttackBounds turns waits and
// edits into requests at times within the bounds and says whether an
// attack is within them, as traffic makes every other request of the
// module. The generators stay here because they draw with *rapid.T: rapid
// shrinks an attack by shrinking those draws, so they are the search's own,
// and traffic, which the reports and the capacity plan import, must not
// import rapid. Of this module it imports algos, model and traffic only
// (the limiter under attack reaches it inside a model.Config), and rapid:
// it drives the simulator, never Redis, the scenarios or the properties,
// and no package of the reports imports it.
package adversary
