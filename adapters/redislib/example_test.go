package redislib_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/overshoot-go/overshoot/adapters/redislib"
	"github.com/overshoot-go/overshoot/algos"
)

// firstHitWindow is a fixed window anchored at a key's first hit, in one
// script that reads the store's clock (TIME, in µs) and nothing else: the
// window's start and count in a hash, kept a millisecond past the window's
// end. It answers the count and the µs left in the window.
var firstHitWindow = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
local start = tonumber(redis.call("HGET", KEYS[1], "start"))
local n = tonumber(redis.call("HGET", KEYS[1], "n")) or 0
if not start or now - start >= window then start, n = now, 0 end
n = n + 1
redis.call("HSET", KEYS[1], "start", string.format("%d", start), "n", n)
local left = start + window - now
redis.call("PEXPIRE", KEYS[1], math.ceil(left / 1000) + 1)
return {n, left}`)

// firstHitWindowLibrary is that script as a redislib.Library: how to
// build it on a client for a limit, and how to read its answer. admitWhile
// says which count is still admitted (n <= limit, or a planted bug).
func firstHitWindowLibrary(name string, admitWhile func(n, limit int64) bool) redislib.Library {
	return redislib.Library{
		Name:    name,
		Promise: algos.AnchoredWindowPromise,
		New: func(rdb *redis.Client, l algos.Limit) (redislib.AllowFunc, error) {
			return func(ctx context.Context, key string) (algos.Decision, error) {
				r, err := firstHitWindow.Run(ctx, rdb, []string{key}, l.Window).Int64Slice()
				if err != nil {
					return algos.Decision{}, err
				}
				n, ttl := r[0], r[1]
				d := algos.Decision{Allowed: admitWhile(n, l.Rate), Remaining: max(l.Rate-n, 0), Reset: ttl}
				if !d.Allowed {
					d.RetryAfter = ttl
				}
				return d, nil
			}, nil
		},
	}
}

// A Lua script behind a go-redis call becomes a Spec in the lines of
// firstHitWindowLibrary; the simulator then runs it on simredis, its clock
// set to the simulated time before each call.
func ExampleSpec() {
	spec := redislib.Spec(firstHitWindowLibrary("first-hit window (Lua)", func(n, limit int64) bool { return n <= limit }))
	l := algos.MustLimit(10, algos.Second, 10)
	lim, err := spec.New(l)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lim.(interface{ Close() error }).Close()
	ctx := context.Background()
	admitted := 0
	for range 12 { // 12 at one instant
		if d, err := lim.Allow(ctx, 1, 0); err == nil && d.Allowed {
			admitted++
		}
	}
	late, _ := lim.Allow(ctx, 1, 999_999) // the window's last µs
	fresh, _ := lim.Allow(ctx, 1, algos.Second)
	fmt.Printf("%d of 12 admitted at once; at 999.999 ms admitted %v; at 1 s admitted %v, remaining %d\n",
		admitted, late.Allowed, fresh.Allowed, fresh.Remaining)
	// Output: 10 of 12 admitted at once; at 999.999 ms admitted false; at 1 s admitted true, remaining 9
}
