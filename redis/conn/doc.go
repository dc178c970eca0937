// Package conn is how overshoot's live runs reach a real Redis: the
// clients a node or a worker sends on (one connection each, never
// retried), the store's clock (Redis TIME) as this machine follows it,
// and the sleep until that clock reaches a planned instant. The live
// replay (package replay) and the study's trials (package study) both
// play their plans through it, so a plan's time means the same thing in
// both: µs of the store's TIME.
//
// # What it owns, and what it must not import
//
// Connections and the store's clock, nothing about what is sent on them:
// the scripts are package redis/lua's, the plans the simulator's and
// traffic's. It imports go-redis and nothing of this module.
package conn
