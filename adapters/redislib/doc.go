// Package redislib turns a rate limiter built on a go-redis client (a
// library, or your own Lua script behind a go-redis call) into a
// limiter.Spec that overshoot's simulator runs in simulated time: each
// limiter it makes gets a fresh simredis.Server, reached in process (no
// TCP) by a go-redis v9 client with one connection, and the store's clock is
// set to Epoch + now before every call, so a script that reads Redis TIME
// reads the simulator's clock. A user writes only how to build the library
// on a client and how to map its answer to an algos.Decision:
//
//	spec := redislib.Spec(redislib.Library{
//		Name:    "my-limiter",
//		Promise: algos.BucketPromise,
//		New: func(rdb *redis.Client, l algos.Limit) (redislib.AllowFunc, error) {
//			lim := mylib.New(rdb, l.Rate, l.Burst, time.Duration(l.Window)*time.Microsecond)
//			return func(ctx context.Context, key string) (algos.Decision, error) {
//				r, err := lim.Allow(ctx, key)
//				return algos.Decision{Allowed: r.OK, Remaining: r.Left}, err
//			}, nil
//		},
//	})
//
// Such a Spec reads the store's clock (limiter.StoreClock): the simulator
// calls it in the order of its time, as it calls every store-clock limiter.
//
// The library sees each key as its name, limiter.KeyName of its number:
// "overshoot:7" for the keys the clients use, and, for the keys the
// isolation checks move them onto (1024 and 65536 above), names of over
// 256 bytes, mostly non-ASCII, that share their first 256 bytes and their
// Redis Cluster slot with their neighbours: a library that truncates,
// sanitizes or slot-hashes its keys folds them, and the checks see it.
//
// # What it owns, and what it must not import
//
// The simulated store's lifetime for one limiter (SimStore: open, set the
// clock, close) and the Spec around a library's allow function. From this
// module it imports algos, limiter and simredis only; outside, go-redis v9
// and the standard library.
package redislib
