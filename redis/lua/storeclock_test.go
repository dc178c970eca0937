package lua_test

// The store-clock path: a script told nothing reads Redis TIME, and the
// differential holds what it decides there to the Go twin deciding at the
// TIME the script read, to the µs, on a real Redis 7 (whose clock is its
// own) and on simredis (whose clock the differential sets to the calls'
// times).

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/race"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/overshoot-go/overshoot/traffic"
)

// wholeSeconds is the planted script that keeps only the whole seconds of
// TIME on the store-clock path, and is the token bucket when told the time.
const wholeSeconds = "planted-token-bucket-whole-seconds"

func mustNew(t *testing.T, name string) *lua.Script {
	t.Helper()
	l, err := lua.New(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestStoreClockPathCaughtWhenScriptKeepsWholeSeconds: a token bucket that,
// told nothing, reads TIME and keeps only its seconds passes the told path
// on every seed, as the token bucket it is there, and is caught on the
// store-clock path on every seed (simredis, its clock set to each call's
// time) and on every run (Redis 7, its own clock): its first difference is
// the first call, which stores as last the whole second where the twin
// stores the µs the script read. The correct token bucket, on the same
// calls, is clean on both paths. Under -race, where a call on simredis
// costs a hundred times more, simredis runs the first 5 seeds.
func TestStoreClockPathCaughtWhenScriptKeepsWholeSeconds(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	ctx := context.Background()
	planted, good := mustNew(t, wholeSeconds), mustNew(t, algos.TokenBucket.Name)
	if planted.Algorithm().Decide == nil || planted.Name() != wholeSeconds {
		t.Fatalf("New(%q): twin %q", wholeSeconds, planted.Name())
	}
	// Below its clock lines, the plant is token-bucket.lua.
	const from = "local capacity = burst * unit\n"
	_, plantBody, ok1 := strings.Cut(planted.Source(), from)
	_, goodBody, ok2 := strings.Cut(good.Source(), from)
	if !ok1 || !ok2 || plantBody != goodBody {
		t.Fatalf("%s.lua is not token-bucket.lua from %q on", wholeSeconds, from)
	}
	// A seed's calls: the first burst's. The plant shows on the first call
	// (a store-clock call lands on a whole second about once in 10^6), and
	// each call on simredis costs about 25 µs of gopher-lua.
	const calls = 30
	// seedCalls are seed's calls, on one of the suite's keys in turn.
	seedCalls := func(t *testing.T, seed uint64) (algos.Limit, []int64) {
		t.Helper()
		sk := lua.SuiteKeys[seed%uint64(len(lua.SuiteKeys))]
		times, err := traffic.DifferentialCalls(seed, sk.Limit, sk.Origin, calls)
		if err != nil {
			t.Fatal(err)
		}
		return sk.Limit, times
	}
	// caught holds one run of the plant to the claim: the told path clean,
	// and reports whether the store-clock path caught it, as it must: the
	// first call stores the whole second.
	caught := func(t *testing.T, rep lua.DiffReport) bool {
		t.Helper()
		s := rep.OnStoreClock
		if !rep.PathOK() || s == nil || s.Calls != calls || s.Errors != 0 {
			t.Errorf("told the time, the plant must pass as the token bucket, and run every call reading TIME:\n%v", rep)
			return false
		}
		if s.PathOK() || s.Differences == 0 {
			return false
		}
		f := s.First[0]
		if f.Call != 0 || f.Clock != limiter.StoreClock || strings.Join(f.Fields(), ",") != "stored" ||
			f.Told%algos.Second == 0 || f.GoStored[1] != f.Told || f.LuaStored[1] != f.Told-f.Told%algos.Second {
			t.Errorf("the first difference is not the first call storing the whole second of the TIME it read:\n%v", f)
		}
		return true
	}
	// tally is what a subtest keeps of its runs: how many caught the plant,
	// and the first difference of the first that did.
	type tally struct {
		got   int
		first string
	}
	// hold holds the report of l's run to its claim (the token bucket clean
	// on both paths, the plant caught), and counts in tl a plant caught.
	hold := func(t *testing.T, tl *tally, l *lua.Script, rep lua.DiffReport) {
		t.Helper()
		switch {
		case l == good:
			if !rep.OK() || rep.OnStoreClock.Calls != calls {
				t.Errorf("the token bucket on the same calls:\n%v", rep)
			}
		case caught(t, rep):
			if tl.got++; tl.first == "" {
				tl.first = rep.OnStoreClock.First[0].String()
			}
		}
	}

	t.Run("simredis, every seed", func(t *testing.T) {
		t.Parallel() // Redis 7 runs its Lua while simredis runs its own
		s, c := lua.SimStore(t)
		seeds := uint64(100)
		if race.Enabled {
			seeds = 5 // gopher-lua under -race: 2 to 5 ms a call, not about 30 µs
		}
		var tl tally
		for seed := uint64(1); seed <= seeds; seed++ {
			lim, times := seedCalls(t, seed)
			for _, l := range []*lua.Script{planted, good} {
				key := fmt.Sprintf("%s:%d", l.Name(), seed)
				rep, err := lua.DifferentialWith(ctx, c, l, key, lim, times, lua.DiffOptions{Clock: s})
				if err != nil {
					t.Fatal(err)
				}
				hold(t, &tl, l, rep)
				// A key a seed: the clock's moves visit every key kept.
				if err := c.Del(ctx, key, key+lua.StoreClockKeySuffix).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if tl.got != int(seeds) {
			t.Errorf("the store-clock path caught the plant on %d of %d seeds, want every one", tl.got, seeds)
		}
		t.Logf("simredis: %s caught on the store-clock path on %d of %d seeds (%d calls each), clean told the time on every one; the token bucket clean on both paths on every one; the first seed's first difference:\n%s",
			wholeSeconds, tl.got, seeds, calls, tl.first)
	})

	t.Run("Redis 7, every run", func(t *testing.T) {
		t.Parallel() // Redis 7 runs its Lua while simredis runs its own
		rs := redistest.Start(t)
		c, prefix := rs.Client(t), rs.Prefix(t)
		const runs = 10
		var tl tally
		for run := uint64(1); run <= runs; run++ {
			lim, times := seedCalls(t, run)
			for _, l := range []*lua.Script{planted, good} {
				rep, err := lua.Differential(ctx, c, l, fmt.Sprintf("%s%s:%d", prefix, l.Name(), run), lim, times)
				if err != nil {
					t.Fatal(err)
				}
				hold(t, &tl, l, rep)
			}
		}
		if tl.got != runs {
			t.Errorf("the store-clock path caught the plant on %d of %d runs, want every one", tl.got, runs)
		}
		t.Logf("Redis 7 (%s): %s caught on the store-clock path on %d of %d runs (%d calls each), clean told the time on every one; the token bucket clean on both paths on every one; the first run's first difference:\n%s",
			rs.Source, wholeSeconds, tl.got, runs, calls, tl.first)
	})
}

// TestScriptsAgreeWithTheirTwinsOnBothPaths: the six scripts, held by
// lua.Suite to their twins told the time and reading TIME, agree on every
// decision, stored value and expiry, and reach their limits, on both paths,
// on simredis (the store-clock path at the told times, to the µs, back
// steps included) and on Redis 7 (at its own clock's times). On simredis
// the store-clock calls land at whole seconds only where the calls' aligned
// windows put them (a window's first µs, for windows of whole seconds).
// Under -race simredis runs 13 calls a key, where every decision and value
// must still agree, though not every key's limit is reached.
func TestScriptsAgreeWithTheirTwinsOnBothPaths(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	ctx := context.Background()
	// On simredis, 260 calls a key: at the told times, the 250 per 7 s
	// key's first burst, of 252 to 255 calls, reaches its limit.
	calls := 260 * len(lua.SuiteKeys)
	// On Redis 7, 502 a key: its clock puts a key's calls a few µs apart,
	// wherever they fall among the fixed window's 7 s windows, so a
	// window's start can split the 250 per 7 s key's calls in two. Of 260,
	// a split anywhere but among the first or last ten leaves each half
	// 250 or fewer, none denied (a loaded run saw it); of 502, taking far
	// less than 7 s, one half has 251 or more wherever the split falls.
	redisCalls := 502 * len(lua.SuiteKeys)
	t.Run("simredis", func(t *testing.T) {
		t.Parallel() // Redis 7 runs its Lua while simredis runs its own
		s, c := lua.SimStore(t)
		n := calls
		if race.Enabled {
			n = calls / 20
		}
		var lines []string
		storeCalls, whole := 0, 0
		for ai, a := range algos.All() {
			rep, err := lua.Suite{Calls: n, Seed: uint64(90 + ai), Clock: s}.Run(ctx, c, mustNew(t, a.Name), "both:"+a.Name)
			if err != nil {
				t.Fatal(err)
			}
			agreed := true
			for _, run := range rep.Runs {
				agreed = agreed && run.Report.OK()
			}
			if !agreed || !race.Enabled && !rep.OK() {
				t.Error(rep)
			}
			for _, run := range rep.Runs {
				for _, now := range run.Times {
					if storeCalls++; now%algos.Second == 0 {
						whole++
					}
				}
			}
			lines = append(lines, rep.Summary())
		}
		if whole*100 > storeCalls {
			t.Errorf("%d of %d store-clock calls at a whole second: want under 1%%, so that a script keeping the seconds alone shows", whole, storeCalls)
		}
		t.Logf("simredis, %d of %d store-clock calls at a whole second:\n%s", whole, storeCalls, strings.Join(lines, "\n"))
	})
	t.Run("Redis 7", func(t *testing.T) {
		t.Parallel() // Redis 7 runs its Lua while simredis runs its own
		rs := redistest.Start(t)
		c, prefix := rs.Client(t), rs.Prefix(t)
		var lines []string
		for ai, a := range algos.All() {
			rep, err := lua.Suite{Calls: redisCalls, Seed: uint64(90 + ai)}.Run(ctx, c, mustNew(t, a.Name), prefix+"both:"+a.Name)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Error(rep)
			}
			lines = append(lines, rep.Summary())
		}
		t.Logf("Redis 7 (%s):\n%s", rs.Source, strings.Join(lines, "\n"))
	})
}
