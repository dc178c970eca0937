// Package planted holds the planted bugs: copies of the six decisions with
// one line changed, as a real author gets it wrong, so that the properties,
// the hunt and the Lua differential can show they catch such a bug. It is
// internal: tests, the mutants and the study reach it; a user of algos
// never sees it.
//
// # What it owns, and what it must not import
//
// The planted algorithms and their list (All: planted.go, contract.go,
// estimate.go), each written as an algos.FieldsFunc and registered with
// algos so that the simulator decides it as fast as the six (fields.go),
// and the planted limiters of their own: keys sharing a table
// of 1024 buckets (keyed.go), a store-clock claim that reads the node's
// clock (clockclaim.go), and a go-redis token bucket in Lua that keeps a
// key's bucket under its name's first 32 bytes (keyfold.go: a
// redislib.Library's New, which the tests wrap in adapters/redislib). From
// this module it imports algos, internal/arith (the arithmetic it shares
// with algos) and limiter, and nothing else: not adapters/redislib, which
// is why keyfold.go hands over New and not a Library; outside, go-redis v9.
package planted
