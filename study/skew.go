package study

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

// SkewResult is what one token bucket admitted in a caller-clock trial.
type SkewResult struct {
	// Bucket is the algorithm's name (one of the SkewBuckets).
	Bucket string
	// Clock is "redis" (the script reads Redis TIME) or "caller" (each
	// request carries its worker's own clock).
	Clock string
	// Skew is the plan's skew: the distance between the first and the last
	// worker's clock (traffic.SkewPlan.Skew); the reports print ±Skew/2.
	Skew     time.Duration
	Sent     int // requests of the plan
	Admitted int // of them, admitted by the script
	// Allowed is what the limit lets through in the trial: B + L·T/W.
	Allowed int64
	// Model is SkewModel's admitted count for the same bucket and plan, at
	// the planned send times.
	Model int
	// Replayed is what the Go bucket admits when replayed at the times the
	// script decided at (Redis TIME, or the time the caller sent), in Redis's
	// order; Differences counts the decisions where the two disagree. The
	// script is atomic, so Differences is 0 however the machine scheduled
	// the requests, while Admitted may drift from Model when it was busy.
	Replayed, Differences int
	// Span is from the first decision to the last, in the clock that
	// decided (µs): the bucket promise allows at most B + L·Span/W admits.
	Span int64
	// Lag is the latest any request was decided after its planned time, µs,
	// in the clock that decided (Redis TIME, or the caller's clock, whose
	// plan is shifted by its offset): how far a busy machine bent the plan.
	Lag int64
	// Records is every request as the live driver recorded it
	// (live.Drive), in the order planned: the key, the worker as its node,
	// when it was sent and answered on the store's clock as the trial
	// follows it (one Redis TIME at the start plus this machine's
	// monotonic time since), decided at the Redis TIME the script read,
	// told the time it was told (that TIME, or its worker's clock),
	// ranked in Redis's order within a µs (record.SeenOrder), and whether
	// it was admitted (no count). judge.Records holds them to the bucket
	// promise as it holds any service's.
	Records []record.Record
}

// Promised is the most the bucket promise allows over the trial's actual
// span: B + L·Span/W.
func (r SkewResult) Promised(l algos.Limit) int64 {
	return l.Burst + l.Rate*r.Span/l.Window
}

// skewAllowed is what the limit lets through in the plan's duration: the
// burst plus the rate times the duration, B + L·T/W.
func skewAllowed(p traffic.SkewPlan) int64 {
	return p.Limit.Burst + p.Limit.Rate*p.Duration/p.Limit.Window
}

// Share is Admitted over Allowed: 1 is a bucket that admits exactly what it
// is configured to.
func (r SkewResult) Share() float64 { return float64(r.Admitted) / float64(r.Allowed) }

