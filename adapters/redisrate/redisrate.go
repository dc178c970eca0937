package redisrate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/overshoot-go/overshoot/adapters/redislib"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// Name is the Spec's name, as reports print it.
const Name = "redis_rate"

// EpochUnixMicro is the store's clock, in µs of Unix time, for now = 0:
// 2025-01-01T00:00:00Z. The script subtracts 2017-01-01 (Unix 1 483 228 800 s)
// from TIME before it computes in float64 seconds, so the epoch is a fixed,
// realistic instant after that: the script's own time reads 252 460 800 s
// at now = 0, where a float64 steps by 2^-25 s (about 0.03 µs), as it does
// on a production Redis today. A now down to -EpochUnixMicro (the Unix
// epoch) is accepted; below that the simulated store has no clock.
const EpochUnixMicro = redislib.DefaultEpoch

// Spec is go-redis/redis_rate v10 as a limiter under test: named
// "redis_rate", a StoreClock limiter (its script reads Redis TIME and
// nothing else), promising GCRA's algos.BucketPromise.
//
// New opens a redislib.SimStore (a simredis.Server and a go-redis v9 client
// reaching it in process: one connection, no retries, connected before New
// returns), and
// enforces l as redis_rate.Limit{Rate, Burst, Period: Window µs}. The
// Limiter it returns implements io.Closer, which closes the client and then
// the server. Two limiters share nothing.
//
// Allow sets the store's clock to EpochUnixMicro + now (simredis.SetClock;
// calls come in order of now, as for every StoreClock limiter) and calls
// the library's Allow on the key's limiter.KeyName ("overshoot:<key>" below
// 1024, stored as "rate:overshoot:<key>": TAT in float64 seconds since
// 2017, with a TTL of ⌈reset⌉ s, written only on an admit; the isolation
// checks' moved keys get KeyName's long, colliding names). Its Result
// becomes:
//
//   - Allowed: Result.Allowed > 0.
//   - Remaining: Result.Remaining, a float the script computes and Redis
//     truncates toward zero when it returns it.
//   - RetryAfter: 0 when allowed; else Result.RetryAfter, which the library
//     truncates to the ns, rounded up to the µs.
//   - Reset: Result.ResetAfter (ns, truncated by the library) rounded up to
//     the µs.
//
// Any error — a clock that cannot be set (simredis.ErrClockBackwards, a
// closed server), the connection, the script — is returned as an error,
// never as a denial.
//
// What the float64 seconds do, measured in the tests against algos.GCRA
// (exact integers) and against the library itself (its TAT copied to a
// second store and probed). Near 2.5·10⁸ s a float64 steps by 2^-25 s,
// 0.03 µs; the script rounds its now and each TAT + T to that step, so its
// TAT drifts from GCRA's by a fraction of a step per admit while the key
// stays busy, one way or the other depending on the limit (at 10 a second
// 0.2 steps early per admit, at 7 per 3 s 0.14 late):
//
//   - Over 12 000 seeded calls (TestAgainstGCRA, T from 0.33 ms to 1 min)
//     every difference from GCRA is within that rounding: Allowed differs
//     on 49 (all GCRA admitting at its exact boundary, the library late by
//     its drift), Remaining, RetryAfter and Reset by at most 1. After a few
//     hundred admits in a row the lenient drift passes a µs and the library
//     admits a µs before GCRA would (TestDriftAdmitsEarly); an extra
//     request would take millions.
//   - Against itself, at those limits, Remaining is exactly what it then
//     admits, a retry at RetryAfter is always admitted and the key is idle
//     at Reset; but RetryAfter and Reset are often 1 µs longer than needed
//     (a float a few ns over a whole µs, rounded up), so a retry 1 µs
//     before RetryAfter may be admitted: ExactRetry is false. A retry that
//     is denied can so move the deadline now + RetryAfter 1 µs later. With
//     T of a few µs even Remaining is off (1 per 2 µs: Remaining 0, then
//     one more admitted).
//   - Where TAT + T rounds up (7 per 3 s, 3 per ms), Burst of those
//     roundings can add up to more than the half step by which the script's
//     allow_at may err, and an idle key then admits Burst - 1 at one
//     instant, not Burst, with Remaining one short from the first (7 per
//     3 s, burst 5, at a whole second: 4); the last is admitted 1 µs later.
//   - With T near the step the limit is wrong (1 per µs admits one per
//     1.013 µs), and below half a step TAT + T rounds back to TAT, the key
//     is never written, and every request is admitted (1001 per 2 µs).
//   - Before 2017 the script's time is negative and larger, its step too:
//     2^-22 s, 0.24 µs, at the Unix epoch (the simulated store's earliest
//     clock), where 20 admits at 10 a second leave TAT 1.9 µs early and a
//     request 1 µs before GCRA's time is admitted (TestBefore2017).
func Spec() limiter.Spec {
	return limiter.Spec{
		Name:      Name,
		Clock:     limiter.StoreClock,
		Promise:   algos.BucketPromise,
		Reference: algos.GCRA, // what redis_rate implements
		New:       newSim,
	}
}

