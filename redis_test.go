package overshoot_test

// The claims about Redis. Each of the six scripts decides and stores
// exactly as its Go twin; a limiter that GETs and then INCRs lets a burst
// of concurrent callers past its limit, and the script does not; and the
// simulator, handed the timings a live run measured, reproduces what Redis
// admitted. The machinery lives in redis/lua (the differential), study (the
// delayed path) and replay (the live run); these tests state the claims.

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/study"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

var (
	redisCalls = flag.Int("redis.calls", 5000, "calls per algorithm in TestLuaMatchesGo, spread over lua.SuiteKeys")
	redisLive  = flag.String("redis.live", "", `"all": TestLiveReplayMatchesModel plays every case and prints the report table`)
)

// TestLuaMatchesGo holds each script to its Go twin with lua.Suite: on each
// of lua.SuiteKeys' keys every decision and every stored value must be the
// same, every key's limit must be reached, and after every call the key's
// expiry must come no sooner than the twin's state is idle and no later
// than the bound.
func TestLuaMatchesGo(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	var summary []string
	for ai, a := range algos.All() {
		l, err := lua.New(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := lua.Suite{Calls: *redisCalls, Seed: uint64(ai + 1)}.Run(context.Background(), c, l, prefix+"diff:"+a.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Error(rep)
		}
		summary = append(summary, rep.Summary())
	}
	t.Logf("Lua against Go, %s:\n%s", s.Source, strings.Join(summary, "\n"))
}

// atomicityLimit: 10 per minute, so that every call of a run lands in one window.
var atomicityLimit = algos.MustLimit(10, 60*algos.Second, 10)

// TestAtomicityGetThenIncrRacesAndLuaDoesNot releases 50 concurrent callers,
// each on its own connection, on one key limited to 10: the fixed window
// written as GET then INCR lets more than 10 through, the script exactly 10.
//
// On loopback a GET's reply comes back in tens of µs, and about 2 runs in
// 100 let exactly 10 through; the callers here reach Redis through the
// study's delayed path (an in-process toxiproxy) that holds every reply for
// 1 ms, the round trip the simulator models, and then every run races.
func TestAtomicityGetThenIncrRacesAndLuaDoesNot(t *testing.T) {
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	path, err := study.Delayed(ctx, s.Options(), 0, time.Millisecond) // every reply 1 ms late
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(path.Close)
	l, err := lua.New(algos.FixedWindow.Name)
	if err != nil {
		t.Fatal(err)
	}
	const callers, runs = 50, 10
	clients := make([]*redis.Client, callers)
	for i := range clients {
		opt := path.Options()
		opt.PoolSize, opt.MaxIdleConns = 1, 1
		clients[i] = redis.NewClient(opt)
		t.Cleanup(func() { clients[i].Close() })
	}
	if err := l.Load(ctx, clients[0]); err != nil {
		t.Fatal(err)
	}
	// Every connection is open before the barrier, so the race is between
	// commands and not between dials.
	for _, c := range clients {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	race := func(call func(c *redis.Client) (bool, error)) int {
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted := 0
		start := make(chan struct{})
		for _, c := range clients {
			wg.Go(func() {
				<-start
				ok, err := call(c)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		return admitted
	}
	now := (time.Now().UnixMicro()/atomicityLimit.Window)*atomicityLimit.Window + atomicityLimit.Window/2
	var naive, script []int
	for run := range runs {
		key := fmt.Sprintf("%satomic:%d:", prefix, run)
		naive = append(naive, race(func(c *redis.Client) (bool, error) {
			return lua.GetThenIncr(ctx, c, key+"naive", atomicityLimit, now)
		}))
		script = append(script, race(func(c *redis.Client) (bool, error) {
			r, err := l.Call(ctx, c, key+"lua", atomicityLimit, now)
			return r.Decision.Allowed, err
		}))
	}
	t.Logf("%d callers, limit %d, 1 ms to Redis and back, %d runs: GET-then-INCR admitted %v, the script %v", callers, atomicityLimit.Rate, runs, naive, script)
	for run := range runs {
		if naive[run] <= int(atomicityLimit.Rate) {
			t.Errorf("run %d: GET-then-INCR admitted %d, want more than %d", run, naive[run], atomicityLimit.Rate)
		}
		if script[run] != int(atomicityLimit.Rate) {
			t.Errorf("run %d: the script admitted %d, want exactly %d", run, script[run], atomicityLimit.Rate)
		}
	}
}

// liveCase is one case of the live replay; def marks the ones the default
// run plays (-redis.live=all plays all).
type liveCase struct {
	algo       string
	deployment model.Deployment
	skew       int64
	def        bool
}

var liveCases = []liveCase{
	{"token-bucket", model.NodeClock, 50_000, true},
	{"leaky-bucket", model.NodeClock, 50_000, false},
	{"gcra", model.NodeClock, 50_000, false},
	{"fixed-window", model.NodeClock, 50_000, false},
	{"sliding-log", model.NodeClock, 50_000, false},
	{"sliding-counter", model.NodeClock, 50_000, false},
	{"token-bucket", model.StoreClock, 0, false},
	{"sliding-log", model.StoreClock, 0, false},
	{"token-bucket", model.GetSet, 0, true},
	{"fixed-window", model.GetSet, 0, false},
}

// liveDuration is how long each case plays in real time.
const liveDuration = 6 * algos.Second

// TestLiveReplayMatchesModel plays the scenarios' four clients (100/s each,
// seed 1, 4 nodes) against Redis in real time, then hands the simulator the
// measured timings: it must reproduce Redis's admitted count within 0.5% and
// its peak within 0.02 of the limit. It also reports what the simulator
// predicts from each step's mean delay alone, without checking it.
func TestLiveReplayMatchesModel(t *testing.T) {
	t.Parallel() // it mostly waits for real time; its replay is exact under load
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(1, limit, liveDuration)
	if err != nil {
		t.Fatal(err)
	}
	// The cases play side by side, each under its own prefix on its own
	// connections: each is judged by replaying the timings it measured,
	// so what one costs another only changes the timings both record.
	var played []liveCase
	for _, lc := range liveCases {
		if lc.def || *redisLive == "all" {
			played = append(played, lc)
		}
	}
	rows := make([]string, len(played))
	var wg sync.WaitGroup
	for i, lc := range played {
		wg.Go(func() {
			row, err := playLiveCase(t, s, prefix, i, lc, limit, requests)
			if err != nil {
				t.Errorf("%s: %v", row, err)
				row += ": " + err.Error()
			}
			rows[i] = row
		})
	}
	wg.Wait()
	t.Logf("live replay, %s, %s per case, 100/s per key, 4 clients, 4 nodes, seed 1\n"+
		"%-32s %5s %12s  %17s  %20s  %12s  %s\n%s", s.Source, algos.FormatMicros(liveDuration),
		"case", "reqs", "redis", "replay (differ)", "mean delay (vs redis)", "ideal", "mean legs µs (out/back/set)",
		strings.Join(rows, "\n"))
}

// playLiveCase plays one case of TestLiveReplayMatchesModel and returns its
// report row, or what stopped it; a result out of bounds is reported on t
// (safe from several goroutines).
func playLiveCase(t *testing.T, s redistest.Redis, prefix string, i int, lc liveCase, limit algos.Limit, requests []record.Request) (string, error) {
	name := fmt.Sprintf("%s %s", lc.algo, lc.deployment)
	if lc.skew > 0 {
		name += " " + algos.FormatMicros(lc.skew)
	}
	a, err := algos.ByName(lc.algo)
	if err != nil {
		return name, err
	}
	c := replay.Case{Name: name, Algorithm: a, Limit: limit, Deployment: lc.deployment, Nodes: 4, Skew: lc.skew, Seed: 1, Requests: requests}
	rec, err := replay.Play(context.Background(), s.Options(), fmt.Sprintf("%slive:%d:", prefix, i), c)
	if err != nil {
		return name, err
	}
	got := rec.Redis()
	replayed, differ, err := rec.Replay()
	if err != nil {
		return name, err
	}
	mean, err := rec.MeanDelay()
	if err != nil {
		return name, err
	}
	ideal, err := rec.Ideal()
	if err != nil {
		return name, err
	}
	legs := rec.MeanDelays()
	if d := replayed.Admitted - got.Admitted; float64(abs(d)) > 0.005*float64(got.Admitted) {
		t.Errorf("%s: the replay admitted %d, Redis %d: more than 0.5%% apart", name, replayed.Admitted, got.Admitted)
	}
	if d := replayed.Peak - got.Peak; d > 0.02 || d < -0.02 {
		t.Errorf("%s: the replay's peak is %.3fx, Redis's %.3fx: more than 0.02 apart", name, replayed.Peak, got.Peak)
	}
	return fmt.Sprintf("%-32s %5d %5d %5.2fx  %5d %5.2fx %4d  %5d %5.2fx %+6.1f%%  %5d %5.2fx  %4d/%d/%d",
		name, len(requests), got.Admitted, got.Peak, replayed.Admitted, replayed.Peak, differ,
		mean.Admitted, mean.Peak, pct(mean.Admitted, got.Admitted), ideal.Admitted, ideal.Peak, legs.Out, legs.Back, legs.Set), nil
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a-b) / float64(b)
}

func abs(x int) int { return max(x, -x) }
