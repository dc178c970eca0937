package simredis

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// diffCalls is how many calls each script makes in the differential, shared
// among lua.SuiteKeys (each key then meets roundTimes as well). Each call on
// simredis costs a fresh Lua state (about 0.5 ms, 1.5 ms under -race), and
// the differential makes two for every call; the default keeps the package
// near 10 s under -race. A deeper run is
// `go test ./simredis -run Redis7 -simredis.calls 1500`.
var diffCalls = flag.Int("simredis.calls", 150, "calls per script in the differential against Redis 7")

// roundTimes end every key's calls: round times, which miniredis writes as
// scores in exponent form (1e+08 for 100 s), and which gopher-lua's
// tonumber cannot read back; Redis 7.0 writes them in full. The first goes
// back from the suite's times (a clock behind), as far as the epoch's first
// 100 s.
var roundTimes = []int64{100_000_000, 100_000_000, 200_000_000, 3_000_000_000_000_000}

// minDiffCalls is the fewest calls per script the differential accepts.
const minDiffCalls = 150

// TestSimredisAgainstRedis7 holds simredis to a real Redis 7: the
// differential of the module's scripts, and the probes of what rate-limiter
// scripts use. One Redis serves both.
func TestSimredisAgainstRedis7(t *testing.T) {
	rs := redistest.Start(t)
	real := rs.Client(t)
	prefix := rs.Prefix(t)
	version := redisVersion(t, real)
	t.Logf("Redis %s (%s)", version, rs.Source)
	t.Run("scripts", func(t *testing.T) { testScripts(t, real, prefix) })
	t.Run("probes", func(t *testing.T) { testProbes(t, real, prefix, version) })
}

func redisVersion(t *testing.T, c *redis.Client) string {
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return v
		}
	}
	t.Fatalf("no redis_version in INFO: %q", info)
	return ""
}

// scriptNames are the six algorithms' scripts and the planted bug's.
func scriptNames() []string {
	return append(algos.Names(), "planted-token-bucket-negative-refill")
}

// observation is what one call showed: the script's reply (the Redis TIME
// in it, element 4, taken out), or its error; the key afterwards (GET, or
// the sorted set's members and scores); its PEXPIRETIME, and on simredis its
// PTTL.
type observation struct {
	reply      []any
	err        string
	redisTime  int64
	value      string
	members    []redis.Z
	expireTime int64 // ms; -2 no key, -1 no expiry
	pttl       int64 // ms, simredis only
	after      int64 // µs, Redis only: its TIME just after the call's reads
}

// same reports how a and b (Redis and simredis) differ, "" if they do not:
// the reply, the error, the stored value; the expiry is judged apart.
func (a observation) same(b observation) string {
	switch {
	case a.err != b.err:
		return fmt.Sprintf("error %q vs %q", a.err, b.err)
	case fmt.Sprint(a.reply) != fmt.Sprint(b.reply):
		return fmt.Sprintf("reply %v vs %v", a.reply, b.reply)
	case a.value != b.value:
		return fmt.Sprintf("stored %q vs %q", a.value, b.value)
	case !slices.Equal(a.members, b.members):
		return fmt.Sprintf("sorted set %v vs %v", a.members, b.members)
	case (a.expireTime == -2) != (b.expireTime == -2):
		return fmt.Sprintf("PEXPIRETIME %d vs %d (one key missing)", a.expireTime, b.expireTime)
	}
	return ""
}

// wantLife is the life in ms a script gives its key after a call whose
// reply is r: lua.TTL of the decision (every script sets it on every call).
func wantLife(r []any) int64 {
	reset, _ := r[3].(int64)
	return lua.TTL(algos.Decision{Reset: reset}).Milliseconds()
}

// caller runs one script's calls on one key and reads what they left.
type caller struct {
	script  *redis.Script
	key     string
	lim     algos.Limit
	isZSet  bool
	seqKey  string
	reading func(pipe redis.Pipeliner) []redis.Cmder
}

func newCaller(l *lua.Script, key string, lim algos.Limit) *caller {
	return &caller{
		script: redis.NewScript(l.Source()),
		key:    key,
		seqKey: key + ":seq",
		lim:    lim,
		isZSet: l.Name() == "sliding-log",
	}
}

