package overshoot_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/algos/lua"
	_ "github.com/overshoot-go/overshoot/internal/golden" // every test package takes -update
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

var (
	redisCalls = flag.Int("redis.calls", 5000, "calls per algorithm in TestLuaMatchesGo, spread over its five keys")
	redisLive  = flag.String("redis.live", "", `"all": TestLiveReplayMatchesModel plays every case and prints the report table`)
)

// diffLimits are the limits the differential runs each algorithm under, each
// on its own key with its own time origin. The odd ones exercise the scaled
// arithmetic: 7 per 3 s makes a token worth 3,000,000 units refilled 7 at a
// time, and GCRA's emission interval a fraction of a µs; the origins go from
// small to near algos.MaxTime, so doubles carry 16 digits.
var diffLimits = []struct {
	rate, window, burst int64
	origin              int64
}{
	{7, 3 * algos.Second, 5, 1_700_000_000_000_000},
	{100, algos.Second, 100, 123_456_789},
	{3, 1000, 1, 3_100_000_000_000_007},
	{13, 60 * algos.Second, 20, 999_999_999_999},
	{250, 7 * algos.Second, 40, 2_251_799_813_685_247},
}

// diffSeed is the seed of lua.DifferentialCalls for key k of a run seeded
// base, so that every algorithm and every key has its own calls.
func diffSeed(base, k int) uint64 { return uint64(base)<<8 | uint64(k) }

// diffShare is how many of n calls key k of the diffLimits gets.
func diffShare(n, k int) int {
	share := n / len(diffLimits)
	if k < n%len(diffLimits) {
		share++
	}
	return share
}

// TestLuaMatchesGo sends the same calls to each script and to its Go twin,
// through lua.Differential on each of the diffLimits' keys, and requires
// every decision and every stored value to be the same, every key driven
// into denial, and after every call the key's expiry to come no sooner than
// the twin's state is idle and no later than the bound.
func TestLuaMatchesGo(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	var summary []string
	for ai, a := range algos.All() {
		l, err := lua.New(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		var calls, admits, diffs, ttls int
		for k, dl := range diffLimits {
			lim := algos.MustLimit(dl.rate, dl.window, dl.burst)
			times, err := lua.DifferentialCalls(diffSeed(ai+1, k), lim, dl.origin, diffShare(*redisCalls, k))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := lua.Differential(ctx, c, l, fmt.Sprintf("%sdiff:%s:%d", prefix, a.Name, k), lim, times)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Error(rep)
			}
			if rep.Admitted == rep.Calls {
				t.Errorf("%s, %v: no call denied, so the limit was never reached", a.Name, lim)
			}
			calls += rep.Calls
			admits += rep.Admitted
			diffs += rep.Differences
			ttls += rep.TTLChecks - rep.TTLDifferences
		}
		summary = append(summary, fmt.Sprintf("%-16s %6d calls (%d admitted), %d differences, %d TTLs within bound", a.Name, calls, admits, diffs, ttls))
	}
	t.Logf("Lua against Go, %s:\n%s", s.Source, strings.Join(summary, "\n"))
}

// TestLuaNegativeRefillMatchesGo holds the planted negative-refill token
// bucket's Lua body (study.NegativeRefillLimiter, through lua.FromSource) to
// its Go twin, algos.PlantedTokenBucketNegativeRefill, on the calls and keys
// TestLuaMatchesGo uses: the 15% of calls told a time behind drive the
// stored tokens below zero, which must survive the prelude's load3 and
// store3. Each key's calls end with steps of 100 years back and forth
// (0, MaxTime, 0, 1), where the twin's floor on the debt and its bound on
// a refill decide, so that those agree too.
func TestLuaNegativeRefillMatchesGo(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	l, err := lua.New(algos.PlantedTokenBucketNegativeRefill.Name)
	if err != nil {
		t.Fatal(err)
	}
	twin := l.Algorithm()
	var calls, admits, diffs, ttls, owing int
	for k, dl := range diffLimits {
		lim := algos.MustLimit(dl.rate, dl.window, dl.burst)
		times, err := lua.DifferentialCalls(diffSeed(60, k), lim, dl.origin, diffShare(*redisCalls, k))
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, 0, algos.MaxTime, 0, 1)
		rep, err := lua.Differential(ctx, c, l, fmt.Sprintf("%sdiff:%s:%d", prefix, twin.Name, k), lim, times)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Error(rep)
		}
		// The twin replayed: how many calls left tokens owed, so that the
		// comparison above covered negative stored values.
		var st algos.State
		for _, now := range times {
			if twin.Decide(&st, now, lim); st.A < 0 {
				owing++
			}
		}
		calls += rep.Calls
		admits += rep.Admitted
		diffs += rep.Differences
		ttls += rep.TTLChecks - rep.TTLDifferences
	}
	if owing == 0 {
		t.Errorf("no call left the bucket owing tokens: the negative refill was not exercised")
	}
	t.Logf("Lua against Go, %s:\n%-16s %6d calls (%d admitted, %d left tokens owed), %d differences, %d TTLs within bound",
		s.Source, "negative-refill", calls, admits, owing, diffs, ttls)
}

