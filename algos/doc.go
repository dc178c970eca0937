// Package algos holds six rate-limiting algorithms as pure decisions, and the
// promise each one makes.
//
// Every algorithm is a function of one key's stored state, the time it is
// told (integer µs) and the limit. It reads no clock and does no I/O, so the
// same function runs on one node, in the simulator, and (as Lua) in Redis.
// The six are written the way they are commonly written, weaknesses
// included: those weaknesses are what overshoot measures.
//
// # What it owns, and what it must not import
//
// The decisions (one file per family: buckets.go, windows.go), limits and
// their scaled arithmetic (limit.go), the promises (promise.go), the
// independent promise checker (checker.go) and the planted bugs
// (planted.go). It imports nothing of this module and nothing outside the
// standard library: everything else is built on it.
package algos