// libLimit is l as the library takes it.
func libLimit(l algos.Limit) redis_rate.Limit {
	return redis_rate.Limit{Rate: int(l.Rate), Burst: int(l.Burst), Period: time.Duration(l.Window) * time.Microsecond}
}

// sim is one limiter of Spec: its own store and client (a redislib.SimStore,
// whose Server and Client the white-box tests also reach), and the library
// on them.
type sim struct {
	*redislib.SimStore
	lib   *redis_rate.Limiter
	limit redis_rate.Limit
}

func newSim(l algos.Limit) (limiter.Limiter, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("redisrate: %w", err)
	}
	st, err := redislib.Open(EpochUnixMicro)
	if err != nil {
		return nil, fmt.Errorf("redisrate: %w", err)
	}
	return &sim{SimStore: st, lib: redis_rate.NewLimiter(st.Client), limit: libLimit(l)}, nil
}

// Allow sets the store's clock to EpochUnixMicro + now and asks the library.
func (s *sim) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("redisrate: negative key %d", key)
	}
	if err := s.At(now); err != nil {
		return algos.Decision{}, fmt.Errorf("redisrate: %w", err)
	}
	return allow(ctx, s.lib, limiter.KeyName(key), s.limit)
}

// allow asks the library and maps its Result.
func allow(ctx context.Context, lib *redis_rate.Limiter, key string, limit redis_rate.Limit) (algos.Decision, error) {
	res, err := lib.Allow(ctx, key, limit)
	if err != nil {
		return algos.Decision{}, fmt.Errorf("redisrate: %w", err)
	}
	return decision(res), nil
}

// decision is the Result as an algos.Decision (see Spec).
func decision(res *redis_rate.Result) algos.Decision {
	d := algos.Decision{
		Allowed:   res.Allowed > 0,
		Remaining: int64(res.Remaining),
		Reset:     ceilMicros(res.ResetAfter),
	}
	if !d.Allowed {
		d.RetryAfter = ceilMicros(res.RetryAfter)
	}
	return d
}

// ceilMicros is d rounded up to the µs (toward +∞, for either sign).
func ceilMicros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if d%time.Microsecond > 0 {
		us++
	}
	return us
}

// OnClient is go-redis/redis_rate v10 on a Redis the caller owns (a real
// one), as a StoreClock Spec named name (Name if empty) with the same
// promise and Result mapping as Spec. Allow ignores now: the store's own
// clock decides. Each New takes a namespace of its own,
// "overshoot:<random>:", so that it starts with every key absent; its
// Limiter's Close deletes the keys it used (they would otherwise expire on
// their own within ⌈reset⌉ s) and leaves rdb open, for the caller to close.
func OnClient(name string, rdb redis.UniversalClient) limiter.Spec {
	if name == "" {
		name = Name
	}
	return limiter.Spec{
		Name:      name,
		Clock:     limiter.StoreClock,
		Promise:   algos.BucketPromise,
		Reference: algos.GCRA, // what redis_rate implements
		New: func(l algos.Limit) (limiter.Limiter, error) {
			lim, err := Connect(rdb, fmt.Sprintf("overshoot:%016x:", rand.Uint64()), l)
			if err != nil {
				return nil, err
			}
			return &owned{onClient: lim.(*onClient), used: -1}, nil
		},
	}
}

// Connect is go-redis/redis_rate v10 enforcing l on rdb, with key k stored
// as "rate:<prefix><k>": what one node of a live fleet runs. Limiters
// connected with the same prefix share every key, as the nodes of a fleet
// do (replay.Subject's Connect). Allow ignores now; the Limiter has no
// Close, since the keys are not its own.
func Connect(rdb redis.UniversalClient, prefix string, l algos.Limit) (limiter.Limiter, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("redisrate: %w", err)
	}
	if rdb == nil {
		return nil, errors.New("redisrate: no client")
	}
	return &onClient{lib: redis_rate.NewLimiter(rdb), limit: libLimit(l), prefix: prefix}, nil
}

// onClient is one limiter of Connect.
type onClient struct {
	lib    *redis_rate.Limiter
	limit  redis_rate.Limit
	prefix string
}

// Allow asks the library on the caller's store; now is ignored.
func (c *onClient) Allow(ctx context.Context, key int, _ int64) (algos.Decision, error) {
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("redisrate: negative key %d", key)
	}
	return allow(ctx, c.lib, c.prefix+fmt.Sprint(key), c.limit)
}

// owned is one limiter of OnClient: Connect's, in a namespace of its own,
// which it deletes when closed.
type owned struct {
	*onClient
	used int // the highest key asked for, -1 for none
}

func (o *owned) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	if key >= 0 {
		o.used = max(o.used, key)
	}
	return o.onClient.Allow(ctx, key, now)
}

// Close deletes the keys this limiter used, through the library's Reset;
// the first error is returned once all were tried.
func (o *owned) Close() error {
	var first error
	for key := 0; key <= o.used; key++ {
		if err := o.lib.Reset(context.Background(), o.prefix+fmt.Sprint(key)); err != nil && first == nil {
			first = fmt.Errorf("redisrate: %w", err)
		}
	}
	o.used = -1
	return first
}
