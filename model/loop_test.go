package model_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// retrier sends at start, and then again as soon as an answer arrives: at
// once after an admit, at the Retry-After after a denial, until end.
type retrier struct {
	start, end int64
	replies    []record.Record
}

func (c *retrier) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return c.start, true
	}
	c.replies = append(c.replies, *last)
	next := last.Answered + last.Decision.RetryAfter
	return next, next < c.end
}

// A closed-loop client on one node with a true clock gets what the
// algorithm promises and no more: a token bucket of 10 per second, burst
// 10, retried at every Retry-After for one second, admits its burst at 0
// and then one each 100 ms (19 in all), and every retry at the Retry-After
// it was given is admitted.
func TestLoopClientRetriesAtRetryAfter(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	var c *retrier
	cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Limit: l, Deployment: model.Ideal, Nodes: 1,
		Loop: []record.LoopClient{{Key: 0, New: func() record.Client { c = &retrier{end: algos.Second}; return c }}}}
	res, err := model.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Keys[0].Admitted; got != 19 {
		t.Errorf("admitted %d, want 19 (a burst of 10, then one each 100 ms)", got)
	}
	if len(res.LoopRequests) != len(res.Outcomes) || len(c.replies) != len(res.Outcomes) {
		t.Fatalf("%d loop requests, %d outcomes, %d replies; want one of each per request", len(res.LoopRequests), len(res.Outcomes), len(c.replies))
	}
	for i := 1; i < len(c.replies); i++ {
		if !c.replies[i-1].Decision.Allowed && !c.replies[i].Decision.Allowed {
			t.Errorf("the retry at %s, at the Retry-After it was given, was denied", algos.FormatTime(c.replies[i].Sent))
		}
	}
	if res.Keys[0].Violation != nil {
		t.Errorf("the promise broke: %v", res.Keys[0].Violation)
	}
}

// Behind a store a round trip away, a closed-loop client's answer reaches
// it half a round trip (its own jittered leg) after the store decided, and
// it cannot send before that; the static requests on other keys are played
// exactly as without it (its balancer and legs are streams of their own).
func TestLoopClientWaitsForItsReplyAndMovesNoOtherRequest(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	static := []record.Request{{Key: 1, Sent: 0}, {Key: 1, Sent: 5_000}, {Key: 2, Sent: 7_000}, {Key: 1, Sent: 300_000}}
	base := model.Config{Limiter: limiter.FromAlgorithm(algos.GCRA), Limit: l, Deployment: model.StoreClock, Nodes: 4,
		RTT: 2_000, Jitter: model.DefaultJitter, Seed: 3, Requests: static}
	alone, err := model.Run(base)
	if err != nil {
		t.Fatal(err)
	}
	var c *retrier
	withLoop := base
	withLoop.Loop = []record.LoopClient{{Key: 0, New: func() record.Client { c = &retrier{start: 1, end: algos.Second}; return c }}}
	both, err := model.Run(withLoop)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone.Outcomes, both.Outcomes[:len(static)]) {
		t.Errorf("the static requests' outcomes moved when a closed-loop client joined:\n%v\n%v", alone.Outcomes, both.Outcomes[:len(static)])
	}
	loop := both.Outcomes[len(static):]
	if len(loop) != len(c.replies) || len(loop) < 20 {
		t.Fatalf("%d loop outcomes, %d replies", len(loop), len(c.replies))
	}
	for i, o := range loop {
		rep, req := c.replies[i], both.LoopRequests[i]
		switch {
		case o.Decided < req.Sent+750 || o.Decided > req.Sent+1250:
			t.Errorf("request %d sent at %d was decided at %d, not one leg (1 ms ±25%%) later", i, req.Sent, o.Decided)
		case rep.Answered < o.Decided+750 || rep.Answered > o.Decided+1250:
			t.Errorf("request %d decided at %d was answered at %d, not one leg later", i, o.Decided, rep.Answered)
		case i > 0 && req.Sent < c.replies[i-1].Answered:
			t.Errorf("request %d was sent at %d, before the answer to the one before arrived (%d)", i, req.Sent, c.replies[i-1].Answered)
		}
	}
}