func (c *caller) args(now int64) []any {
	return []any{now, c.lim.Rate, c.lim.Window, c.lim.Burst, c.lim.Unit, c.lim.Refill}
}

// queue adds one call at now (-1: the script reads TIME) and the reads after
// it to pipe.
func (c *caller) queue(ctx context.Context, pipe redis.Pipeliner, now int64, sim bool) func() observation {
	eval := c.script.EvalSha(ctx, pipe, []string{c.key, c.seqKey}, c.args(now)...)
	return c.reads(ctx, pipe, eval, sim)
}

func (c *caller) reads(ctx context.Context, pipe redis.Pipeliner, eval *redis.Cmd, sim bool) func() observation {
	et := pipe.Do(ctx, "PEXPIRETIME", c.key)
	var pttl *redis.Cmd
	if sim {
		pttl = pipe.Do(ctx, "PTTL", c.key)
	}
	var get *redis.StringCmd
	var zr *redis.ZSliceCmd
	if c.isZSet {
		zr = pipe.ZRangeWithScores(ctx, c.key, 0, -1)
	} else {
		get = pipe.Get(ctx, c.key)
	}
	var after *redis.TimeCmd
	if !sim {
		after = pipe.Time(ctx)
	}
	return func() observation {
		var o observation
		if err := eval.Err(); err != nil {
			o.err = err.Error()
		} else if r, ok := eval.Val().([]any); ok && len(r) > 6 {
			o.redisTime, _ = r[4].(int64)
			o.reply = append(append([]any{}, r[:4]...), r[5:]...)
		} else {
			o.err = fmt.Sprintf("reply %#v", eval.Val())
		}
		o.expireTime, _ = et.Int64()
		if pttl != nil {
			o.pttl, _ = pttl.Int64()
		}
		if get != nil {
			o.value = get.Val()
		} else {
			o.members = zr.Val()
		}
		if after != nil {
			o.after = after.Val().UnixMicro()
		}
		return o
	}
}

// onRedis runs the calls on the real Redis, told each call's time, in
// pipelines.
func (c *caller) onRedis(ctx context.Context, t *testing.T, rc *redis.Client, times []int64) []observation {
	if err := c.script.Load(ctx, rc).Err(); err != nil {
		t.Fatal(err)
	}
	var out []observation
	for from := 0; from < len(times); from += 200 {
		pipe := rc.Pipeline()
		var got []func() observation
		for _, now := range times[from:min(len(times), from+200)] {
			got = append(got, c.queue(ctx, pipe, now, false))
		}
		pipe.Exec(ctx)
		for _, g := range got {
			out = append(out, g())
		}
	}
	return out
}

// simRun is what onSim saw: an observation and the clock of each call,
// and the server and client it ran on, left as the last call left them.
type simRun struct {
	obs    []observation
	clocks []int64
	s      *Server
	c      *redis.Client
	err    error
}

// onSim runs the calls on a fresh simredis, one at a time with the clock
// set first. Told: the clock is the latest time told so far (a store's
// clock is true time, which the told times trail), and the script is told
// the time. Reading TIME: the clock is the call's time (stepped back for a
// time behind the latest), and the script reads it. The first call goes
// through go-redis's Script.Run, which meets NOSCRIPT and falls back to
// EVAL; the others through EVALSHA.
func (c *caller) onSim(ctx context.Context, t *testing.T, times []int64, readTime bool) (run simRun) {
	s, err := Start()
	if err != nil {
		run.err = err
		return run
	}
	t.Cleanup(s.Close)
	run.s, run.c = s, redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { run.c.Close() })
	for i, now := range times {
		clock := max(s.Clock(), now)
		told := now
		if readTime {
			clock, told = now, -1
		}
		if clock < s.Clock() {
			run.err = s.StepBack(clock)
		} else {
			run.err = s.SetClock(clock)
		}
		if run.err != nil {
			return run
		}
		pipe := run.c.Pipeline()
		var get func() observation
		if i == 0 {
			eval := c.script.Run(ctx, run.c, []string{c.key, c.seqKey}, c.args(told)...)
			get = c.reads(ctx, pipe, eval, true)
		} else {
			get = c.queue(ctx, pipe, told, true)
		}
		pipe.Exec(ctx)
		run.obs = append(run.obs, get())
		run.clocks = append(run.clocks, clock)
	}
	return run
}

