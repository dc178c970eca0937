package study

import (
	"context"
	_ "embed" // negative_refill.lua
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/algos/lua"
	"github.com/redis/go-redis/v9"
)

// negativeRefillBody is the Lua twin of algos.PlantedTokenBucketNegativeRefill,
// a body for lua.FromSource.
//
//go:embed negative_refill.lua
var negativeRefillBody string

// NegativeRefillLimiter is the script of algos.PlantedTokenBucketNegativeRefill:
// its Lua body after the shared prelude, through lua.FromSource, with the Go
// twin it is held to call for call. It exists for the caller-clock trials;
// like its twin it is a planted bug, never to limit anything.
func NegativeRefillLimiter() (*lua.Limiter, error) {
	l, err := lua.FromSource(algos.PlantedTokenBucketNegativeRefill, negativeRefillBody)
	if err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	return l, nil
}

// SkewScript is the script of one of the SkewBuckets: NewScript for a
// registered algorithm, NegativeRefillLimiter's for the planted one.
func SkewScript(a algos.Algorithm) (Script, error) {
	if a.Name == algos.PlantedTokenBucketNegativeRefill.Name {
		l, err := NegativeRefillLimiter()
		if err != nil {
			return Script{}, err
		}
		return Script{limiter: l}, nil
	}
	return NewScript(a.Name)
}

// SkewResult is what one token bucket admitted in a caller-clock trial.
type SkewResult struct {
	// Bucket is the algorithm's name (one of the SkewBuckets).
	Bucket string
	// Clock is "redis" (the script reads Redis TIME) or "caller" (each
	// request carries its worker's own clock).
	Clock    string
	Skew     time.Duration
	Sent     int
	Admitted int
	// Allowed is what the limit lets through in the trial: B + L·T/W.
	Allowed int64
	// Model is SkewModel's admitted count for the same bucket and plan.
	Model int
}

// Share is Admitted over Allowed: 1 is a bucket that admits exactly what it
// is configured to.
func (r SkewResult) Share() float64 { return float64(r.Admitted) / float64(r.Allowed) }

// RunSkew runs plan against every bucket twice, all at once, each on its
// own key and its own worker connections straight to redisAddr: once with
// the script reading Redis TIME, and once with every request carrying its
// worker's clock, which is true time plus the worker's offset. True time is
// one Redis TIME read at the start plus this machine's monotonic time since,
// so the only difference between a bucket's two keys is the offsets, and
// between the buckets their arithmetic. It returns, for each bucket in
// order, the Redis-clock result and then the caller-clock one.
func RunSkew(ctx context.Context, redisAddr string, plan SkewPlan, buckets []Script, key string) ([]SkewResult, error) {
	if err := plan.Limit.Validate(); err != nil {
		return nil, err
	}
	if len(buckets) == 0 {
		return nil, errors.New("study: a caller-clock trial needs a bucket")
	}
	admin := newWorkerClient(redisAddr)
	defer admin.Close()
	// Trial k is bucket k/2; even k read Redis TIME, odd k carry callers' clocks.
	var keys []string
	for _, b := range buckets {
		if err := b.prepare(ctx, admin); err != nil {
			return nil, err
		}
		keys = append(keys, key+":"+b.Algorithm().Name+":redis-clock", key+":"+b.Algorithm().Name+":caller-clock")
	}
	if err := admin.Del(ctx, keys...).Err(); err != nil {
		return nil, err
	}
	defer admin.Del(context.WithoutCancel(ctx), keys...)
	clients := make([][]*redis.Client, len(keys))
	defer func() {
		for _, cs := range clients {
			for _, c := range cs {
				c.Close()
			}
		}
	}()
	for k := range clients {
		for range plan.Workers {
			c := newWorkerClient(redisAddr)
			clients[k] = append(clients[k], c)
			if err := c.Ping(ctx).Err(); err != nil {
				return nil, err
			}
		}
	}

	sends := plan.Sends()
	sync0, err := syncClock(ctx, admin)
	if err != nil {
		return nil, err
	}
	start := sync0.redis + 20*algos.Second/1000 // time to spare before the first send
	admitted := make([][]int, len(keys))
	errs := make([]error, len(keys)*plan.Workers)
	var wg sync.WaitGroup
	for k := range clients {
		bucket, callerClock := buckets[k/2], k%2 == 1
		admitted[k] = make([]int, plan.Workers)
		for w := range plan.Workers {
			wg.Go(func() {
				call := Call{Client: clients[k][w], Key: keys[k], Limit: plan.Limit}
				for _, s := range sends[w] {
					time.Sleep(time.Until(sync0.local(start + s.At)))
					var out Outcome
					var err error
					if callerClock {
						out, err = bucket.AllowAt(ctx, call, sync0.now()+plan.Offset(w))
					} else {
						out, err = bucket.Allow(ctx, call)
					}
					if err != nil {
						errs[k*plan.Workers+w] = err
						return
					}
					if out.Allowed {
						admitted[k][w]++
					}
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("study: caller-clock trial: %w", err)
	}
	sent := 0
	for _, ws := range sends {
		sent += len(ws)
	}
	res := make([]SkewResult, len(keys))
	for k := range res {
		a, callerClock := buckets[k/2].Algorithm(), k%2 == 1
		clock := "redis"
		if callerClock {
			clock = "caller"
		}
		_, model := SkewModel(a, plan, callerClock)
		res[k] = SkewResult{Bucket: a.Name, Clock: clock, Skew: time.Duration(plan.Skew) * time.Microsecond, Sent: sent, Allowed: plan.Allowed(), Model: model}
		for _, n := range admitted[k] {
			res[k].Admitted += n
		}
	}
	return res, nil
}