// userFixedWindow is a user's own limiter's Go twin, for
// TestUserScriptDifferential: the Go half of
// algos/lua/testdata/user-fixed-window.lua, a fixed window that never goes
// back (a clock behind is counted in the stored, later window).
var userFixedWindow = algos.Algorithm{
	Name:       "user-fixed-window",
	Decide:     decideUserFixedWindow,
	Promise:    algos.AlignedWindowPromise,
	StateDoc:   "window index, count, 0",
	StateInts:  func(algos.Limit) int64 { return 3 },
	ExactRetry: true,
}

// decideUserFixedWindow is written for times of 0 or more, as the
// differential's are, so its / is the floor.
func decideUserFixedWindow(s *algos.State, now int64, l algos.Limit) algos.Decision {
	if idx := now / l.Window; !s.Set || s.A < idx {
		*s = algos.State{Set: true, A: idx}
	}
	end := (s.A+1)*l.Window - now
	d := algos.Decision{Reset: end}
	if s.B < l.Rate {
		s.B++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	d.Remaining = l.Rate - s.B
	return d
}

// userScript is the user's script, as a user passes it to lua.FromSource.
const userScript = "algos/lua/testdata/user-fixed-window.lua"

// TestUserScriptDifferential holds a user's own script and its Go twin to
// the differential the six built-in scripts pass: written correctly it
// agrees call for call on every diffLimits key; with "<" planted as "<=" the
// report's first difference is the first call the twin denies, told in
// words, at 7 per 3 s as at 100 per second; with the key expiring after half
// the window, before the window's count stops counting, the TTL checks say
// it expires too early; with 10 s more than its own expiry, it passes.
func TestUserScriptDifferential(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	src, err := os.ReadFile(userScript)
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	plant := func(correct, wrong string) *lua.Limiter {
		t.Helper()
		if n := strings.Count(body, correct); n != 1 {
			t.Fatalf("%s holds %q %d times, want once", userScript, correct, n)
		}
		l, err := lua.FromSource(userFixedWindow, strings.Replace(body, correct, wrong, 1))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	good, err := lua.FromSource(userFixedWindow, body)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	calls := func(k int) (algos.Limit, []int64) {
		t.Helper()
		dl := diffLimits[k]
		lim := algos.MustLimit(dl.rate, dl.window, dl.burst)
		times, err := lua.DifferentialCalls(diffSeed(50, k), lim, dl.origin, n)
		if err != nil {
			t.Fatal(err)
		}
		return lim, times
	}
	run := func(l *lua.Limiter, key string, lim algos.Limit, times []int64) lua.DiffReport {
		t.Helper()
		rep, err := lua.Differential(ctx, c, l, prefix+key, lim, times)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	var lines []string
	for k := range diffLimits {
		lim, times := calls(k)
		rep := run(good, fmt.Sprintf("user:%d", k), lim, times)
		if !rep.OK() || rep.Differences != 0 || rep.Calls != n || rep.TTLChecks == 0 {
			t.Errorf("the user's script against its twin:\n%v", rep)
		}
		lines = append(lines, fmt.Sprintf("%-26s %s", lim, rep.Summary()))
	}

	// The planted "<=" admits one more than the limit per window: the first
	// difference is the first call the twin denies, and everything before it
	// agreed.
	lim, times := calls(0)
	planted := run(plant("if count < rate then", "if count <= rate then"), "user:planted", lim, times)
	firstDeny := -1
	var st algos.State
	for i, now := range times {
		if !userFixedWindow.Decide(&st, now, lim).Allowed {
			firstDeny = i
			break
		}
	}
	if planted.OK() || planted.Differences == 0 || len(planted.First) == 0 {
		t.Fatalf("the planted <= was not reported:\n%v", planted)
	}
	f := planted.First[0]
	if f.Call != firstDeny || f.Go.Allowed || !f.Lua.Allowed ||
		len(f.GoStored) != 3 || f.GoStored[1] != lim.Rate || len(f.LuaStored) != 3 || f.LuaStored[1] != lim.Rate+1 {
		t.Errorf("first difference is not the twin's first denial (call %d) admitted by the script:\n%v", firstDeny, f)
	}
	if got, want := strings.Join(f.Fields(), ", "), "allowed, remaining, retry-after, stored"; got != want {
		t.Errorf("the first difference differs in %q, want %q", got, want)
	}
	text := planted.String()
	for _, want := range []string{
		fmt.Sprintf("call %d at %d µs differs in allowed, remaining, retry-after, stored:", firstDeny, times[firstDeny]),
		fmt.Sprintf("before the call the twin held [%d %d 0] (window index, count, 0)", f.Before[0], lim.Rate),
		fmt.Sprintf("go twin: denied, remaining 0, retry-after %d µs", f.Go.Reset),
		"script:  admitted, remaining -1, retry-after 0 µs",
		fmt.Sprintf("stores [%d %d 0]", f.GoStored[0], lim.Rate+1),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the planted difference's report lacks %q:\n%s", want, text)
		}
	}

	// The same plant at 100 per second, where calls around the rate alone
	// never fill a window: the calls' bursts do, and it is caught there.
	lim100, times100 := calls(1)
	planted100 := run(plant("if count < rate then", "if count <= rate then"), "user:planted-100", lim100, times100)
	if planted100.OK() || len(planted100.First) == 0 || len(planted100.First[0].Before) != 3 ||
		planted100.First[0].Before[1] != lim100.Rate || !planted100.First[0].Lua.Allowed {
		t.Errorf("the planted <= at %v was not reported at the limit:\n%v", lim100, planted100)
	}

	// An expiry after half the window decides alike, and the TTL checks
	// report it: the key would be forgotten while its count still counts.
	half := run(plant("ttl(window_end)", "fmt(ceildiv(window, 2000))"), "user:half-window", lim, times)
	if half.OK() || half.Differences != 0 || half.TTLDifferences == 0 || len(half.FirstTTL) == 0 ||
		!half.FirstTTL[0].Early() || !strings.Contains(half.String(), "too early: the twin's state is not idle until") {
		t.Errorf("the expiry after half the window was not reported as too early:\n%v", half)
	}
	// An expiry 10 s later than the script's own is safe, and passes.
	longer := run(plant("ttl(window_end)", "ttl(window_end + 10000000)"), "user:longer", lim, times)
	if !longer.OK() {
		t.Errorf("the expiry 10 s later than needed was not accepted:\n%v", longer)
	}
	t.Logf("a user's script (%s) against its Go twin, %s:\n%s\n\nwith \"<\" planted as \"<=\":\n%v\n\nand at %v:\n%v\n\nwith the key expiring after half the window:\n%v\n\nwith the key expiring 10 s later than needed:\n%s",
		userScript, s.Source, strings.Join(lines, "\n"), planted, lim100, planted100, half, longer.Summary())
}

// short prints a stored log readably when it is long.
func short(v []int64) string {
	if len(v) <= 12 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%v … %v (%d values)", v[:3], v[len(v)-8:], len(v))
}

// TestNonAtomicSharesTheScriptsLayout: called one at a time, the GET/SET
// client decides exactly as the Go code does, and it and the script can take
// turns on the same key (same layout, same sliding-log members), so the
// only thing wrong with it is the race.
func TestNonAtomicSharesTheScriptsLayout(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	const n = 1000
	for ai, a := range algos.All() {
		l, err := lua.New(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		na, err := lua.NewNonAtomic(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		diffs := 0
		for k, dl := range diffLimits {
			lim := algos.MustLimit(dl.rate, dl.window, dl.burst)
			times, err := lua.DifferentialCalls(diffSeed(100+ai, k), lim, dl.origin, diffShare(n, k))
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("%sturns:%s:%d", prefix, a.Name, k)
			var state algos.State
			for i, now := range times {
				req := lua.Args{Key: key, Limit: lim, Now: now}
				want := a.Decide(&state, now, lim)
				var got lua.Reply
				if i%2 == 0 {
					got, err = l.Do(ctx, c, req)
				} else {
					var r lua.NonAtomicReply
					r, err = na.Do(ctx, c, req)
					got = r.Reply
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.Decision != want || !slices.Equal(got.Stored, state.Stored()) {
					if diffs++; diffs <= 3 {
						t.Errorf("%s key %d call %d (%s) at %d: go %+v %s, redis %+v %s", a.Name, k, i, map[bool]string{true: "script", false: "GET/SET"}[i%2 == 0],
							now, want, short(state.Stored()), got.Decision, short(got.Stored))
					}
				}
			}
		}
	}
}

// TestLuaBadStateIsAnError: a key holding something no script wrote is an
// error from the script and from the GET/SET client, not a guess.
func TestLuaBadStateIsAnError(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	key := s.Prefix(t) + "garbage"
	ctx := context.Background()
	if err := c.Set(ctx, key, "not:three:ints", 0).Err(); err != nil {
		t.Fatal(err)
	}
	lim := algos.MustLimit(10, algos.Second, 10)
	for _, name := range []string{"token-bucket", "fixed-window"} {
		l, _ := lua.New(name)
		if _, err := l.Call(ctx, c, key, lim, 5); err == nil || !strings.Contains(err.Error(), "three integers") {
			t.Errorf("%s script on a bad key: %v", name, err)
		}
		na, _ := lua.NewNonAtomic(name)
		if _, err := na.Do(ctx, c, lua.Args{Key: key, Limit: lim, Now: 5}); err == nil || !strings.Contains(err.Error(), "three integers") {
			t.Errorf("%s GET/SET on a bad key: %v", name, err)
		}
	}
}

// atomicityLimit: 10 per minute, so that every call of a run lands in one window.
var atomicityLimit = algos.MustLimit(10, 60*algos.Second, 10)

// TestAtomicityGetThenIncrRacesAndLuaDoesNot releases 50 concurrent callers,
// each on its own connection, on one key limited to 10: the fixed window
// written as GET then INCR lets more than 10 through, the script exactly 10.
//
// On loopback a GET's reply comes back in tens of µs, and about 2 runs in
// 100 let exactly 10 through; the callers here reach Redis through an
// in-process toxiproxy that delays every reply by 1 ms, the round trip the
// simulator models, and then every run races.
func TestAtomicityGetThenIncrRacesAndLuaDoesNot(t *testing.T) {
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	addr := latencyProxy(t, s.Addr, 1)
	l, err := lua.New("fixed-window")
	if err != nil {
		t.Fatal(err)
	}
	const callers, runs = 50, 10
	clients := make([]*redis.Client, callers)
	for i := range clients {
		clients[i] = redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxIdleConns: 1, DisableIdentity: true})
		t.Cleanup(func() { clients[i].Close() })
	}
	ctx := context.Background()
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

// latencyProxy starts an in-process toxiproxy in front of upstream that
// delays everything Redis sends back by ms milliseconds, and returns its
// loopback address. It stops when t ends.
func latencyProxy(t testing.TB, upstream string, ms int64) string {
	t.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "redis", "127.0.0.1:0", upstream)
	if err := proxy.Start(); err != nil {
		t.Fatalf("toxiproxy: %v", err)
	}
	t.Cleanup(proxy.Stop)
	toxic := fmt.Sprintf(`{"type": "latency", "stream": "downstream", "attributes": {"latency": %d}}`, ms)
	if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		t.Fatalf("toxiproxy: %v", err)
	}
	return proxy.Listen
}

// benchLimit is the limit of the benchmarks and of algos/lua/bench.sh, so
// that both measure the same script doing the same work.
var benchLimit = algos.MustLimit(100, algos.Second, 100)

// BenchmarkLua measures each script's throughput through go-redis, EVALSHA
// with Redis TIME, on one key and spread over 10,000 keys, from enough
// parallel clients that the client is not what limits it. Compare with
// algos/lua/bench.sh, redis-benchmark on the same script and Redis.
func BenchmarkLua(b *testing.B) {
	s := redistest.Start(b)
	prefix := s.Prefix(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 64, DisableIdentity: true})
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	for _, a := range algos.All() {
		l, err := lua.New(a.Name)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Load(ctx, c); err != nil {
			b.Fatal(err)
		}
		for _, keys := range []int{1, 10_000} {
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprintf("%sbench:%s:%d", prefix, a.Name, i)
			}
			b.Run(fmt.Sprintf("%s/keys=%d", a.Name, keys), func(b *testing.B) {
				var seed atomicSeed
				b.SetParallelism(16) // 32 clients on 2 cores, as redis-benchmark -c 32
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.next(), 1))
					for pb.Next() {
						if _, err := l.Call(ctx, c, names[rng.IntN(keys)], benchLimit, -1); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			})
		}
	}
}

