// Package xtimerate is golang.org/x/time/rate (v0.16.0, pinned in go.mod)
// as a limiter under test: one *rate.Limiter per key, told the caller's
// time, deciding each request with AllowN(t, 1). Spec is its entry point.
//
// The library is a token bucket kept in float64 tokens and time.Time, and
// its AllowN answers a bool only; the adapter reads Remaining, RetryAfter
// and Reset off the library's state after the call through its public,
// non-mutating TokensAt, holding every field to what the library itself
// would go on to do (see Spec for how, and where float rounding makes it
// differ from the exact integer algos.TokenBucket).
//
// # What it owns, and what it must not import
//
// The mapping of µs to the library's time.Time (EpochUnixMicro, At) and of
// the library's state to an algos.Decision. From this module it imports
// algos and limiter only: no simulator, no Redis, no simredis. Outside it
// imports golang.org/x/time/rate and the standard library.
package xtimerate
