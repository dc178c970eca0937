package study

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

// EdgeResult is what one script admitted in an edge trial.
type EdgeResult struct {
	Algorithm string // the script's Go twin's name
	Sent      int    // requests of the flood
	Admitted  int    // of them, admitted by the script
	// Most is the most admits in any window [s, s+W) of Redis TIME, the
	// time at which each script decided.
	Most int
	// Model is EdgeModel's Most for the same plan: the Go algorithm on one
	// node with no network, deciding at the planned times.
	Model int
	// Replayed is Most for the Go algorithm replayed at the Redis TIMEs the
	// script decided at, in Redis's order, and Differences counts the
	// decisions where it and the script disagree. An atomic script decides
	// exactly as its Go twin would at the same times, however the requests
	// were scheduled, so Differences must be 0 in every trial.
	Replayed, Differences int
	// Lag is the latest any request was decided after its planned time
	// (Redis TIME minus the plan), µs: how far a busy machine bent the plan.
	// Model describes the trial only while Lag is small (see EdgeMaxLag).
	Lag int64
	// Records is every request as its worker saw it (record.Record, as
	// SkewResult.Records): sent and answered on the store's clock as the
	// trial follows it, and whether it was admitted, in the order sent.
	Records []record.Record
}

// OnPlan reports whether every request was decided within EdgeMaxLag of
// its planned time, so that the trial ran the plan EdgeModel assumes.
func (r EdgeResult) OnPlan() bool { return r.Lag <= EdgeMaxLag }

// EdgeMaxLag is how late a request of an edge trial may be decided, after
// its planned time, for the trial to count as the plan: 40 ms. The counts
// the plan is built for need L requests decided before the edge (they are
// planned 200 ms or more ahead of it) and a request decided within the
// bucket's last refill interval of a window (50 ms at EdgeLimit, with a
// request planned every 5 ms); a lag under 40 ms keeps both.
const EdgeMaxLag = 40 * algos.Second / 1000

// RunEdge runs plan against every script at once, each on its own key
// (key + ":" + algorithm) with workers connections straight to the Redis of
// opt (its Addr, logging in with its credentials):
// the flood starts Lead before the next aligned window edge that leaves
// time to set up, and ends one window after that edge. The send times are Redis
// TIME, mapped to this machine's monotonic clock by one TIME read (good to a
// fraction of a loopback round trip, far below the plan's gaps). A request
// sent late (its worker was still waiting for the previous reply) is sent at
// once; Lag says how late the latest was. It returns one result a script,
// in order.
func RunEdge(ctx context.Context, opt *redis.Options, scripts []LuaScript, plan traffic.EdgePlan, workers int, key string) ([]EdgeResult, error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 {
		return nil, fmt.Errorf("study: an edge trial needs a worker, got %d", workers)
	}
	clients, err := dialWorkers(ctx, opt, len(scripts), workers)
	if err != nil {
		return nil, err
	}
	defer closeWorkers(clients)
	results := make([]EdgeResult, len(scripts))
	errs := make([]error, len(scripts))
	var wg sync.WaitGroup
	for i, s := range scripts {
		wg.Go(func() {
			results[i], errs[i] = runEdgeOnce(ctx, clients[i], s, plan, edgeKey(key, s))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return results, nil
}

// runEdgeOnce runs plan against one script, on its own workers' clients
// (the first also sets up, before the flood).
func runEdgeOnce(ctx context.Context, clients []*redis.Client, s LuaScript, plan traffic.EdgePlan, key string) (EdgeResult, error) {
	a := s.Algorithm()
	modelMost, err := EdgeModel(a, plan)
	if err != nil {
		return EdgeResult{}, err
	}
	admin := clients[0]
	seqKey := key + ":seq"
	if err := s.prepare(ctx, admin); err != nil {
		return EdgeResult{}, err
	}
	if err := admin.Del(ctx, key, seqKey).Err(); err != nil {
		return EdgeResult{}, err
	}
	defer admin.Del(context.WithoutCancel(ctx), key, seqKey)

	sync0, err := conn.Sync(ctx, admin)
	if err != nil {
		return EdgeResult{}, err
	}
	const setup = 20 * algos.Second / 1000 // time to spare before the flood starts
	w := plan.Limit.Window
	edge := (sync0.Store + plan.Lead + setup + w - 1) / w * w
	times := plan.Times(edge)

	workers := len(clients)
	decided := make([][]liveDecision, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for wi := range workers {
		wg.Go(func() {
			dest := Destination{Client: clients[wi], Key: key, SeqKey: seqKey, Limit: plan.Limit}
			for j := wi; j < len(times); j += workers {
				if err := sync0.SleepUntil(ctx, times[j]); err != nil {
					errs[wi] = err
					return
				}
				sent := sync0.Now()
				ruling, err := s.Allow(ctx, dest)
				if err != nil {
					errs[wi] = err
					return
				}
				decided[wi] = append(decided[wi], liveDecision{planned: times[j], at: ruling.RedisTime, seq: ruling.Seq, allowed: ruling.Allowed,
					sent: sent, answered: sync0.Now()})
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return EdgeResult{}, fmt.Errorf("study: edge trial of %s: %w", s.Name(), err)
	}

	all, differences, err := decideAgainInRedisOrder(a, plan.Limit, decided)
	if err != nil {
		return EdgeResult{}, err
	}
	r := EdgeResult{Algorithm: a.Name, Sent: len(times), Model: modelMost, Differences: differences, Records: recordsOf(key, decided, liveSeen)}
	var live, twin []int64
	for _, d := range all {
		r.Lag = max(r.Lag, d.at-d.planned)
		if d.allowed {
			live = append(live, d.at)
		}
		if d.twin {
			twin = append(twin, d.at)
		}
	}
	slices.Sort(live) // Redis's order is TIME's order; sorting only guards the metric
	r.Admitted = len(live)
	r.Most = algos.MostInAnyWindow(live, w)
	r.Replayed = algos.MostInAnyWindow(twin, w)
	return r, nil
}

func edgeKey(key string, s LuaScript) string { return key + ":" + s.Algorithm().Name }
