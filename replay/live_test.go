package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/scenarios"
)

func tokenBucketScript(t *testing.T) replay.Subject {
	t.Helper()
	s, err := replay.Script(algos.TokenBucket)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlayLiveRefusesWhatItCannotPlay(t *testing.T) {
	script := tokenBucketScript(t)
	storeClock := script
	storeClock.Spec.Clock = limiter.StoreClock
	base := replay.Live{Name: "bad", Subject: script, Limit: oneAtATime, Deployment: model.NodeClock, Nodes: 1,
		Requests: []model.Request{{Key: 0, Send: 0}}}
	for _, tc := range []struct {
		name string
		edit func(*replay.Live)
		want string
	}{
		{"a caller-clock limiter on the store's clock", func(l *replay.Live) { l.Deployment = model.StoreClock }, "played live with node clocks"},
		{"a local split", func(l *replay.Live) { l.Deployment = model.LocalSplit }, "played live with node clocks"},
		{"a store-clock limiter on node clocks", func(l *replay.Live) { l.Subject = storeClock }, "played live as model.StoreClock"},
		{"a store-clock limiter with skew", func(l *replay.Live) {
			l.Subject, l.Deployment, l.Skew = storeClock, model.StoreClock, 1000
		}, "cannot reach it"},
		{"a store-clock limiter with a node's step", func(l *replay.Live) {
			l.Subject, l.Deployment = storeClock, model.StoreClock
			l.Clocks.Steps = []model.Step{{Clock: 0, At: 1, By: 1}}
		}, "cannot reach it"},
		{"a step of the store's clock", func(l *replay.Live) {
			l.Clocks.Steps = []model.Step{{Clock: model.StoreClockStep, At: 1, By: 1}}
		}, "made on the store itself"},
		{"no Connect", func(l *replay.Live) { l.Subject.Connect = nil }, "has no Connect"},
		{"no Spec", func(l *replay.Live) { l.Subject.Spec = limiter.Spec{} }, "needs a Name"},
		{"no requests", func(l *replay.Live) { l.Requests = nil }, "no requests"},
		{"no nodes", func(l *replay.Live) { l.Nodes = 0 }, "at least one"},
		{"a zero limit", func(l *replay.Live) { l.Limit = algos.Limit{} }, "limit"},
		{"an unreachable Redis", func(l *replay.Live) {}, "127.0.0.1:1"},
	} {
		lv := base
		tc.edit(&lv)
		rec, err := replay.PlayLive(context.Background(), "127.0.0.1:1", "live-test:", lv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: PlayLive = %v, %v; want an error saying %q", tc.name, rec, err, tc.want)
		}
	}
}

// A node whose Connect fails, panics or returns nothing stops the run with
// an error naming the node, before any request is sent.
func TestPlayLiveReportsAConnectThatFails(t *testing.T) {
	s := redistest.Start(t)
	script := tokenBucketScript(t)
	for _, tc := range []struct {
		name    string
		connect func(replay.Node) (limiter.Limiter, error)
		want    string
	}{
		{"an error", func(n replay.Node) (limiter.Limiter, error) {
			if n.Index == 1 {
				return nil, errors.New("no such library")
			}
			return script.Connect(n)
		}, "node 1: no such library"},
		{"a panic", func(replay.Node) (limiter.Limiter, error) { panic("boom") }, "node 0: Connect panicked: boom"},
		{"nothing", func(replay.Node) (limiter.Limiter, error) { return nil, nil }, "returned no limiter"},
	} {
		subject := script
		subject.Connect = tc.connect
		lv := replay.Live{Name: tc.name, Subject: subject, Limit: oneAtATime, Deployment: model.NodeClock, Nodes: 2,
			Requests: []model.Request{{Key: 0, Send: 0}}}
		rec, err := replay.PlayLive(context.Background(), s.Addr, s.Prefix(t)+"connect:", lv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: PlayLive = %v, %v; want an error saying %q", tc.name, rec, err, tc.want)
		}
	}
}

// failingEvery is a limiter that returns an error on every nth call it
// gets, and otherwise asks the limiter it wraps.
type failingEvery struct {
	limiter.Limiter
	n, calls int
}

func (f *failingEvery) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	f.calls++
	if f.calls%f.n == 0 {
		return algos.Decision{}, fmt.Errorf("call %d failed on purpose", f.calls)
	}
	return f.Limiter.Allow(ctx, key, now)
}

