// Package ceiling measures the true ceiling of a rate limit as deployed:
// N real HTTP servers on loopback (Nodes), each running the reference
// middleware of package httplimit, behind a round-robin client that offers
// one key a constant arrival rate (open loop: the offered load, not the
// concurrency, is fixed, so a slow answer does not slow the offer down).
// What it reports is the accepted rate, against the limit, with the
// latency of the answers: a correct shared limiter lands on the limit
// however many nodes there are, per-instance limiters give N times it, and
// a GET-then-INCR limiter gives what its race lets through.
//
// Drive is the open-loop load and Saturate the closed-loop ceiling of the
// whole path (middleware, go-redis, Redis), both a live.Load of one key
// sent to a live.HTTP target on the one live base (live.Drive: vegeta's
// pacer, every request recorded as a record.Record, which Result keeps
// for judge.Records); Stampede is the n concurrent requests of one instant;
// Setup and its three constructors are the deployments the table
// compares; WriteTable prints it.
// Each deployment logs its decisions on the clock its limiter decided by
// (Log), and JudgeBucket and JudgeWindows read a limiter's rate from that
// log, so that a verdict is the limiter's own and not the machine's: a
// stall that starves the drive leaves less of the run judged, never a
// shortfall.
//
// A live run is kept from run to run as an Artifact (schema
// ArtifactSchema): each row's judged accepted rate (JudgedRow), written
// atomically (SaveArtifact), and compared with the previous run's
// (CompareArtifacts, CompareWithPrevious), so that a drift of the ceiling
// beyond a stated tolerance fails, naming both runs.
//
// # What it owns, and what it must not import
//
// The fleet, the drives' tally (Result) and the table; the load itself is
// live's (live.Load). It imports httplimit, algos, redis/lua, limiter,
// live and record for the drive, and internal/encode and
// internal/atomicfile for the Artifact, and nothing of the simulator:
// what it measures is real time on real sockets, so none of it is
// deterministic, and no golden file holds its numbers.
package ceiling
