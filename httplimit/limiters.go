package httplimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Limiter decides one request for key, now. It must be safe for
// concurrent use: the middleware calls it from every request's goroutine.
// An error is a failure to decide (the store down, a timeout), which the
// middleware's Policy settles; it is never read as a denial.
type Limiter interface {
	Allow(ctx context.Context, key string) (algos.Decision, error)
}

// LimiterFunc is a function as a Limiter: the shortest way to put a user's
// own limiter behind the middleware.
type LimiterFunc func(ctx context.Context, key string) (algos.Decision, error)

// Allow calls f.
func (f LimiterFunc) Allow(ctx context.Context, key string) (algos.Decision, error) {
	return f(ctx, key)
}

// Script is script on the store c, shared by every node given the same
// prefix: key k lives at prefix+k. It decides by the store's clock (Redis
// TIME), so the nodes of a fleet agree on the time whatever their own
// clocks say. Give c ContextTimeoutEnabled, or Options.Timeout cannot
// bound a call to a store that stops answering.
//
// After a call that got no answer (a timeout, a closed connection; not an
// error Redis answered), Script pings the store in the background with a
// budget of its own (RewarmTimeout), so that the pool holds a connection
// that has done its handshake once the store answers again; it sends one
// when c can ping, none is under way, and the last, if answered, ended
// longer ago than it took (the connection it left in the pool is the
// calls' to find first). Without it a store that comes back may stay
// unreachable: every connection the outage broke is replaced by a fresh
// one, go-redis does a fresh connection's handshake (HELLO) within the
// first call on it, and when a handshake and a script call do not fit in
// one call's budget (a store far away, or slowed down) each call fails,
// its connection is dropped and the next call starts again, for as long
// as the store stays slow (package drills shows both:
// TestScriptReachesASlowStoreThatAHandshakeCannotReachInOneBudget).
func Script(c redis.Scripter, script *lua.Script, prefix string, l algos.Limit) (Limiter, error) {
	if c == nil || script == nil {
		return nil, errors.New("httplimit: Script needs a Redis client and a script")
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("httplimit: %w", err)
	}
	pinger, _ := c.(interface {
		Ping(context.Context) *redis.StatusCmd
	})
	var pinging atomic.Bool
	// No ping before quietUntil (the last one's answer is the calls'), in
	// ns since born on the monotonic clock: a step of the wall clock must
	// not shorten the quiet time.
	born := time.Now()
	var quietUntil atomic.Int64
	return LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
		reply, err := script.Call(ctx, c, prefix+key, l, -1)
		var answered redis.Error
		if err != nil && pinger != nil && !errors.As(err, &answered) &&
			int64(time.Since(born)) >= quietUntil.Load() && pinging.CompareAndSwap(false, true) {
			go func() {
				defer pinging.Store(false)
				ctx, cancel := context.WithTimeout(context.Background(), RewarmTimeout)
				defer cancel()
				start := time.Now()
				if pinger.Ping(ctx).Err() == nil {
					// The connection it left in the pool is the calls': a
					// ping right after would take it from them. For as long
					// as the ping took, the calls have it first.
					end := time.Now()
					quietUntil.Store(int64(end.Add(end.Sub(start)).Sub(born)))
				}
			}()
		}
		return reply.Decision, err
	}), nil
}

// RewarmTimeout is the budget of the ping Script sends after a call that
// got no answer: long enough for a fresh connection's dial and handshake
// on a busy host, short enough that a ping into a store that still does
// not answer gives way to the next.
const RewarmTimeout = time.Second

// Local is spec held in this process, enforcing l: each node that makes
// its own has limits of its own, which is what a per-instance limiter in a
// fleet is. A CallerClock spec is told clock() (µs; nil is this machine's
// Unix time, so that windows align to the epoch as a script's do). Keys
// are numbered in the order they are first seen, and calls are serialised,
// since a limiter.Limiter is not called concurrently.
func Local(spec limiter.Spec, l algos.Limit, clock func() int64) (Limiter, error) {
	lim, err := spec.Open(l)
	if err != nil {
		return nil, fmt.Errorf("httplimit: %w", err)
	}
	if clock == nil {
		clock = func() int64 { return time.Now().UnixMicro() }
	}
	loc := &local{lim: lim, clock: clock, keys: map[string]int{}}
	return loc, nil
}

type local struct {
	mu    sync.Mutex
	lim   limiter.Limiter
	clock func() int64
	keys  map[string]int
}

func (l *local) Allow(ctx context.Context, key string) (algos.Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k, ok := l.keys[key]
	if !ok {
		k = len(l.keys)
		l.keys[key] = k
	}
	return limiter.Allow(ctx, l.lim, k, l.clock())
}

// GetThenIncr is the fixed window written the common wrong way
// (lua.GetThenIncr: GET the count, INCR it if below the limit) on the
// store c, by this machine's clock: every request that GETs before the
// others' INCRs land sees room. It is here so that its excess can be
// measured through HTTP beside the script's. Remaining is the window's
// room as the GET saw it, so it is as wrong as the decision.
func GetThenIncr(c redis.Cmdable, prefix string, l algos.Limit) (Limiter, error) {
	if c == nil {
		return nil, errors.New("httplimit: GetThenIncr needs a Redis client")
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("httplimit: %w", err)
	}
	return LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
		now := time.Now().UnixMicro()
		ok, seen, err := lua.GetThenIncrSeen(ctx, c, prefix+key, l, now)
		if err != nil {
			return algos.Decision{}, fmt.Errorf("httplimit: %w", err)
		}
		left := (now/l.Window+1)*l.Window - now
		d := algos.Decision{Allowed: ok, Reset: left, Remaining: max(0, l.Rate-seen-1)}
		if !ok {
			d.Remaining, d.RetryAfter = 0, left
		}
		return d, nil
	}), nil
}

// QuotaOf is what X-RateLimit-Limit should advertise for spec under l: the
// most requests a fresh key is admitted at one instant (a bucket's burst, a
// window's rate), learnt by asking a fresh limiter once.
func QuotaOf(spec limiter.Spec, l algos.Limit) (int64, error) {
	lim, err := spec.Open(l)
	if err != nil {
		return 0, fmt.Errorf("httplimit: %w", err)
	}
	defer limiter.Close(lim)
	d, err := limiter.Allow(context.Background(), lim, 0, 1000*l.Window)
	if err != nil {
		return 0, fmt.Errorf("httplimit: asking %q for its quota: %w", spec.Name, err)
	}
	if !d.Allowed {
		return 0, fmt.Errorf("httplimit: %q denied a fresh key's first request", spec.Name)
	}
	return d.Remaining + 1, nil
}
