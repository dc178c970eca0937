// Package limiter is overshoot's one notion of a limiter under test. A Spec
// names a limiter, says whose clock it reads (the caller's or the store's)
// and what it promises, and makes fresh Limiters; a Limiter decides a
// request for a key at a time and may fail. The six pure algorithms
// (FromAlgorithm), Go objects that take the time as a parameter (PerKey,
// such as golang.org/x/time/rate) and keyed Redis-backed libraries (a Spec
// whose New connects to a store, such as go-redis/redis_rate on simredis;
// see package adapters) are all Specs, and the simulator, the tables, the
// hunt and the properties take any of them.
//
// # What it owns, and what it must not import
//
// The Spec and Limiter types, the optional Weighed (a request's cost and
// service time), Sized (the state's size in cells) and Into (a decision
// written in place, for the simulator's millions of calls), the one table of
// an algorithm's state per key with its expiry (KeyStates, ExpiresAt: the
// simulator's store, model.Store, holds its keys in one too), the in-memory
// limiter of a pure algorithm's keys with their costs (Memory), the
// per-key adapter of a Go object (PerKey), and the one name a key's number
// is given where a store needs a string (KeyName: the isolation checks'
// moved keys get names that collide the ways stores fold names). It
// imports algos only: no simulator, no Redis.
package limiter