// diffTally counts what the differential compared and found.
type diffTally struct {
	calls, admitted, denied int
	differences             int // replies, errors, stored values, key presence
	lifeExact               int // simredis: PEXPIRETIME and PTTL exactly the script's TTL
	lifeOff                 int // simredis: not
	realLifeExact           int // Redis: PEXPIRETIME - ⌊TIME/1000⌋ exactly the TTL
	realLifeLate            int // Redis: later, by no more than its clock moved from the script's TIME to the TIME after the call
	realLifeOff             int // Redis: neither
	timeExact, timeOff      int // simredis: the TIME in the reply is the clock
	boundary, boundaryOff   int // simredis: the key there at its last µs, gone the next
	first                   []string
}

func (d *diffTally) note(format string, a ...any) {
	if len(d.first) < 8 {
		d.first = append(d.first, fmt.Sprintf(format, a...))
	}
}

// testScripts is the differential: every script of the module, on every
// key of lua.SuiteKeys with the suite's calls, on Redis told the time and on
// simredis both told the time and reading TIME, compared call for call.
func testScripts(t *testing.T, rc *redis.Client, prefix string) {
	if *diffCalls < minDiffCalls {
		t.Fatalf("-simredis.calls %d: the differential needs at least %d calls a script", *diffCalls, minDiffCalls)
	}
	ctx := context.Background()
	start := time.Now()
	var total diffTally
	for si, name := range scriptNames() {
		l, err := lua.New(name)
		if err != nil {
			t.Fatal(err)
		}
		var tally diffTally
		suite := lua.Suite{Calls: *diffCalls, Seed: uint64(70 + si), Then: roundTimes}
		for k, sk := range lua.SuiteKeys {
			times, err := suite.KeyCalls(k)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("%ssimredis:%s:%d", prefix, name, k)
			c := newCaller(l, key, sk.Limit)
			onRedis := c.onRedis(ctx, t, rc, times)
			// The two runs on simredis, told the time and reading TIME,
			// each on its own server, side by side.
			var runs [2]simRun
			var wg sync.WaitGroup
			for m := range runs {
				wg.Go(func() { runs[m] = c.onSim(ctx, t, times, m == 1) })
			}
			wg.Wait()
			for m, run := range runs {
				if run.err != nil {
					t.Fatal(run.err)
				}
				mode := []string{"told", "TIME"}[m]
				for i := range times {
					compare(&tally, fmt.Sprintf("%s key %d call %d at %d µs (%s)", name, k, i, times[i], mode), onRedis[i], run.obs[i], run.clocks[i])
				}
				boundary(ctx, t, &tally, run.s, run.c, key)
			}
		}
		t.Logf("%-36s %5d comparisons (%d admitted, %d denied), %d differences, %d of %d lives exact on simredis, Redis %d exact and %d late, %d TIME exact",
			name, tally.calls, tally.admitted, tally.denied, tally.differences, tally.lifeExact, tally.calls, tally.realLifeExact, tally.realLifeLate, tally.timeExact)
		if tally.denied == 0 || tally.admitted == 0 {
			t.Errorf("%s: %d admitted and %d denied: the calls never reached both sides of the limit", name, tally.admitted, tally.denied)
		}
		total.add(tally)
	}
	t.Logf("measured: %d scripts, %d comparisons of a call on simredis with the same call on Redis 7 (%d admitted, %d denied), %d differences; "+
		"key life exact on simredis %d (off %d); on Redis exact %d, later by Redis's own clock %d, off %d; TIME exactly the clock %d (off %d); "+
		"expiry at the boundary µs %d (off %d); in %v",
		len(scriptNames()), total.calls, total.admitted, total.denied, total.differences,
		total.lifeExact, total.lifeOff, total.realLifeExact, total.realLifeLate, total.realLifeOff,
		total.timeExact, total.timeOff, total.boundary, total.boundaryOff, time.Since(start).Round(time.Millisecond))
	for _, f := range total.first {
		t.Log(f)
	}
	wantCalls := 2 * len(scriptNames()) * (*diffCalls + len(lua.SuiteKeys)*len(roundTimes))
	switch {
	case total.calls != wantCalls:
		t.Errorf("%d comparisons, want %d (two modes, %d scripts, %d calls each)", total.calls, wantCalls, len(scriptNames()), *diffCalls)
	case total.differences != 0:
		t.Errorf("%d differences between simredis and Redis 7", total.differences)
	case total.lifeExact != total.calls || total.timeExact != total.calls:
		t.Errorf("simredis: %d of %d key lives and %d of %d TIMEs exact", total.lifeExact, total.calls, total.timeExact, total.calls)
	case total.realLifeOff != 0:
		t.Errorf("Redis: %d key lives neither exact nor later by at most the ms its clock moved during the call", total.realLifeOff)
	case total.boundary != 2*len(scriptNames())*len(lua.SuiteKeys) || total.boundaryOff != 0:
		t.Errorf("expiry boundary: %d checks, %d off", total.boundary, total.boundaryOff)
	}
}