// Played live, a fleet of the token bucket's script (4 nodes, 2 s of the
// scenarios' traffic at 100/s) is decided again by its simulated twin from
// the recording alone: in the order MONITOR showed the calls, at the times
// the nodes told them. Nothing is left to estimate, so the twin must decide
// every call as Redis did. An error on every 7th call of a node is counted
// as an error, never as a denial.
func TestPlayLiveAgreesWithItsReplay(t *testing.T) {
	t.Parallel() // it mostly waits for real time; MONITOR's order is exact under load
	s := redistest.Start(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := scenarios.Traffic(1, limit, 2*algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	script := tokenBucketScript(t)
	failing := script
	failing.Connect = func(n replay.Node) (limiter.Limiter, error) {
		lim, err := script.Connect(n)
		return &failingEvery{Limiter: lim, n: 7}, err
	}
	for i, subject := range []replay.Subject{script, failing} {
		lv := replay.Live{Name: fmt.Sprintf("token-bucket script %d", i), Subject: subject, Limit: limit,
			Deployment: model.NodeClock, Nodes: 4, Seed: 1, Requests: requests}
		rec, err := replay.PlayLive(context.Background(), s.Addr, fmt.Sprintf("%slive:%d:", s.Prefix(t), i), lv)
		if err != nil {
			t.Fatal(err)
		}
		live := rec.Live()
		replayed, differ, err := rec.Replay()
		if err != nil {
			t.Fatal(err)
		}
		var report strings.Builder
		if err := rec.Report(&report); err != nil {
			t.Fatal(err)
		}
		t.Log("\n" + report.String())
		wantErrors := 0
		if i == 1 {
			perNode := make([]int, lv.Nodes)
			for _, c := range rec.Calls {
				perNode[c.Node]++
			}
			for _, n := range perNode {
				wantErrors += n / 7
			}
		}
		if live.Errors != wantErrors {
			t.Errorf("%s: %d errors counted, want %d", lv.Name, live.Errors, wantErrors)
		}
		for _, c := range rec.Calls {
			if c.Err != nil && c.Decision.Allowed {
				t.Errorf("%s: a failed call counted as admitted: %+v", lv.Name, c)
			}
		}
		if rec.Order != "MONITOR" || differ != 0 || replayed.Admitted != live.Admitted || replayed.Peak != live.Peak {
			t.Errorf("%s: ordered by %s, the twin decided %d of %d calls otherwise (%+v against the fleet's %+v); want MONITOR and none",
				lv.Name, rec.Order, differ, len(rec.Calls), replayed, live)
		}
	}
}

// A node whose clock steps a second ahead mid-run, live: each node is told
// its own clock, the twin replaying the fleet's calls in MONITOR's order
// decides every one of them alike, and the fleet admits what the model
// predicts for the step (a token bucket told times a second apart refills
// on every swing), far beyond the same fleet's run without the step.
func TestPlayLiveNodeClockStep(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := scenarios.Traffic(1, limit, 2*algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	lv := replay.Live{Name: "token-bucket script, node 0 steps +1s at 1s", Subject: tokenBucketScript(t), Limit: limit,
		Deployment: model.NodeClock, Nodes: 4, Seed: 1, Requests: requests,
		Clocks: model.Clocks{Steps: []model.Step{{Clock: 0, At: algos.Second, By: algos.Second}}}}
	rec, err := replay.PlayLive(context.Background(), s.Addr, s.Prefix(t), lv)
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	if err := rec.Report(&report); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + report.String())
	live := rec.Live()
	replayed, differ, err := rec.Replay()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Order != "MONITOR" || differ != 0 || replayed.Admitted != live.Admitted {
		t.Errorf("ordered by %s, the twin decided %d of %d calls otherwise (%+v against the fleet's %+v); want MONITOR and none",
			rec.Order, differ, len(rec.Calls), replayed, live)
	}
	simulated, err := rec.Simulate()
	if err != nil {
		t.Fatal(err)
	}
	lv.Clocks = model.Clocks{}
	unstepped, err := model.Run(model.Config{Limiter: lv.Subject.Spec, Limit: limit, Deployment: model.NodeClock, Nodes: 4,
		RTT: 2 * rec.MeanOut(), Seed: 1, Requests: requests})
	if err != nil {
		t.Fatal(err)
	}
	clean := unstepped.Admitted()
	t.Logf("admitted: live %d, model with the step %d, model without it %d", live.Admitted, simulated.Admitted, clean)
	if d := live.Admitted - simulated.Admitted; d < -live.Admitted/20 || d > live.Admitted/20 {
		t.Errorf("the fleet admitted %d, the model of the step %d: more than 5%% apart", live.Admitted, simulated.Admitted)
	}
	if live.Admitted < clean*6/5 {
		t.Errorf("with the step the fleet admitted %d, not 20%% beyond the %d the model admits without it", live.Admitted, clean)
	}
}

// A store that refuses MONITOR (here an ACL) is still played: the calls are
// ordered by estimate, the recording says so, and nothing is placed.
func TestPlayLiveWithoutMonitorOrdersByEstimate(t *testing.T) {
	s := redistest.Start(t)
	if strings.HasPrefix(s.Source, redistest.EnvAddr) {
		// The ACL would reach every other test on that shared server.
		t.Skipf("needs a Redis of its own to take MONITOR away from; %s is shared", s.Source)
	}
	rdb := s.Client(t)
	if err := rdb.Do(context.Background(), "ACL", "SETUSER", "default", "-monitor").Err(); err != nil {
		t.Fatal(err)
	}
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := scenarios.Traffic(1, limit, algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	lv := replay.Live{Name: "no MONITOR", Subject: tokenBucketScript(t), Limit: limit, Deployment: model.NodeClock, Nodes: 2, Seed: 1, Requests: requests}
	rec, err := replay.PlayLive(context.Background(), s.Addr, s.Prefix(t)+"nomonitor:", lv)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ordered by %s", rec.Order)
	if !strings.HasPrefix(rec.Order, "estimate: MONITOR") || !strings.Contains(rec.Order, "NOPERM") {
		t.Errorf("ordered by %q, want an estimate that says MONITOR was refused", rec.Order)
	}
	live := rec.Live()
	if live.Admitted == 0 || live.Errors != 0 {
		t.Errorf("the fleet's tally %+v: want admits and no errors", live)
	}
	for _, c := range rec.Calls {
		if c.Seq != 0 {
			t.Fatalf("a call was placed without MONITOR: %+v", c)
		}
	}
	if _, _, err := rec.Replay(); err != nil {
		t.Fatal(err)
	}
}
