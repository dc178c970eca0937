package model_test

import (
	"context"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// toldLog is a token bucket that notes the time each call was told, in
// the order it was called.
type toldLog struct {
	limiter.Limiter
	told *[]int64
}

func (t toldLog) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	*t.told = append(*t.told, now)
	return t.Limiter.Allow(ctx, key, now)
}

// A run's records carry what the limiter was really told: in the order
// the run decided them (Result.Order), each record's Told is the time the
// limiter was handed, with clocks apart, drifting and stepped; each is
// decided within [Sent, Answered], states the whole Decision it got, and
// is ranked (Order) where the run decided it, which in these deployments
// is by decision time.
func TestRecordsCarryTheTimeTheLimiterWasTold(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 100)
	reqs := make([]record.Request, 0, 1200)
	for i := range 1200 {
		reqs = append(reqs, record.Request{Key: i % 2, Sent: int64(i) * 501})
	}
	clocks := model.Clocks{DriftPPM: []int64{300, -200, 0}, Steps: []model.Step{{Clock: 1, At: 200_000, By: -250_000}, {Clock: model.StoreClockStep, At: 300_000, By: 40_000}}}
	admitted, denied := 0, 0
	for _, c := range []struct {
		dep   model.Deployment
		clock limiter.Clock
	}{{model.Ideal, limiter.CallerClock}, {model.NodeClock, limiter.CallerClock}, {model.StoreClock, limiter.StoreClock},
		{model.LocalSplit, limiter.CallerClock}, {model.LocalFull, limiter.CallerClock}} {
		var told []int64
		spec := limiter.Spec{Name: "told-log", Clock: c.clock, Promise: algos.TokenBucket.Promise,
			New: func(l algos.Limit) (limiter.Limiter, error) {
				m, err := limiter.NewMemory(algos.TokenBucket, l)
				return toldLog{m, &told}, err
			}}
		cfg := model.Config{Limiter: spec, Limit: l, Deployment: c.dep, Nodes: 3, Skew: 30_000, Clocks: clocks, RTT: 1_000, Jitter: 25, Seed: 7, Requests: reqs}
		if c.dep == model.Ideal || c.dep == model.StoreClock {
			cfg.Skew = 0
		}
		res, err := model.Run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.dep, err)
		}
		recs, err := res.Records(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(reqs) || len(told) != len(reqs) {
			t.Fatalf("%s: %d records, %d calls, for %d requests", c.dep, len(recs), len(told), len(reqs))
		}
		admits := 0
		for k, i := range res.Order {
			r := recs[i]
			if r.Told != told[k] || !r.Seen.Has(record.SeenDecided|record.SeenTold|record.SeenOrder) {
				t.Fatalf("%s: call %d (request %d) was told %d, its record says %d (seen %b)", c.dep, k, i, told[k], r.Told, r.Seen)
			}
			if r.Order != int64(k+1) {
				t.Fatalf("%s: call %d (request %d) is ranked %d among the decisions", c.dep, k, i, r.Order)
			}
			if from, to := r.Span(); from != r.Decided || to != r.Decided || r.Decided < r.Sent || r.Answered < r.Decided {
				t.Fatalf("%s: record %d: sent %d, decided %d, answered %d, span [%d, %d]", c.dep, i, r.Sent, r.Decided, r.Answered, from, to)
			}
			if r.Known != record.FieldsDecision || r.Decision != res.Outcomes[i].Decision() || r.Key != []string{"0", "1"}[reqs[i].Key] {
				t.Fatalf("%s: record %d is %s, outcome %+v", c.dep, i, r, res.Outcomes[i])
			}
			if r.Allowed {
				admits++
			}
		}
		admitted += admits
		denied += len(reqs) - admits
	}
	if admitted == 0 || denied == 0 {
		t.Errorf("%d admitted, %d denied: the answers were not varied", admitted, denied)
	}
}

// Order ranks a run's decisions by time, also where the run made them in
// another order (GET, decide, SET: in the order the GETs reached the
// store), and every decision has its own rank.
func TestRecordsRankDecisionsByTime(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	reqs := make([]record.Request, 0, 400)
	for i := range 400 {
		reqs = append(reqs, record.Request{Key: i % 3, Sent: int64(i/4) * 2_000}) // four at each instant
	}
	cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.FixedWindow), Limit: l, Deployment: model.GetSet, Nodes: 3, RTT: 1_000, Jitter: 80, Seed: 3, Requests: reqs}
	res, err := model.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := res.Records(cfg)
	if err != nil {
		t.Fatal(err)
	}
	byOrder := make([]*record.Record, len(recs)+1)
	for i := range recs {
		r := &recs[i]
		if !r.Seen.Has(record.SeenOrder) || r.Order < 1 || r.Order > int64(len(recs)) || byOrder[r.Order] != nil {
			t.Fatalf("record %d: order %d (seen %b): not a rank of its own among %d", i, r.Order, r.Seen, len(recs))
		}
		byOrder[r.Order] = r
	}
	outOfTime := 0
	for k := 2; k < len(byOrder); k++ {
		if byOrder[k].Decided < byOrder[k-1].Decided {
			t.Fatalf("rank %d decided at %d, rank %d at %d", k, byOrder[k].Decided, k-1, byOrder[k-1].Decided)
		}
	}
	for k := 1; k < len(res.Order); k++ {
		if res.Outcomes[res.Order[k]].Decided < res.Outcomes[res.Order[k-1]].Decided {
			outOfTime++
		}
	}
	if outOfTime == 0 {
		t.Errorf("the run decided in time order: the ranks were not tested against another order")
	}
}
