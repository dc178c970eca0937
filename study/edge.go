package study

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/live"
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
	// Records is every request as the live driver recorded it
	// (live.Drive), its worker as its node, in the order planned: sent and
	// answered on the store's clock as the trial follows it, decided at
	// the Redis TIME the script read, told that time, ranked in Redis's
	// order within a µs (record.SeenOrder), and whether it was admitted
	// (no count: the judge holds the admits, not the script's words).
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

	// The flood is a plan for the live driver, from its first request on:
	// request j is worker j mod workers's (the target's node), each worker
	// on a connection of its own, whose requests the connection sends one
	// at a time. The script reads Redis TIME and counts its calls, and the
	// target reports both, so each record carries the decision's instant
	// and its place in Redis's order.
	s0 := times[0]
	workers := len(clients)
	requests := make([]record.Record, len(times))
	for j, at := range times {
		requests[j] = record.Record{Key: key, Node: j % workers, Sent: at - s0}
	}
	target := live.Observer{Nodes: workers, Call: func(ctx context.Context, key string, node int) (live.Observation, error) {
		ruling, err := s.Allow(ctx, Destination{Client: clients[node], Key: key, SeqKey: seqKey, Limit: plan.Limit})
		if err != nil {
			return live.Observation{}, err
		}
		return ruling.seen(s0, ruling.RedisTime), nil
	}}
	recs, err := live.Drive(ctx, target, live.Load{Plan: requests, Start: sync0.Local(s0), Timeout: trialTimeout, MaxInFlight: len(requests)})
	if err == nil {
		err = firstError(recs)
	}
	if err != nil {
		return EdgeResult{}, fmt.Errorf("study: edge trial of %s: %w", s.Name(), err)
	}
	decided := make([]liveDecision, len(recs))
	for j, rec := range recs { // in the plan's order
		decided[j] = liveDecision{planned: times[j], at: s0 + rec.Decided, seq: rec.Order, allowed: rec.Allowed}
	}
	all, differences, err := decideAgainInRedisOrder(a, plan.Limit, decided)
	if err != nil {
		return EdgeResult{}, err
	}
	r := EdgeResult{Algorithm: a.Name, Sent: len(times), Model: modelMost, Differences: differences, Records: onStoreClock(recs, s0)}
	var admits, twin []int64
	for _, d := range all {
		r.Lag = max(r.Lag, d.at-d.planned)
		if d.allowed {
			admits = append(admits, d.at)
		}
		if d.twin {
			twin = append(twin, d.at)
		}
	}
	slices.Sort(admits) // Redis's order is TIME's order; sorting only guards the metric
	r.Admitted = len(admits)
	r.Most = algos.MostInAnyWindow(admits, w)
	r.Replayed = algos.MostInAnyWindow(twin, w)
	return r, nil
}

func edgeKey(key string, s LuaScript) string { return key + ":" + s.Algorithm().Name }