// RunSkew runs plan against every bucket twice, all at once, each on its
// own key and its own worker connections straight to the Redis of opt (its
// Addr, logging in with its credentials): once with
// the script reading Redis TIME, and once with every request carrying its
// worker's clock, which is true time plus the worker's offset. True time is
// one Redis TIME read at the start plus this machine's monotonic time since,
// so the only difference between a bucket's two keys is the offsets, and
// between the buckets their arithmetic. It returns, for each bucket in
// order, the Redis-clock result and then the caller-clock one.
func RunSkew(ctx context.Context, opt *redis.Options, plan traffic.SkewPlan, buckets []LuaScript, key string) ([]SkewResult, error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	if len(buckets) == 0 {
		return nil, errors.New("study: a caller-clock trial needs a bucket")
	}
	// Trial k is bucket k/2; even k read Redis TIME, odd k carry callers' clocks.
	trials := 2 * len(buckets)
	res := make([]SkewResult, trials)
	for k := range res {
		a, callerClock := buckets[k/2].Algorithm(), k%2 == 1
		clock := "redis"
		if callerClock {
			clock = "caller"
		}
		n, modelAdmitted, err := SkewModel(a, plan, callerClock)
		if err != nil {
			return nil, err
		}
		res[k] = SkewResult{Bucket: a.Name, Clock: clock, Skew: time.Duration(plan.Skew) * time.Microsecond,
			Sent: n, Allowed: skewAllowed(plan), Model: modelAdmitted}
	}
	admin := redis.NewClient(conn.Options(opt, ""))
	defer admin.Close()
	var keys []string
	for _, b := range buckets {
		if err := b.prepare(ctx, admin); err != nil {
			return nil, err
		}
		keys = append(keys, key+":"+b.Algorithm().Name+":redis-clock", key+":"+b.Algorithm().Name+":caller-clock")
	}
	var stored []string // each key and its order counter
	for _, k := range keys {
		stored = append(stored, k, k+":seq")
	}
	if err := admin.Del(ctx, stored...).Err(); err != nil {
		return nil, err
	}
	defer admin.Del(context.WithoutCancel(ctx), stored...)
	clients, err := dialWorkers(ctx, opt, trials, plan.Workers)
	if err != nil {
		return nil, err
	}
	defer closeWorkers(clients)

	// Every trial's sends are one plan for the live driver: trial k's
	// worker w is the target's node k·Workers + w, on a connection of its
	// own, whose requests it sends one at a time. The plan starts on the
	// store's clock (s0, a little after one TIME read), which is true
	// time; a caller-clock request tells the script its worker's clock,
	// true time plus the worker's offset, and the target reports that as
	// the time told (a Redis-clock one, the TIME the script read).
	sync0, err := conn.Sync(ctx, admin)
	if err != nil {
		return nil, err
	}
	s0 := sync0.Store + 20*algos.Second/1000 // time to spare before the first send
	sends := slices.Concat(plan.Sends()...)
	slices.SortStableFunc(sends, func(a, b traffic.SkewSend) int { return cmp.Compare(a.Sent, b.Sent) })
	// The plan, by Sent: each send, trial after trial.
	requests := make([]record.Record, 0, trials*len(sends))
	for _, send := range sends {
		for k := range trials {
			requests = append(requests, record.Record{Key: keys[k], Node: k*plan.Workers + send.Worker, Sent: send.Sent})
		}
	}
	target := live.Observer{Nodes: trials * plan.Workers, Call: func(ctx context.Context, key string, node int) (live.Observation, error) {
		k, w := node/plan.Workers, node%plan.Workers
		dest := Destination{Client: clients[k][w], Key: key, SeqKey: key + ":seq", Limit: plan.Limit}
		if k%2 == 1 { // the worker's own clock
			told := sync0.Now() + plan.Offset(w)
			ruling, err := buckets[k/2].AllowAt(ctx, dest, told)
			return ruling.seen(s0, told), err
		}
		ruling, err := buckets[k/2].Allow(ctx, dest)
		return ruling.seen(s0, ruling.RedisTime), err
	}}
	recs, err := live.Drive(ctx, target, live.Load{Plan: requests, Start: sync0.Local(s0), Timeout: trialTimeout, MaxInFlight: len(requests)})
	if err == nil {
		err = firstError(recs)
	}
	if err != nil {
		return nil, fmt.Errorf("study: caller-clock trial: %w", err)
	}
	decided := make([][]liveDecision, trials)
	byTrial := make([][]record.Record, trials)
	for i, rec := range recs { // in the plan's order
		k, w := rec.Node/plan.Workers, rec.Node%plan.Workers
		planned := s0 + requests[i].Sent
		if k%2 == 1 {
			planned += plan.Offset(w) // in the clock the script was told
		}
		rec.Node = w // each trial's records name its workers, from 0
		decided[k] = append(decided[k], liveDecision{planned: planned, at: s0 + rec.Told, seq: rec.Order, allowed: rec.Allowed})
		byTrial[k] = append(byTrial[k], rec)
	}
	for k := range res {
		all, differences, err := decideAgainInRedisOrder(buckets[k/2].Algorithm(), plan.Limit, decided[k])
		if err != nil {
			return nil, err
		}
		res[k].Differences = differences
		var first, last int64
		for i, d := range all {
			if i == 0 {
				first, last = d.at, d.at
			}
			first, last = min(first, d.at), max(last, d.at)
			res[k].Lag = max(res[k].Lag, d.at-d.planned)
			if d.allowed {
				res[k].Admitted++
			}
			if d.twin {
				res[k].Replayed++
			}
		}
		res[k].Span = last - first
		res[k].Records = onStoreClock(byTrial[k], s0)
	}
	return res, nil
}
