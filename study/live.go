package study

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/redis/go-redis/v9"
)

// What the live edge and caller-clock trials share: their workers'
// connections, the clock that times their plans, and the replay of every
// decision a script took through its Go twin.

// dialWorkers opens groups × per worker clients straight to the Redis of
// opt and PINGs each in turn, so that no dial is timed. On an error it
// closes every client it opened; otherwise the caller closes them with
// closeWorkers.
func dialWorkers(ctx context.Context, opt *redis.Options, groups, per int) ([][]*redis.Client, error) {
	clients := make([][]*redis.Client, groups)
	for g := range clients {
		for range per {
			c := newWorkerClient(opt, opt.Addr)
			clients[g] = append(clients[g], c)
			if err := c.Ping(ctx).Err(); err != nil {
				closeWorkers(clients)
				return nil, err
			}
		}
	}
	return clients, nil
}

// closeWorkers closes every client dialWorkers opened.
func closeWorkers(clients [][]*redis.Client) {
	for _, cs := range clients {
		for _, c := range cs {
			c.Close()
		}
	}
}

// liveDecision is one request of a live trial as Redis decided it: when it
// was planned, the time the script decided at, its place in Redis's order
// (from 1), the script's decision, and the Go twin's at the same time (set
// by replay).
type liveDecision struct {
	planned, at, seq int64
	allowed, twin    bool
}

// replay puts every worker's decisions in Redis's order and decides each
// again through the Go twin a, in a model.Store (the store the simulator and
// package replay drive), at the time the script decided at: it returns them
// with twin set, and how many decisions the two disagree on. An atomic
// script decides exactly as its twin at the same times, however the
// requests were scheduled, so that count must be 0.
func replay(a algos.Algorithm, l algos.Limit, perWorker [][]liveDecision) (all []liveDecision, differences int, err error) {
	all = slices.Concat(perWorker...)
	slices.SortFunc(all, func(x, y liveDecision) int { return cmp.Compare(x.seq, y.seq) })
	store, err := model.NewStore(a, l, 1)
	if err != nil {
		return nil, 0, fmt.Errorf("study: replaying %s: %w", a.Name, err)
	}
	for i := range all {
		d := &all[i]
		d.twin = store.Call(0, d.at).Allowed
		if d.twin != d.allowed {
			differences++
		}
	}
	return all, differences, nil
}

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

// syncSamples is how many TIME reads syncClock takes the best of.
const syncSamples = 8

// syncClock reads Redis TIME syncSamples times and keeps the read with the
// shortest round trip, placed at that round trip's middle: the mapping is
// then off by at most half the shortest round trip, where a single read
// that a busy machine held for 100 ms would put every planned send of a
// trial up to 50 ms late.
func syncClock(ctx context.Context, c *redis.Client) (clockSync, error) {
	var best clockSync
	bestRTT := time.Duration(-1)
	for range syncSamples {
		t0 := time.Now()
		t, err := c.Time(ctx).Result()
		if err != nil {
			return clockSync{}, fmt.Errorf("study: TIME: %w", err)
		}
		if rtt := time.Since(t0); bestRTT < 0 || rtt < bestRTT {
			best, bestRTT = clockSync{redis: t.UnixMicro(), at: t0.Add(rtt / 2)}, rtt
		}
	}
	return best, nil
}
