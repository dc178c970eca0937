package lua

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLuaFromSource: New is FromSource with the embedded file, and
// FromSource refuses what it can tell is wrong before Redis sees it.
func TestLuaFromSource(t *testing.T) {
	for _, a := range algos.All() {
		l, err := New(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := Source(a.Name)
		if l.Source() != src {
			t.Errorf("%s: New's source is not Source(%q)", a.Name, a.Name)
		}
		body, _ := sources.ReadFile(a.Name + ".lua")
		u, err := FromSource(a, string(body))
		if err != nil {
			t.Fatal(err)
		}
		if u.SHA() != l.SHA() || u.Name() != a.Name {
			t.Errorf("%s: FromSource with the embedded body is not New's script", a.Name)
		}
	}
	twin := algos.FixedWindow
	for _, c := range []struct {
		name string
		algo algos.Algorithm
		body string
		want string
	}{
		{"no name", algos.Algorithm{Decide: twin.Decide}, "return 1", "no Name"},
		{"no decide", algos.Algorithm{Name: "mine"}, "return 1", "no Decide"},
		{"empty body", twin, "", "empty"},
		{"blank body", twin, " \n\t", "empty"},
		{"prelude twice", twin, mustSource(t, "fixed-window"), "already contains the prelude"},
	} {
		if _, err := FromSource(c.algo, c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: FromSource = %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func mustSource(t *testing.T, name string) string {
	t.Helper()
	src, err := Source(name)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestLuaDifferentialCalls: the same arguments give the same times, and the
// times hold every kind of call the generator promises.
func TestLuaDifferentialCalls(t *testing.T) {
	lim := algos.MustLimit(100, algos.Second, 100) // 3 gaps are 3% of the window
	const start, n = 1_700_000_000_000_000, 5000
	a, err := DifferentialCalls(1, lim, start, n)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DifferentialCalls(1, lim, start, n)
	c, _ := DifferentialCalls(2, lim, start, n)
	if !slices.Equal(a, b) || slices.Equal(a, c) || len(a) != n {
		t.Fatal("DifferentialCalls is not a function of its seed")
	}
	gap := lim.Window / lim.Rate
	var same, behind, idle, edge, oneWindow int
	latest := a[0]
	for i := 1; i < n; i++ {
		now := a[i]
		if now == a[i-1] {
			same++
		}
		if now < latest {
			behind++
			if latest-now > 60_000 {
				t.Fatalf("call %d is %d µs behind, more than 60 ms", i, latest-now)
			}
		}
		if now-latest >= algos.Second {
			idle++
		}
		if r := now % lim.Window; r == 0 || r >= lim.Window-3*gap {
			edge++
		}
		if slices.Contains(a[max(0, i-16):i], now-lim.Window) {
			oneWindow++
		}
		latest = max(latest, now)
	}
	t.Logf("%d calls: %d in the µs of the one before, %d behind, %d after a second or more idle, %d near a window edge, %d exactly one window after an earlier one",
		n, same, behind, idle, edge, oneWindow)
	for what, c := range map[string]struct{ got, want int }{
		"same µs":    {same, n / 50},
		"behind":     {behind, n / 20},
		"idle":       {idle, n / 50},
		"edge":       {edge, n / 12},
		"one window": {oneWindow, n / 50},
	} {
		if c.got < c.want {
			t.Errorf("%s: %d of %d calls, want at least %d", what, c.got, n, c.want)
		}
	}
	near, _ := DifferentialCalls(3, lim, 0, 1000)
	if slices.Min(near) < 0 {
		t.Error("calls from a start of 0 went below 0")
	}
	for _, bad := range []struct {
		lim   algos.Limit
		start int64
		n     int
	}{
		{algos.Limit{Rate: 1, Window: 1, Burst: 1}, 0, 10},
		{lim, -1, 10},
		{lim, 0, -1},
		{lim, algos.MaxTime - algos.Second, 1000},
	} {
		if _, err := DifferentialCalls(1, bad.lim, bad.start, bad.n); err == nil {
			t.Errorf("DifferentialCalls(%+v, %d, %d) succeeded", bad.lim, bad.start, bad.n)
		}
	}
}

// TestLuaDifferentialRejectsBadInput: what Differential can refuse without
// Redis, it refuses without sending anything.
func TestLuaDifferentialRejectsBadInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second, DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	l, _ := New("gcra")
	lim := algos.MustLimit(1, algos.Second, 1)
	for _, bad := range []struct {
		name  string
		l     *Limiter
		key   string
		lim   algos.Limit
		times []int64
		want  string
	}{
		{"nil limiter", nil, "k", lim, []int64{1}, "nil Limiter"},
		{"empty key", l, "", lim, []int64{1}, "empty key"},
		{"bad limit", l, "k", algos.Limit{}, []int64{1}, "limit"},
		{"negative time", l, "k", lim, []int64{1, -1}, "call 1 at -1"},
		{"past MaxTime", l, "k", lim, []int64{algos.MaxTime + 1}, "MaxTime"},
	} {
		if _, err := Differential(ctx, c, bad.l, bad.key, bad.lim, bad.times); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error saying %q", bad.name, err, bad.want)
		}
	}
	if _, err := Differential(ctx, c, l, "k", lim, []int64{1}); err == nil {
		t.Error("Differential against a closed port succeeded")
	}
}

// TestLuaDifferenceInWords: a report says what differs, both decisions and
// both states.
func TestLuaDifferenceInWords(t *testing.T) {
	d := Difference{
		Call: 3, Now: 1_000_000,
		Before:   []int64{1, 5, 0},
		Go:       algos.Decision{Allowed: false, RetryAfter: 20, Reset: 20},
		Lua:      algos.Decision{Allowed: true, Remaining: -1, Reset: 20},
		GoStored: []int64{1, 5, 0}, LuaStored: []int64{1, 6, 0},
		StateDoc: "window index, count",
	}
	want := "call 3 at 1000000 µs differs in allowed, remaining, retry-after, stored:\n" +
		"  before the call the twin held [1 5 0] (window index, count)\n" +
		"  go twin: denied, remaining 0, retry-after 20 µs, reset 20 µs; stores [1 5 0]\n" +
		"  script:  admitted, remaining -1, retry-after 0 µs, reset 20 µs; stores [1 6 0]"
	if got := d.String(); got != want {
		t.Errorf("Difference.String:\n%s\nwant:\n%s", got, want)
	}
	d.Before = nil
	if got := d.String(); !strings.Contains(got, "held nothing (the key was absent)") {
		t.Errorf("an absent key before the call reads %q", got)
	}
	long := make([]int64, 20)
	for i := range long {
		long[i] = int64(i)
	}
	if got := shortInts(long); got != "[0 1 2] … [12 13 14 15 16 17 18 19] (20 values)" {
		t.Errorf("shortInts of a long log: %q", got)
	}
	for _, c := range []struct {
		d    TTLDifference
		want string
	}{
		{TTLDifference{Call: 9, Decision: algos.Decision{Allowed: true, Reset: 1500}, Got: -1},
			"TTL after call 9 (admitted, remaining 0, retry-after 0 µs, reset 1500 µs): the key has no expiry; want at most 1.002s (reset 1500 µs rounded up to the ms, plus 1s) and no less than 502ms"},
		{TTLDifference{Call: 9, Absent: true, Got: 700 * time.Millisecond},
			"TTL after call 9 (denied, remaining 0, retry-after 0 µs, reset 0 µs): the key expires in 700ms; it should not exist, as the script stores nothing"},
		{TTLDifference{Call: 9, Got: -2}, "the key does not exist"},
	} {
		if got := c.d.String(); !strings.Contains(got, c.want) {
			t.Errorf("TTLDifference.String = %q, want it to contain %q", got, c.want)
		}
	}
	r := DiffReport{Algorithm: "mine", Key: "k", Limit: algos.MustLimit(1, algos.Second, 1), Calls: 10, Admitted: 4,
		Differences: 7, First: []Difference{d}, TTLChecks: 2}
	if r.OK() || !strings.HasPrefix(r.String(), `mine on "k", 1 per 1s (burst 1): 10 calls (4 admitted), 7 differences, 2 of 2 TTLs within bound`) ||
		!strings.HasSuffix(r.String(), "(6 more differences not shown)") {
		t.Errorf("DiffReport.String:\n%s", r)
	}
}

// allowAll is a twin that admits everything and stores nothing.
var allowAll = algos.Algorithm{
	Name:     "allow-all",
	StateDoc: "nothing",
	Decide: func(_ *algos.State, _ int64, l algos.Limit) algos.Decision {
		return algos.Decision{Allowed: true, Remaining: l.Rate}
	},
}

// TestLuaDifferentialAgainstRedis: a twin that stores nothing passes only
// when the script leaves the key absent; a key that exists, a Lua error and a
// reply of the wrong shape are errors, not reports.
func TestLuaDifferentialAgainstRedis(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	lim := algos.MustLimit(3, algos.Second, 3)
	times, err := DifferentialCalls(1, lim, 5*algos.Second, 450)
	if err != nil {
		t.Fatal(err)
	}
	script := func(body string) *Limiter {
		t.Helper()
		l, err := FromSource(allowAll, body)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	rep, err := Differential(ctx, c, script("return reply(true, rate, 0, 0, {})\n"), prefix+"absent", lim, times)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Calls != 450 || rep.Admitted != 450 || rep.TTLChecks != 3 {
		t.Errorf("a script that stores nothing:\n%v", rep)
	}

	rep, err = Differential(ctx, c, script("redis.call('SET', KEY, 1)\nreturn reply(true, rate, 0, 0, {})\n"), prefix+"leaves", lim, times)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Differences != 0 || rep.TTLDifferences != 3 || !strings.Contains(rep.String(), "the key has no expiry; it should not exist") {
		t.Errorf("a script that says it stores nothing but leaves its key:\n%v", rep)
	}

	if _, err := Differential(ctx, c, script("return reply(true, rate, 0, 0, {})\n"), prefix+"leaves", lim, times); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Errorf("a key that exists: %v", err)
	}
	if _, err := Differential(ctx, c, script("error('mine broke')\n"), prefix+"error", lim, times); err == nil ||
		!strings.Contains(err.Error(), "mine broke") || !strings.Contains(err.Error(), "allow-all") {
		t.Errorf("a Lua error: %v", err)
	}
	if _, err := Differential(ctx, c, script("return {1, 2}\n"), prefix+"shape", lim, times); err == nil ||
		!strings.Contains(err.Error(), "bad reply") {
		t.Errorf("a reply of the wrong shape: %v", err)
	}
}