// atomicSeed hands each parallel benchmark goroutine its own seed.
type atomicSeed struct {
	mu sync.Mutex
	n  uint64
}

func (s *atomicSeed) next() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
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
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	arrivals, err := scenarios.Traffic(1, limit, liveDuration)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, lc := range liveCases {
		if !lc.def && *redisLive != "all" {
			continue
		}
		name := fmt.Sprintf("%s %s", lc.algo, lc.deployment)
		if lc.skew > 0 {
			name += " " + algos.FormatMicros(lc.skew)
		}
		a, err := algos.ByName(lc.algo)
		if err != nil {
			t.Fatal(err)
		}
		c := replay.Case{Name: name, Algorithm: a, Limit: limit, Deployment: lc.deployment, Nodes: 4, Skew: lc.skew, Seed: 1, Requests: arrivals}
		rec, err := replay.Play(context.Background(), s.Addr, fmt.Sprintf("%slive:%d:", prefix, len(rows)), c)
		if err != nil {
			t.Fatal(err)
		}
		got := rec.Redis()
		replay, differ, err := rec.Replay()
		if err != nil {
			t.Fatal(err)
		}
		mean, err := rec.MeanDelay()
		if err != nil {
			t.Fatal(err)
		}
		ideal, err := rec.Ideal()
		if err != nil {
			t.Fatal(err)
		}
		legs := rec.MeanDelays()
		rows = append(rows, fmt.Sprintf("%-32s %5d %5d %5.2fx  %5d %5.2fx %4d  %5d %5.2fx %+6.1f%%  %5d %5.2fx  %4d/%d/%d",
			name, len(arrivals), got.Admitted, got.Peak, replay.Admitted, replay.Peak, differ,
			mean.Admitted, mean.Peak, pct(mean.Admitted, got.Admitted), ideal.Admitted, ideal.Peak, legs.Out, legs.Back, legs.Set))
		if d := replay.Admitted - got.Admitted; float64(abs(d)) > 0.005*float64(got.Admitted) {
			t.Errorf("%s: the replay admitted %d, Redis %d: more than 0.5%% apart", name, replay.Admitted, got.Admitted)
		}
		if d := replay.Peak - got.Peak; d > 0.02 || d < -0.02 {
			t.Errorf("%s: the replay's peak is %.3fx, Redis's %.3fx: more than 0.02 apart", name, replay.Peak, got.Peak)
		}
	}
	t.Logf("live replay, %s, %s per case, 100/s per key, 4 clients, 4 nodes, seed 1\n"+
		"%-32s %5s %12s  %17s  %20s  %12s  %s\n%s", s.Source, algos.FormatMicros(liveDuration),
		"case", "reqs", "redis", "replay (differ)", "mean delay (vs redis)", "ideal", "mean legs µs (out/back/set)",
		strings.Join(rows, "\n"))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a-b) / float64(b)
}

func abs(x int) int { return max(x, -x) }
