// Package lua runs overshoot's six algorithms as Lua scripts in Redis, with
// exactly the integer arithmetic of package algos, call for call.
//
// Each script is embedded and loaded once; a call goes through EVALSHA
// (go-redis falls back to EVAL when Redis has forgotten the script). A call
// returns the decision, the values the key stores afterwards (in the order
// algos.State.Stored lists them) and the Redis TIME at which it ran.
//
// A user's own script runs the same way: FromSource puts it after the same
// prelude, with its Go twin, and Differential compares the two call for
// call on the calls traffic.DifferentialCalls makes, as the built-in
// scripts are compared:
// every decision, every stored value, and after every call the key's expiry,
// which must last until the twin's state is idle and not much longer.
//
// Both of a script's paths to the time are compared, each on a key of its
// own: told the time (ARGV[1]), with the twin told the same; and told
// nothing, so that the script reads Redis TIME (the store-clock path), with
// the twin deciding at the TIME the script read, to the µs, held to the
// TIMEs read around the call. On a real Redis that TIME is Redis's own; on
// a store whose clock the caller sets (DiffOptions.Clock, Suite.Clock: a
// simredis.Server) it is each call's time, back steps included. A script
// right when told the time can be wrong when it reads TIME (one that keeps
// only TIME's seconds: planted-token-bucket-whole-seconds), and only the
// store-clock path shows it.
//
// The package also holds the two ways of getting it wrong that overshoot
// measures against the scripts: GetSet (GET, decide in Go, SET) and
// GetThenIncr (a fixed window that checks and counts in two commands).
//
// # What it owns, and what it must not import
//
// The scripts (one .lua file per algorithm, the planted negative-refill
// bug's twin, and a token bucket planted to keep only TIME's seconds),
// their Go driver (lua.go), the GET/SET client and the GET-then-INCR window
// (getset.go), and the differential: the comparison (diff.go), the expiry
// rule (idle.go) and the suite of keys every script is held to (suite.go).
// It imports algos, internal/planted (for the planted bug's twin), limiter
// (whose Clock names each differential path: the caller's time, or the
// store's), traffic (whose DifferentialCalls are the differential's calls)
// and go-redis;
// never the simulator, the scenarios or the study.
package lua
