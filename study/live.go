package study

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/redis/go-redis/v9"
)

// What the live edge and caller-clock trials share: their workers'
// connections, the target the live driver sends their plans to (a script
// that reports the Redis TIME and the order it decided in), and the
// replay of every decision a script took through its Go twin.

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
}

// decideAgainInRedisOrder puts a trial's decisions (in the order planned)
// in Redis's order and decides each again through the Go twin a, in a model.Store (the store
// the simulator and package replay drive), at the time the script decided
// at: it returns them with twin set, and how many decisions the two
// disagree on. An atomic script decides exactly as its twin at the same
// times, however the requests were scheduled, so that count must be 0.
// (Package replay does the same for a live run it recorded under MONITOR;
// a trial here numbers its decisions in Redis itself, and needs no more.)
func decideAgainInRedisOrder(a algos.Algorithm, l algos.Limit, decided []liveDecision) (all []liveDecision, differences int, err error) {
	all = slices.Clone(decided)
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

// trialTimeout bounds each request of a live trial: far past any answer
// a busy machine gives, so that a trial fails on a store that stopped
// answering, never on a slow one. A planned trial lets every request be in
// flight at once (Load.MaxInFlight): a stalled machine queues them on
// their workers' connections, which send them one at a time, as late as
// the stall made them, and Lag says how late.
const trialTimeout = time.Minute

// seen is what a script's ruling shows of its decision, as a live.Observer
// target reports it on a drive whose time 0 is the store's s0: the Redis
// TIME it decided at, the time it was told (told, on the store's clock:
// that TIME, or a caller's clock), its place in Redis's order, and whether
// it admitted (no count: a trial's records state none).
func (r Ruling) seen(s0, told int64) live.Observation {
	return live.Observation{Answer: record.Answer{Decision: algos.Decision{Allowed: r.Allowed}}, Decided: r.RedisTime - s0, Told: told - s0,
		Order: r.Seq, Has: record.SeenDecided | record.SeenTold | record.SeenOrder}
}

// firstError is the error of the first of a drive's records that has one:
// a trial's every request must be decided.
func firstError(recs []record.Record) error {
	for _, r := range recs {
		if r.Err != nil {
			return fmt.Errorf("request for %s at +%s: %w", r.Key, algos.FormatMicros(r.Sent), r.Err)
		}
	}
	return nil
}

// onStoreClock moves a drive's records, timed from its time 0 (the
// store's s0), onto the store's clock.
func onStoreClock(recs []record.Record, s0 int64) []record.Record {
	for i := range recs {
		r := &recs[i]
		r.Sent, r.Answered = r.Sent+s0, r.Answered+s0
		if r.Seen.Has(record.SeenDecided) {
			r.Decided += s0
		}
		if r.Seen.Has(record.SeenTold) {
			r.Told += s0
		}
	}
	return recs
}
