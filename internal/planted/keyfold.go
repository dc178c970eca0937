package planted

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/overshoot-go/overshoot/algos"
)

// KeysTruncatedName names the planted library KeysTruncated in reports.
const KeysTruncatedName = "planted-keys-truncated"

// KeysTruncatedBytes is how many leading bytes of its Redis key
// KeysTruncated keeps: more than any key below 1024 is named with
// ("overshoot:1023" is 14 bytes), fewer than the names of keys at or above
// 1024 share (limiter.KeyNameShared).
const KeysTruncatedBytes = 32

// KeysTruncated is a token bucket in one Lua script on go-redis, reading
// the store's clock (Redis TIME), as a redislib.Library's New takes it
// (redislib.AllowFunc is this function type):
//
//	redislib.Spec(redislib.Library{Name: planted.KeysTruncatedName,
//		Promise: algos.BucketPromise, ExactRetry: true, New: planted.KeysTruncated})
//
// It decides as algos.TokenBucket does, call for call, on the bucket it
// keeps under its key.
//
// PLANTED BUG: `local key = string.sub(KEYS[1], 1, 32)` instead of
// `local key = KEYS[1]`. The author bounds the memory a hostile key can
// take (or copies the key into a fixed-size buffer) and reasons that the
// first 32 bytes are unique enough. Every key with a short name keeps its
// own bucket and the whole contract, so a check that only ever uses short,
// ASCII, unlike keys passes it; two keys whose names share their first 32
// bytes (a long common prefix: a tenant, a route, a user's e-mail) share
// one bucket, each spending the other's burst.
func KeysTruncated(rdb *redis.Client, l algos.Limit) (func(ctx context.Context, key string) (algos.Decision, error), error) {
	return tokenBucketOn(rdb, l, keysTruncatedScript, KeysTruncatedName)
}

// KeysWhole is KeysTruncated without its bug: the same script keeping its
// bucket under the whole key, the twin the tests hold clean, so that what
// catches KeysTruncated is its truncation and nothing else.
func KeysWhole(rdb *redis.Client, l algos.Limit) (func(ctx context.Context, key string) (algos.Decision, error), error) {
	return tokenBucketOn(rdb, l, keysWholeScript, "token-bucket (Lua, whole keys)")
}

var (
	keysTruncatedScript = redis.NewScript(strings.Replace(tokenBucketLua, "KEYS[1]", fmt.Sprintf("string.sub(KEYS[1], 1, %d)", KeysTruncatedBytes), 1)) // PLANTED: was KEYS[1]
	keysWholeScript     = redis.NewScript(tokenBucketLua)
)

// tokenBucketLua is algos.TokenBucket in Lua on the store's clock: a hash
// of tokens (scaled by the limit's Unit) and the last refill, expiring a
// little after its reset, when a full bucket and an absent key decide
// alike. ARGV: capacity (Burst·Unit), unit, refill (scaled tokens a µs).
// Lua numbers are doubles: every value here is an integer below 2^53
// (algos.NewLimit keeps Burst·Unit below 2^52; Unix µs are near 2^51), so
// + - * are exact, and the one division, floordiv, is corrected to the
// exact quotient. It answers {allowed, remaining, retry-after, reset}.
const tokenBucketLua = `
local key = KEYS[1]
local capacity, unit, refill = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function floordiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
local function ceildiv(a, b) return floordiv(a + b - 1, b) end
local stored = redis.call("HMGET", key, "tokens", "last")
local tokens, last = tonumber(stored[1]), tonumber(stored[2])
if not tokens or not last then tokens, last = capacity, now end
local room, elapsed = capacity - tokens, now - last
if elapsed > 0 and room > 0 then
  if elapsed >= ceildiv(room, refill) then tokens = capacity else tokens = tokens + elapsed * refill end
end
local allowed, retry = 0, 0
if tokens >= unit then
  tokens, allowed = tokens - unit, 1
else
  retry = ceildiv(unit - tokens, refill)
end
local reset = ceildiv(capacity - tokens, refill)
redis.call("HSET", key, "tokens", string.format("%.0f", tokens), "last", string.format("%.0f", now))
redis.call("PEXPIRE", key, floordiv(reset, 1000) + 2)
return {allowed, floordiv(tokens, unit), retry, reset}`

// tokenBucketOn is script, a token bucket, enforcing l on rdb: each call
// runs it on the key and reads its answer.
func tokenBucketOn(rdb *redis.Client, l algos.Limit, script *redis.Script, name string) (func(ctx context.Context, key string) (algos.Decision, error), error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return func(ctx context.Context, key string) (algos.Decision, error) {
		r, err := script.Run(ctx, rdb, []string{key}, l.Capacity(), l.Unit, l.Refill).Int64Slice()
		if err != nil {
			return algos.Decision{}, err
		}
		if len(r) != 4 {
			return algos.Decision{}, fmt.Errorf("%s: the script answered %d values, want 4", name, len(r))
		}
		return algos.Decision{Allowed: r[0] == 1, Remaining: r[1], RetryAfter: r[2], Reset: r[3]}, nil
	}, nil
}
