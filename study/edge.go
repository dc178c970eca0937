package study

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/redis/go-redis/v9"
)

// EdgeResult is what one script admitted in an edge trial.
type EdgeResult struct {
	Algorithm string
	Sent      int
	Admitted  int
	// Most is the most admits in any window [s, s+W) of Redis TIME, the
	// time at which each script decided.
	Most int
	// Model is EdgeModel's Most for the same plan: the Go algorithm on one
	// node with no network.
	Model int
}

// RunEdge runs plan against each script at once, each on its own key
// (key + ":" + algorithm) and its own workers connections straight to
// redisAddr: the flood starts Lead before the next aligned window edge that
// leaves time to set up, and ends one window after that edge. The send
// times are Redis TIME, mapped to this machine's monotonic clock by one TIME
// read (good to a fraction of a loopback round trip, far below the plan's
// gaps). A request sent late (its worker was still waiting for the previous
// reply) is sent at once.
func RunEdge(ctx context.Context, redisAddr string, scripts []Script, plan EdgePlan, workers int, key string) ([]EdgeResult, error) {
	if err := plan.Limit.Validate(); err != nil {
		return nil, err
	}
	if plan.Gap <= 0 || plan.Lead <= 0 || plan.Lead >= plan.Limit.Window || workers < 1 {
		return nil, fmt.Errorf("study: an edge plan needs 0 < Lead < W, Gap > 0 and a worker, got %+v and %d", plan, workers)
	}
	admin := newWorkerClient(redisAddr)
	defer admin.Close()
	clients := make([][]*redis.Client, len(scripts))
	defer func() {
		for _, cs := range clients {
			for _, c := range cs {
				c.Close()
			}
		}
	}()
	for i, s := range scripts {
		if err := s.prepare(ctx, admin); err != nil {
			return nil, err
		}
		if err := admin.Del(ctx, edgeKey(key, s)).Err(); err != nil {
			return nil, err
		}
		for range workers {
			c := newWorkerClient(redisAddr)
			clients[i] = append(clients[i], c)
			if err := c.Ping(ctx).Err(); err != nil {
				return nil, err
			}
		}
	}
	defer func() {
		for _, s := range scripts {
			admin.Del(context.WithoutCancel(ctx), edgeKey(key, s))
		}
	}()

	sync0, err := syncClock(ctx, admin)
	if err != nil {
		return nil, err
	}
	const setup = 20 * algos.Second / 1000 // time to spare before the flood starts
	w := plan.Limit.Window
	edge := (sync0.redis + plan.Lead + setup + w - 1) / w * w
	times := plan.Times(edge)

	results := make([]EdgeResult, len(scripts))
	admits := make([][][]int64, len(scripts)) // [script][worker] Redis TIME of admits
	errs := make([]error, len(scripts)*workers)
	var wg sync.WaitGroup
	for si, s := range scripts {
		results[si] = EdgeResult{Algorithm: s.Algorithm().Name, Sent: len(times), Model: EdgeModel(s.Algorithm(), plan)}
		admits[si] = make([][]int64, workers)
		for wi := range workers {
			wg.Go(func() {
				call := Call{Client: clients[si][wi], Key: edgeKey(key, s), Limit: plan.Limit}
				for j := wi; j < len(times); j += workers {
					time.Sleep(time.Until(sync0.local(times[j])))
					out, err := s.Allow(ctx, call)
					if err != nil {
						errs[si*workers+wi] = err
						return
					}
					if out.Allowed {
						admits[si][wi] = append(admits[si][wi], out.RedisTime)
					}
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("study: edge trial: %w", err)
	}
	for si := range scripts {
		all := slices.Concat(admits[si]...)
		slices.Sort(all)
		results[si].Admitted = len(all)
		results[si].Most = algos.MostInAnyWindow(all, w)
	}
	return results, nil
}

func edgeKey(key string, s Script) string { return key + ":" + s.Algorithm().Name }

// clockSync maps Redis TIME to this machine's monotonic clock: Redis read
// redis µs at the local instant at.
type clockSync struct {
	redis int64
	at    time.Time
}

// local is the local instant at which Redis TIME reads t.
func (s clockSync) local(t int64) time.Time {
	return s.at.Add(time.Duration(t-s.redis) * time.Microsecond)
}

// now is Redis TIME now, as this machine's monotonic clock follows it.
func (s clockSync) now() int64 {
	return s.redis + time.Since(s.at).Microseconds()
}

// syncClock reads Redis TIME once and places it at the middle of the round
// trip that read it.
func syncClock(ctx context.Context, c *redis.Client) (clockSync, error) {
	t0 := time.Now()
	t, err := c.Time(ctx).Result()
	if err != nil {
		return clockSync{}, fmt.Errorf("study: TIME: %w", err)
	}
	rtt := time.Since(t0)
	return clockSync{redis: t.UnixMicro(), at: t0.Add(rtt / 2)}, nil
}
