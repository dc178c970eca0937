package study

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/redis/go-redis/v9"
)

// SkewResult is what one token bucket admitted in a caller-clock trial.
type SkewResult struct {
	// Clock is "redis" (the script reads Redis TIME) or "caller" (each
	// request carries its worker's own clock).
	Clock    string
	Skew     time.Duration
	Sent     int
	Admitted int
	// Allowed is what the limit lets through in the trial: B + L·T/W.
	Allowed int64
	// Model is SkewModel's admitted count for the same plan.
	Model int
}

// Share is Admitted over Allowed: 1 is a bucket that admits exactly what it
// is configured to.
func (r SkewResult) Share() float64 { return float64(r.Admitted) / float64(r.Allowed) }

// RunSkew runs plan twice at once, on two keys and two sets of worker
// connections straight to redisAddr: once with the token bucket reading
// Redis TIME, and once with every request carrying its worker's clock,
// which is true time plus the worker's offset. True time is one Redis TIME
// read at the start plus this machine's monotonic time since, so the only
// difference between the two buckets is the offsets.
func RunSkew(ctx context.Context, redisAddr string, plan SkewPlan, key string) (redisClock, callerClock SkewResult, err error) {
	if err := plan.Limit.Validate(); err != nil {
		return SkewResult{}, SkewResult{}, err
	}
	bucket, err := NewScript(algos.TokenBucket.Name)
	if err != nil {
		return SkewResult{}, SkewResult{}, err
	}
	admin := newWorkerClient(redisAddr)
	defer admin.Close()
	if err := bucket.prepare(ctx, admin); err != nil {
		return SkewResult{}, SkewResult{}, err
	}
	keys := [2]string{key + ":redis-clock", key + ":caller-clock"}
	if err := admin.Del(ctx, keys[:]...).Err(); err != nil {
		return SkewResult{}, SkewResult{}, err
	}
	defer admin.Del(context.WithoutCancel(ctx), keys[:]...)
	var clients [2][]*redis.Client
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
				return SkewResult{}, SkewResult{}, err
			}
		}
	}

	sends := plan.Sends()
	sync0, err := syncClock(ctx, admin)
	if err != nil {
		return SkewResult{}, SkewResult{}, err
	}
	start := sync0.redis + 20*algos.Second/1000 // time to spare before the first send
	var admitted [2][]int
	errs := make([]error, 2*plan.Workers)
	var wg sync.WaitGroup
	for k := range clients {
		admitted[k] = make([]int, plan.Workers)
		for w := range plan.Workers {
			wg.Go(func() {
				call := Call{Client: clients[k][w], Key: keys[k], Limit: plan.Limit}
				for _, s := range sends[w] {
					time.Sleep(time.Until(sync0.local(start + s.At)))
					var out Outcome
					var err error
					if k == 0 {
						out, err = bucket.Allow(ctx, call)
					} else {
						out, err = bucket.AllowAt(ctx, call, sync0.now()+plan.Offset(w))
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
		return SkewResult{}, SkewResult{}, fmt.Errorf("study: caller-clock trial: %w", err)
	}
	sent := 0
	for _, ws := range sends {
		sent += len(ws)
	}
	res := [2]SkewResult{}
	for k, clock := range []string{"redis", "caller"} {
		_, model := SkewModel(plan, k == 1)
		res[k] = SkewResult{Clock: clock, Skew: time.Duration(plan.Skew) * time.Microsecond, Sent: sent, Allowed: plan.Allowed(), Model: model}
		for _, n := range admitted[k] {
			res[k].Admitted += n
		}
	}
	return res[0], res[1], nil
}
