package redisrate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/traffic"
)

// live is the library as a live run plays it: Spec is its simulated twin,
// on a simredis server; each node connects the real library to the real
// store, every node under the run's prefix.
func live() replay.Subject {
	return replay.Subject{
		Spec: Spec(),
		Connect: func(n replay.Node) (limiter.Limiter, error) {
			return Connect(n.Client, n.Prefix, n.Limit)
		},
	}
}

// A fleet of 4 nodes runs the real library on one real Redis 7 for 2 s of
// the scenarios' traffic (100/s per key). MONITOR orders every call; told
// the store's clock as MONITOR stamped each script, the simulated twin
// decides all but 0.5% of the calls as the fleet did, and admits as many
// within 0.5% at a peak within 0.02 of the limit.
func TestLiveFleetMatchesItsTwin(t *testing.T) {
	t.Parallel() // it mostly waits for real time
	s := redistest.Start(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(1, limit, 2*algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	lv := replay.Live{Name: "redis_rate", Subject: live(), Limit: limit,
		Deployment: model.StoreClock, Nodes: 4, Seed: 1, Requests: requests}
	rec, err := replay.PlayLive(context.Background(), s.Options(), s.Prefix(t)+"redisrate:", lv)
	if err != nil {
		t.Fatal(err)
	}
	got := rec.Live()
	replayed, differ, err := rec.Replay()
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	if err := rec.Report(&report); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", s.Source, report.String())
	if rec.Order != "MONITOR" {
		t.Errorf("the calls were ordered by %q, want MONITOR", rec.Order)
	}
	if got.Errors != 0 {
		t.Errorf("%d calls failed", got.Errors)
	}
	if float64(differ) > 0.005*float64(len(rec.Calls)) {
		t.Errorf("the twin decided %d of %d calls otherwise: more than 0.5%%", differ, len(rec.Calls))
	}
	if d := replayed.Admitted - got.Admitted; float64(max(d, -d)) > 0.005*float64(got.Admitted) {
		t.Errorf("the twin admitted %d, the fleet %d: more than 0.5%% apart", replayed.Admitted, got.Admitted)
	}
	if d := replayed.Peak - got.Peak; d > 0.02 || d < -0.02 {
		t.Errorf("the twin's peak is %.3fx, the fleet's %.3fx: more than 0.02 apart", replayed.Peak, got.Peak)
	}
}

// Nodes connected with one prefix share each key, as a fleet does: a
// burst of 1 spent by one node is spent for the other.
func TestConnectSharesThePrefix(t *testing.T) {
	t.Parallel() // keys and counts only, on no clock
	s := redistest.Start(t)
	rdb := s.Client(t)
	l := algos.MustLimit(1, 60*algos.Second, 1)
	prefix := fmt.Sprintf("%sshared:", s.Prefix(t))
	a, err := Connect(rdb, prefix, l)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Connect(rdb, prefix, l)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if d, err := a.Allow(ctx, 0, 0); err != nil || !d.Allowed {
		t.Fatalf("the first call: %+v, %v", d, err)
	}
	if d, err := b.Allow(ctx, 0, 0); err != nil || d.Allowed {
		t.Errorf("the other node's call on the spent key: %+v, %v; want denied", d, err)
	}
	if n, err := rdb.Exists(ctx, "rate:"+prefix+"0").Result(); err != nil || n != 1 {
		t.Errorf("key rate:%s0 exists %d, %v; want 1", prefix, n, err)
	}
	if _, err := Connect(nil, prefix, l); err == nil {
		t.Error("Connect took a nil client")
	}
	if _, err := Connect(rdb, prefix, algos.Limit{}); err == nil {
		t.Error("Connect took a zero limit")
	}
}