func (d *diffTally) add(o diffTally) {
	d.calls += o.calls
	d.admitted += o.admitted
	d.denied += o.denied
	d.differences += o.differences
	d.lifeExact += o.lifeExact
	d.lifeOff += o.lifeOff
	d.realLifeExact += o.realLifeExact
	d.realLifeLate += o.realLifeLate
	d.realLifeOff += o.realLifeOff
	d.timeExact += o.timeExact
	d.timeOff += o.timeOff
	d.boundary += o.boundary
	d.boundaryOff += o.boundaryOff
	for _, f := range o.first {
		d.note("%s", f)
	}
}

// compare judges one call: the same reply, error and stored value on both;
// on simredis the key lives exactly the script's TTL from the clock (by
// PEXPIRETIME and by PTTL) and TIME is the clock; on Redis it lives that
// TTL from the TIME the script read, or later when Redis's own clock passed
// a ms between the script's TIME and its SET: by at most the ms it passed
// up to the TIME read just after the call, whatever paused Redis meanwhile.
func compare(d *diffTally, what string, r, s observation, clock int64) {
	d.calls++
	if diff := r.same(s); diff != "" {
		d.differences++
		d.note("%s: %s", what, diff)
		return
	}
	if r.err != "" {
		return
	}
	if r.reply[0] == int64(1) {
		d.admitted++
	} else {
		d.denied++
	}
	life := wantLife(r.reply)
	if s.expireTime-clock/1000 == life && s.pttl == life {
		d.lifeExact++
	} else {
		d.lifeOff++
		d.note("%s: simredis key life %d ms by PEXPIRETIME, %d by PTTL, want %d", what, s.expireTime-clock/1000, s.pttl, life)
	}
	switch late := r.expireTime - r.redisTime/1000 - life; {
	case late == 0:
		d.realLifeExact++
	case late > 0 && late <= r.after/1000-r.redisTime/1000:
		d.realLifeLate++
	default:
		d.realLifeOff++
		d.note("%s: Redis key life %d ms, want %d", what, r.expireTime-r.redisTime/1000, life)
	}
	if s.redisTime == clock {
		d.timeExact++
	} else {
		d.timeOff++
		d.note("%s: simredis TIME %d µs, clock %d", what, s.redisTime, clock)
	}
}

// boundary moves simredis's clock to the last µs of the key's expiry ms,
// where the key must be there with PTTL 0, and one µs on, where it must be
// gone.
func boundary(ctx context.Context, t *testing.T, d *diffTally, s *Server, c *redis.Client, key string) {
	at, err := c.PExpireTime(ctx, key).Result()
	if err != nil || at < 0 {
		d.boundary++
		d.boundaryOff++
		d.note("%s: PEXPIRETIME %v %v after the last call: no expiry to reach", key, at, err)
		return
	}
	last := (at.Milliseconds()+1)*1000 - 1
	setClock(t, s, last)
	d.boundary++
	if c.Exists(ctx, key).Val() != 1 || c.PTTL(ctx, key).Val() != 0 {
		d.boundaryOff++
		d.note("%s: gone, or PTTL not 0, at %d µs, the last µs of its expiry %v", key, last, at)
	}
	setClock(t, s, last+1)
	if c.Exists(ctx, key).Val() != 0 {
		d.boundaryOff++
		d.note("%s: still there at %d µs, past its expiry %v", key, last+1, at)
	}
}
