// Package redisrate is github.com/go-redis/redis_rate/v10 (v10.0.1, pinned
// in go.mod) as a limiter under test: GCRA in a Lua script that reads the
// store's clock (Redis TIME), run unchanged on a simulated Redis (simredis)
// whose clock the simulator sets, or on a caller's own Redis.
//
// Spec runs it on a fresh simredis.Server per limiter, with a go-redis v9
// client reaching it in process (a redislib.SimStore); OnClient runs it on a client the caller owns, for a
// live run against a real Redis. Both map the library's Result to an
// algos.Decision (see Spec).
//
// # What it owns, and what it must not import
//
// The mapping of the simulator's µs to the store's clock (EpochUnixMicro)
// and of the library's Result to an algos.Decision, and the lifetime of the
// simulated store and client each limiter of Spec starts. From this module
// it imports adapters/redislib, algos and limiter only: no simulator, no scenarios,
// no test helper. Outside it imports github.com/go-redis/redis_rate/v10,
// github.com/redis/go-redis/v9 and the standard library.
package redisrate