// A client that asks to send before its answer arrived is an error, and
// so is one without New.
func TestLoopClientErrors(t *testing.T) {
	cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.GCRA), Limit: limit100, Deployment: model.StoreClock, Nodes: 1, RTT: 1000,
		Loop: []record.LoopClient{{Key: 0, New: func() record.Client { return early{} }}}}
	if _, err := model.Run(cfg); err == nil || !strings.Contains(err.Error(), "before the reply reached it") {
		t.Errorf("a client sending before its reply: %v", err)
	}
	cfg.Loop = []record.LoopClient{{Key: 0}}
	if _, err := model.Run(cfg); err == nil || !strings.Contains(err.Error(), "no New") {
		t.Errorf("a client without New: %v", err)
	}
}

type early struct{}

func (early) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return 10, true
	}
	return last.Answered - 1, true
}

// RunInto gives the Result Run gives, whatever the Result it reuses held
// before: runs of every deployment, with and without closed-loop clients,
// long and short, one after another into the same Result, each equal to
// its own Run (outcomes, closed-loop requests, keys, admit times, errors).
func TestRunIntoIsRun(t *testing.T) {
	long, short := traffic(3, 4*algos.Second), traffic(4, algos.Second)
	var reused model.Result
	for _, reqs := range [][]record.Request{long, short, long} {
		for _, loop := range []bool{true, false} {
			for _, a := range []algos.Algorithm{algos.TokenBucket, algos.SlidingLog} {
				for _, d := range model.Deployments() {
					cfg := tableConfig(a, d, 5, reqs)
					cfg.Skew = 50_000
					if loop {
						cfg.Loop = []record.LoopClient{{Key: 4, New: func() record.Client { return &retrier{end: 4 * algos.Second} }}}
					}
					want := mustRun(t, cfg)
					if err := model.RunInto(cfg, &reused); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(reused.Outcomes, want.Outcomes) || !slices.Equal(reused.LoopRequests, want.LoopRequests) || !slices.Equal(reused.Order, want.Order) ||
						digest(reused) != digest(want) || fmt.Sprint(reused.FirstError) != fmt.Sprint(want.FirstError) {
						t.Fatalf("%s %s, %d requests, loop %t: RunInto differs from Run", a.Name, d, len(reqs), loop)
					}
				}
			}
		}
	}
	bad := tableConfig(algos.TokenBucket, model.StoreClock, 5, short)
	bad.Nodes = 0
	if err := model.RunInto(bad, &reused); err == nil || reused.Outcomes != nil || reused.Keys != nil {
		t.Errorf("an invalid config: error %v, Result %+v, want an error and the zero Result", err, reused)
	}
}

// Result.Order lists every request once, in the order decided: by decision
// time, ties in request order, in every deployment but GET/SET, with
// closed-loop clients, skewed clocks and restarts.
func TestOrderIsTheDecisionOrder(t *testing.T) {
	reqs := traffic(6, 3*algos.Second)
	for _, a := range []algos.Algorithm{algos.TokenBucket, algos.FixedWindow} {
		for _, d := range model.Deployments() {
			cfg := tableConfig(a, d, 6, reqs)
			cfg.Skew, cfg.WipeAt, cfg.RestartEvery = 50_000, algos.Second, algos.Second
			cfg.Loop = []record.LoopClient{{Key: 4, New: func() record.Client { return &retrier{end: 3 * algos.Second} }}}
			res := mustRun(t, cfg)
			if len(res.Order) != len(res.Outcomes) {
				t.Fatalf("%s %s: %d in Order, %d outcomes", a.Name, d, len(res.Order), len(res.Outcomes))
			}
			seen := make([]bool, len(res.Outcomes))
			for k, i := range res.Order {
				if seen[i] {
					t.Fatalf("%s %s: request %d twice in Order", a.Name, d, i)
				}
				seen[i] = true
				if d == model.GetSet || k == 0 {
					continue
				}
				p := res.Order[k-1]
				if o, q := res.Outcomes[i], res.Outcomes[p]; o.Decided < q.Decided || (o.Decided == q.Decided && i < p) {
					t.Fatalf("%s %s: request %d (decided at %d) after request %d (decided at %d)", a.Name, d, i, o.Decided, p, q.Decided)
				}
			}
		}
	}
}
