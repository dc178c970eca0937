package ceiling_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/ceiling"
	"github.com/overshoot-go/overshoot/internal/redistest"
)

var full = flag.Bool("ceiling.full", false, "run the full table: N = 1, 3, 5 for 60 s each at 100/s (make load)")

// key is the one identity every test drives.
func key(name string) http.Header { return http.Header{"X-Api-Key": {name}} }

// drive runs d on a fleet of n nodes at rate for dur, and returns the row.
func drive(t *testing.T, d ceiling.Deployment, n, rate int, dur time.Duration) ceiling.Row {
	t.Helper()
	fleet, err := ceiling.Start(n, d.Node)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	res, err := ceiling.Drive(ctx, ceiling.Load{Targets: fleet.URLs(), Header: key("tenant-1"), Rate: rate, Duration: dur})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed > 0 {
		t.Fatalf("%s on %d nodes: %d of %d requests failed, the first: %s", d.Name, n, res.Failed, res.Sent, res.FirstFailure)
	}
	return ceiling.Row{Deployment: d, Nodes: n, Result: res}
}

// One key driven past its limit through a fleet of real HTTP nodes, open
// loop: a shared script admits the limit within 2% whatever the node
// count, per-instance limiters admit N times it, and GET-then-INCR admits
// at least the limit in every whole window (what its race adds at this
// load is printed, not asserted: it depends on how often requests overlap).
//
// The short run's burst is a whole second of the rate: a bucket banks
// only its burst, so a stall of the machine longer than the burst lasts
// starves it of requests, and it admits less than the limit through no
// fault of its own. With both cores loaded by other processes, stalls of
// 100 to 450 ms were measured (p99), and a burst of 5 at 50/s (100 ms)
// fell to 0.97x. For the same reason the rate is taken over the time each
// bucket decided for, which the sends and the answers bound
// (ceiling.DecisionSpan), not over the time the driver sent for: a stall
// before the first decision showed as a 2.3% shortfall of a bucket that
// had missed nothing.
//
// Badge: accepted rate across nodes
func TestFindingAcceptedRateAcrossNodes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	rate, burst, offered, dur := int64(50), int64(50), 200, 4*time.Second
	nodes := []int{1, 3}
	if *full {
		rate, burst, offered, dur = 100, 20, 600, 60*time.Second
		nodes = []int{1, 3, 5}
	}
	l := algos.MustLimit(rate, algos.Second, burst)
	window := algos.MustLimit(rate, algos.Second, rate)

	shared := func(t *testing.T) ceiling.Deployment {
		d, err := ceiling.SharedScript(rdb, algos.TokenBucket, srv.Prefix(t), l)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	perInstance := func(t *testing.T) ceiling.Deployment {
		d, err := ceiling.PerInstance(algos.TokenBucket, l)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	naive := func(t *testing.T) ceiling.Deployment { return ceiling.GetThenIncr(rdb, srv.Prefix(t), window) }

	type row struct {
		deploy func(t *testing.T) ceiling.Deployment
		nodes  int
		// perNode is a bucket on each node (N of them) rather than one
		// shared; atLeast (the fixed window) asks only that every window
		// wholly inside the run admitted its limit: its first and last
		// windows are cut short, so it has no burst to subtract.
		perNode, atLeast bool
	}
	var rows []row
	for _, n := range nodes {
		rows = append(rows, row{shared, n, false, false})
		if *full || n > 1 { // on one node these two are the shared row again
			rows = append(rows, row{perInstance, n, true, false}, row{naive, n, false, true})
		}
	}

	got := make([]ceiling.Row, len(rows))
	t.Run("rows", func(t *testing.T) {
		for i, r := range rows {
			t.Run(fmt.Sprintf("row%d-%dnodes", i, r.nodes), func(t *testing.T) {
				if !*full {
					t.Parallel() // a few seconds each; the full table runs them one by one
				}
				got[i] = drive(t, r.deploy(t), r.nodes, offered, dur)
			})
		}
	})
	var table strings.Builder
	if err := ceiling.WriteTable(&table, ceiling.Limit{Rate: float64(rate)}, got); err != nil {
		t.Fatal(err)
	}
	t.Logf("one key, %d/s burst %d (the fixed window: %d per 1s), offered %d/s for %v:\n%s", rate, burst, rate, offered, dur, table.String())
	worstShared, multiplied := 0.0, ""
	for i, r := range rows {
		if got[i].Nodes == 0 {
			continue // its subtest failed and said why
		}
		if !r.perNode && !r.atLeast {
			worstShared = max(worstShared, math.Abs(got[i].Excess(ceiling.Limit{Rate: float64(rate)})))
		} else if !r.atLeast {
			multiplied = fmt.Sprintf("per-instance on %d nodes %.2fx", r.nodes, got[i].Times(ceiling.Limit{Rate: float64(rate)}))
		}
		if r.atLeast {
			if int64(got[i].Result.Accepted) < rate*(int64(got[i].Result.Span/time.Second)-1) {
				t.Errorf("%s on %d nodes: %d admitted in %v, fewer than %d in each whole window", got[i].Deployment.Name, r.nodes, got[i].Result.Accepted, got[i].Result.Span, rate)
			}
			continue
		}
		// Each bucket's rate beyond its burst, over the time it decided for.
		lo, hi := beyondBurstRate(got[i].Result, rate, burst, r.perNode)
		t.Logf("%s on %d nodes: each bucket %.3fx to %.3fx its rate beyond its burst", got[i].Deployment.Name, r.nodes, lo, hi)
		if hi < 1-tolerance || lo > 1+tolerance {
			t.Errorf("%s on %d nodes: each bucket admitted %.3fx to %.3fx its rate beyond its burst (over the least and the most time it can have decided for), want 1 ± %.2f",
				got[i].Deployment.Name, r.nodes, lo, hi, tolerance)
		}
	}
	t.Logf("measured: shared Lua within %.1f%% of the limit on %v nodes; %s", 100*worstShared, nodes, multiplied)
}

// tolerance is how far from its rate, as a share of it, a bucket beyond its
// burst may land in a load test of one key.
const tolerance = 0.02

// beyondBurstRate bounds a token-bucket row's admits beyond its bursts, per
// second it decided for, as a multiple of the rate: one bucket per node
// when perNode is set, else one shared by the fleet. Each bucket decided
// between its first and last decision, a time no shorter than
// DecisionSpan.Shortest and no longer than Longest, so lo and hi bound the
// true figure whatever the machine's stalls did to the answers. A fresh
// bucket admits its burst and then, offered more than its rate, its rate.
func beyondBurstRate(res ceiling.Result, rate, burst int64, perNode bool) (lo, hi float64) {
	spans := res.Decided
	if !perNode {
		spans = []ceiling.DecisionSpan{fleetSpan(spans)}
	}
	var buckets int64
	var shortest, longest time.Duration
	for _, s := range spans {
		if s.Decided > 0 {
			buckets++
			shortest += s.Shortest()
			longest += s.Longest()
		}
	}
	beyond := float64(int64(res.Accepted) - buckets*burst)
	return beyond / (float64(rate) * longest.Seconds()), beyond / (float64(rate) * shortest.Seconds())
}

// fleetSpan is the span of one limiter shared by every node.
func fleetSpan(spans []ceiling.DecisionSpan) ceiling.DecisionSpan {
	var f ceiling.DecisionSpan
	for _, s := range spans {
		if s.Decided == 0 {
			continue
		}
		if f.Decided == 0 {
			f = s
			continue
		}
		f.FirstSent, f.FirstAnswered = min(f.FirstSent, s.FirstSent), min(f.FirstAnswered, s.FirstAnswered)
		f.LastSent, f.LastAnswered = max(f.LastSent, s.LastSent), max(f.LastAnswered, s.LastAnswered)
		f.Decided += s.Decided
	}
	return f
}
