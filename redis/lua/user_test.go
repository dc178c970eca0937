package lua_test

// A user's own script goes through the differential the six built-in
// scripts pass, and the differential catches what a user gets wrong.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/redis/lua"
)

// TestUserScriptDifferential holds a user's own script and its Go twin to
// the differential the six built-in scripts pass: written correctly it
// agrees call for call on every key of lua.SuiteKeys; with "<" planted as "<=" the
// report's first difference is the first call the twin denies, told in
// words, at 7 per 3 s as at 100 per second, and reading TIME as told the
// time; with the key expiring after half the window, before the window's
// count stops counting, the TTL checks say it expires too early; with 10 s
// more than its own expiry, it passes, on both paths.
func TestUserScriptDifferential(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	body := userScript
	plant := func(correct, wrong string) *lua.Script {
		t.Helper()
		if n := strings.Count(body, correct); n != 1 {
			t.Fatalf("testdata/user-fixed-window.lua holds %q %d times, want once", correct, n)
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
	suite := lua.Suite{Calls: n * len(lua.SuiteKeys), Seed: 50} // n calls a key
	calls := func(k int) (algos.Limit, []int64) {
		t.Helper()
		times, err := suite.KeyCalls(k)
		if err != nil {
			t.Fatal(err)
		}
		return lua.SuiteKeys[k].Limit, times
	}
	run := func(l *lua.Script, key string, lim algos.Limit, times []int64) lua.DiffReport {
		t.Helper()
		rep, err := lua.Differential(ctx, c, l, prefix+key, lim, times)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	whole, err := suite.Run(ctx, c, good, prefix+"user")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for k, run := range whole.Runs {
		if rep := run.Report; !rep.OK() || rep.Differences != 0 || rep.Calls != n || rep.TTLChecks == 0 {
			t.Errorf("the user's script against its twin:\n%v", rep)
		}
		lines = append(lines, fmt.Sprintf("%-26s %s", lua.SuiteKeys[k].Limit, run.Report.Summary()))
	}
	if !whole.OK() {
		t.Errorf("the user's script against its twin:\n%v", whole)
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
	// Reading TIME the calls come a few µs apart, so the window's count
	// reaches the limit there too, and the <= shows.
	if st := planted.OnStoreClock; st == nil || st.Differences == 0 || st.First[0].Go.Allowed || !st.First[0].Lua.Allowed {
		t.Errorf("the planted <= was not reported reading TIME:\n%v", planted)
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
		planted100.First[0].Before[1] != lim100.Rate || !planted100.First[0].Lua.Allowed ||
		planted100.OnStoreClock == nil || planted100.OnStoreClock.Differences == 0 {
		t.Errorf("the planted <= at %v was not reported at the limit:\n%v", lim100, planted100)
	}

	// An expiry after half the window decides alike, and the TTL checks
	// report it: the key would be forgotten while its count still counts.
	half := run(plant("ttl(window_end)", "fmt(ceildiv(window, 2000))"), "user:half-window", lim, times)
	if half.OK() || half.Differences != 0 || half.OnStoreClock == nil || half.OnStoreClock.Differences != 0 || half.TTLDifferences == 0 || len(half.FirstTTL) == 0 ||
		!half.FirstTTL[0].Early() || !strings.Contains(half.String(), "too early: the twin's state is not idle until") {
		t.Errorf("the expiry after half the window was not reported as too early:\n%v", half)
	}
	// An expiry 10 s later than the script's own is safe, and passes.
	longer := run(plant("ttl(window_end)", "ttl(window_end + 10000000)"), "user:longer", lim, times)
	if !longer.OK() {
		t.Errorf("the expiry 10 s later than needed was not accepted:\n%v", longer)
	}
	t.Logf("a user's script (%s) against its Go twin, %s:\n%s\n\nwith \"<\" planted as \"<=\":\n%v\n\nand at %v:\n%v\n\nwith the key expiring after half the window:\n%v\n\nwith the key expiring 10 s later than needed:\n%s",
		"testdata/user-fixed-window.lua", s.Source, strings.Join(lines, "\n"), planted, lim100, planted100, half, longer.Summary())
}
