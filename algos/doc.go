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
// One key's stored state and the views that name its integers for each
// algorithm (state.go); the decisions (one file per family: buckets.go,
// windows.go, with the first-hit window beside the six, and queue.go, the
// GCRA that holds an early request up to a max delay instead of refusing
// it); limits and their scaled arithmetic (limit.go, on internal/arith);
// the promises (promise.go) and the independent promise checker
// (checker.go); and each decision's FieldsFunc, the simulator's fast way to
// call it (algos.go: Fields, and RegisterFields for a decision of another
// package). The planted bugs live in internal/planted, out of this
// package's API. It imports internal/arith only, and nothing outside the
// standard library: everything else is built on it.
package algos
