package study

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/redis/go-redis/v9"
)

// What the live edge and caller-clock trials share: their workers'
// connections, the clock that times their plans, and the replay of every
// decision a script took through its Go twin.

// dialWorkers opens groups × per worker clients straight to the Redis of
// opt (conn.Dial), so that no dial is timed. On an error it closes every
// client it opened; otherwise the caller closes them with closeWorkers.
func dialWorkers(ctx context.Context, opt *redis.Options, groups, per int) ([][]*redis.Client, error) {
	clients := make([][]*redis.Client, groups)
	for g := range clients {
		var err error
		if clients[g], err = conn.Dial(ctx, opt, "", per); err != nil {
			closeWorkers(clients)
			return nil, fmt.Errorf("study: %w", err)
		}
	}
	return clients, nil
}

// closeWorkers closes every client dialWorkers opened.
func closeWorkers(clients [][]*redis.Client) {
	for _, cs := range clients {
		conn.Close(cs)
	}
}

// liveDecision is one request of a live trial as Redis decided it: when it
// was planned, the time the script decided at, its place in Redis's order
// (from 1), the script's decision, and the Go twin's at the same time (set
// by decideAgainInRedisOrder).
type liveDecision struct {
	planned, at, seq int64
	allowed, twin    bool
	// sent and answered are when the request left and its answer came
	// back, on the store's clock as the trial follows it (conn.Sync).
	sent, answered int64
}

// decideAgainInRedisOrder puts every worker's decisions in Redis's order
// and decides each again through the Go twin a, in a model.Store (the store
// the simulator and package replay drive), at the time the script decided
// at: it returns them with twin set, and how many decisions the two
// disagree on. An atomic script decides exactly as its twin at the same
// times, however the requests were scheduled, so that count must be 0.
// (Package replay does the same for a live run it recorded under MONITOR;
// a trial here numbers its decisions in Redis itself, and needs no more.)
func decideAgainInRedisOrder(a algos.Algorithm, l algos.Limit, perWorker [][]liveDecision) (all []liveDecision, differences int, err error) {
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

// recordsOf is what each worker of a trial on key saw of its requests, as
// records (the worker as node), in the order sent; seen reads a decision's
// send and answer times and whether it was admitted.
func recordsOf[D any](key string, perWorker [][]D, seen func(D) (sent, answered int64, allowed bool)) []record.Record {
	var out []record.Record
	for w, ds := range perWorker {
		for _, d := range ds {
			sent, answered, allowed := seen(d)
			out = append(out, record.Record{Key: key, Node: w, Sent: sent, Answered: answered,
				Answer: record.Answer{Decision: algos.Decision{Allowed: allowed}}})
		}
	}
	slices.SortStableFunc(out, func(a, b record.Record) int { return cmp.Compare(a.Sent, b.Sent) })
	return out
}

// liveSeen is what recordsOf reads of a live decision.
func liveSeen(d liveDecision) (sent, answered int64, allowed bool) {
	return d.sent, d.answered, d.allowed
}
