package study

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/algos"
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
	// Records is every request as its worker saw it (record.Record): the
	// key, the worker as its node, when it was sent and answered on the
	// store's clock as the trial follows it (one Redis TIME at the start
	// plus this machine's monotonic time since), and whether it was
	// admitted. The time the script was told is not claimed: a caller's
	// clock is the trial's to choose, not a client's to see. In the order
	// sent. judge.Records holds them to the bucket promise as it holds any
	// service's.
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

	sends := plan.Sends()
	sync0, err := conn.Sync(ctx, admin)
	if err != nil {
		return nil, err
	}
	start := sync0.Store + 20*algos.Second/1000 // time to spare before the first send
	decided := make([][][]liveDecision, trials) // [trial][worker]
	errs := make([]error, trials*plan.Workers)
	var wg sync.WaitGroup
	for k := range clients {
		bucket, callerClock := buckets[k/2], k%2 == 1
		decided[k] = make([][]liveDecision, plan.Workers)
		for w := range plan.Workers {
			wg.Go(func() {
				dest := Destination{Client: clients[k][w], Key: keys[k], SeqKey: keys[k] + ":seq", Limit: plan.Limit}
				for _, s := range sends[w] {
					planned := start + s.Sent
					if err := sync0.SleepUntil(ctx, planned); err != nil {
						errs[k*plan.Workers+w] = err
						return
					}
					var ruling Ruling
					var err error
					at := int64(-1)
					sent := sync0.Now()
					if callerClock {
						at = sync0.Now() + plan.Offset(w)
						planned += plan.Offset(w) // in the clock at is read on
						ruling, err = bucket.AllowAt(ctx, dest, at)
					} else {
						ruling, err = bucket.Allow(ctx, dest)
						at = ruling.RedisTime
					}
					if err != nil {
						errs[k*plan.Workers+w] = err
						return
					}
					decided[k][w] = append(decided[k][w], liveDecision{planned: planned, at: at, seq: ruling.Seq, allowed: ruling.Allowed,
						sent: sent, answered: sync0.Now()})
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("study: caller-clock trial: %w", err)
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
		res[k].Records = recordsOf(keys[k], decided[k], liveSeen)
	}
	return res, nil
}
