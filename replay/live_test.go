package replay_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
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
	t.Parallel() // errors only, on no clock
	script := tokenBucketScript(t)
	storeClock := script
	storeClock.Spec.Clock = limiter.StoreClock
	base := replay.Live{Name: "bad", Subject: script, Limit: oneAtATime, Deployment: model.NodeClock, Nodes: 1,
		Requests: []record.Request{{Key: 0, Sent: 0}}}
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
		rec, err := replay.PlayLive(context.Background(), &redis.Options{Addr: "127.0.0.1:1"}, "live-test:", lv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: PlayLive = %v, %v; want an error saying %q", tc.name, rec, err, tc.want)
		}
	}
}

// A node whose Connect fails, panics or returns nothing stops the run with
// an error naming the node, before any request is sent.
func TestPlayLiveReportsAConnectThatFails(t *testing.T) {
	t.Parallel() // errors only, on no clock
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
			Requests: []record.Request{{Key: 0, Sent: 0}}}
		rec, err := replay.PlayLive(context.Background(), s.Options(), s.Prefix(t)+"connect:", lv)
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

// Played live, a fleet of the token bucket's script (4 nodes, 1 s of the
// scenarios' traffic at 100/s: 1,281 calls, the flood at 5 times the rate
// among them, so that nodes contend for every key) is decided again by its
// simulated twin from the recording alone: in the order MONITOR showed the
// calls, at the times the nodes told them. Nothing is left to estimate, so
// the twin must decide every call as Redis did, however the machine delays
// the nodes. An error on every 7th call of a node is counted as an error,
// never as a denial. The two fleets play at once, on keys of their own.
func TestPlayLiveAgreesWithItsReplay(t *testing.T) {
	t.Parallel() // it mostly waits for real time; MONITOR's order is exact under load
	s := redistest.Start(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(1, limit, algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	script := tokenBucketScript(t)
	failing := script
	failing.Connect = func(n replay.Node) (limiter.Limiter, error) {
		lim, err := script.Connect(n)
		return &failingEvery{Limiter: lim, n: 7}, err
	}
	prefix := s.Prefix(t)
	var wg sync.WaitGroup
	for i, subject := range []replay.Subject{script, failing} {
		wg.Go(func() {
			lv := replay.Live{Name: fmt.Sprintf("token-bucket script %d", i), Subject: subject, Limit: limit,
				Deployment: model.NodeClock, Nodes: 4, Seed: 1, Requests: requests}
			if err := agreesWithItsReplay(t, s, fmt.Sprintf("%slive:%d:", prefix, i), lv, i == 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// agreesWithItsReplay plays lv and reports (t.Errorf) what the replay or
// the error count gets wrong; it returns what stops it.
func agreesWithItsReplay(t *testing.T, s redistest.Redis, prefix string, lv replay.Live, failing bool) error {
	rec, err := replay.PlayLive(context.Background(), s.Options(), prefix, lv)
	if err != nil {
		return err
	}
	live := rec.Live()
	replayed, differ, err := rec.Replay()
	if err != nil {
		return err
	}
	var report strings.Builder
	if err := rec.Report(&report); err != nil {
		return err
	}
	t.Log("\n" + report.String())
	wantErrors := 0
	if failing {
		perNode := make([]int, lv.Nodes)
		for _, c := range rec.Calls {
			perNode[c.Plan.Node]++
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
	// The run's records (package record) say what its calls said.
	admitted, failed, seen := 0, 0, 0
	for _, r := range rec.Records() {
		switch {
		case r.Err != nil:
			failed++
		case r.Allowed:
			admitted++
		}
		if r.Seen.Has(record.SeenDecided) {
			seen++
		}
	}
	reached := 0 // the calls MONITOR saw reach the store
	for _, c := range rec.Calls {
		if c.Seq > 0 {
			reached++
		}
	}
	if admitted != live.Admitted || failed != live.Errors || seen != reached || rec.Order == "MONITOR" && reached < len(rec.Calls)-failed {
		t.Errorf("%s: the records hold %d admits, %d errors and %d seen decisions; the calls %d admits, %d errors, %d of %d reached the store, ordered by %s",
			lv.Name, admitted, failed, seen, live.Admitted, live.Errors, reached, len(rec.Calls), rec.Order)
	}
	if rec.Order != "MONITOR" || differ != 0 || replayed.Admitted != live.Admitted || replayed.Peak != live.Peak {
		t.Errorf("%s: ordered by %s, the twin decided %d of %d calls otherwise (%+v against the fleet's %+v); want MONITOR and none",
			lv.Name, rec.Order, differ, len(rec.Calls), replayed, live)
	}
	return nil
}

// A node whose clock steps a second ahead mid-run, live: each node is told
// its own clock, the twin replaying the fleet's calls in MONITOR's order
// decides every one of them alike, and the fleet admits what the model
// predicts for the step (a token bucket told times a second apart refills
// on every swing), far beyond the same fleet's run without the step.
//
// The model is given the calls as the nodes made them (SimulateAsSent:
// each at the time its node sent it, by that node, the mean time to the
// store later), not as planned: on a loaded machine a node sends late, and
// later still while its previous call is out, which changes how often the
// stepped node's calls alternate with the others' on a key, and so the
// admits (a loaded run admitted 2,135 where the plan's model said 1,974).
// Given what was sent, the model differs from the fleet only by how the
// round trips clump. The step needs a second of traffic before it and
// one after.
func TestPlayLiveNodeClockStep(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(1, limit, 2*algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	lv := replay.Live{Name: "token-bucket script, node 0 steps +1s at 1s", Subject: tokenBucketScript(t), Limit: limit,
		Deployment: model.NodeClock, Nodes: 4, Seed: 1, Requests: requests,
		Clocks: model.Clocks{Steps: []model.Step{{Clock: 0, At: algos.Second, By: algos.Second}}}}
	rec, err := replay.PlayLive(context.Background(), s.Options(), s.Prefix(t), lv)
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
	simulated, err := rec.SimulateAsSent()
	if err != nil {
		t.Fatal(err)
	}
	planned, err := rec.Simulate()
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
	t.Logf("admitted: live %d, model with the step on the calls as sent %d (as planned %d), model without it %d", live.Admitted, simulated.Admitted, planned.Admitted, clean)
	if d := live.Admitted - simulated.Admitted; d < -live.Admitted/20 || d > live.Admitted/20 {
		t.Errorf("the fleet admitted %d, the model of the step on the calls as sent %d: more than 5%% apart", live.Admitted, simulated.Admitted)
	}
	if live.Admitted < clean*6/5 {
		t.Errorf("with the step the fleet admitted %d, not 20%% beyond the %d the model admits without it", live.Admitted, clean)
	}
}

// A store that refuses MONITOR (here an ACL: a user of the test's own,
// allowed everything on the test's keys but MONITOR) is still played: the
// calls are ordered by estimate, the recording says so, and nothing is
// placed. The nodes and the MONITOR connection log in as that user.
func TestPlayLiveWithoutMonitorOrdersByEstimate(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rdb := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	secret := make([]byte, 12)
	rand.Read(secret)
	user, password := "overshoot-no-monitor-"+hex.EncodeToString(secret[:4]), hex.EncodeToString(secret[4:])
	err := rdb.Do(ctx, "ACL", "SETUSER", user, "reset", "on", ">"+password, "~"+prefix+"*", "+@all", "-monitor").Err()
	if err != nil && strings.HasPrefix(s.Source, redistest.EnvAddr) {
		t.Skipf("needs a user of its own without MONITOR, and %s would not make one: %v", s.Source, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Do(context.Background(), "ACL", "DELUSER", user) })
	opts := s.Options()
	opts.Username, opts.Password = user, password
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(1, limit, algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	lv := replay.Live{Name: "no MONITOR", Subject: tokenBucketScript(t), Limit: limit, Deployment: model.NodeClock, Nodes: 2, Seed: 1, Requests: requests}
	rec, err := replay.PlayLive(ctx, opts, prefix+"nomonitor:", lv)
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

// A store that needs a password is played with it, MONITOR included; and
// one given a wrong password says so.
func TestPlayLiveLogsInToTheStore(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	if s.Password == "" {
		t.Skipf("%s needs no password", s.Source)
	}
	limit := algos.MustLimit(100, algos.Second, 100)
	lv := replay.Live{Name: "password", Subject: tokenBucketScript(t), Limit: limit, Deployment: model.NodeClock, Nodes: 2, Seed: 1,
		Requests: []record.Request{{Key: 0, Sent: 0}, {Key: 0, Sent: 1000}, {Key: 1, Sent: 2000}}}
	rec, err := replay.PlayLive(context.Background(), s.Options(), s.Prefix(t), lv)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Order != "MONITOR" || rec.Live().Admitted != 3 {
		t.Errorf("ordered by %s, admitted %+v; want MONITOR and 3", rec.Order, rec.Live())
	}
	wrong := s.Options()
	wrong.Password += "-wrong"
	if _, err := replay.PlayLive(context.Background(), wrong, s.Prefix(t), lv); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("a wrong password: %v, want WRONGPASS", err)
	}
}
