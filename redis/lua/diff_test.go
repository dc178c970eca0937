package lua

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/traffic"
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

// TestLuaDifferentialRejectsBadInput: what Differential can refuse without
// Redis, it refuses without sending anything; a Redis it cannot reach is an
// error, and the report it returns then is not OK.
func TestLuaDifferentialRejectsBadInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second, DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	l, _ := New("gcra")
	lim := algos.MustLimit(1, algos.Second, 1)
	for _, bad := range []struct {
		name  string
		l     *Script
		key   string
		lim   algos.Limit
		times []int64
		opt   DiffOptions
		want  string
	}{
		{"nil limiter", nil, "k", lim, []int64{1}, DiffOptions{}, "nil Script"},
		{"empty key", l, "", lim, []int64{1}, DiffOptions{}, "empty key"},
		{"bad limit", l, "k", algos.Limit{}, []int64{1}, DiffOptions{}, "limit"},
		{"negative time", l, "k", lim, []int64{1, -1}, DiffOptions{}, "call 1 at -1"},
		{"past MaxTime", l, "k", lim, []int64{algos.MaxTime + 1}, DiffOptions{}, "MaxTime"},
		{"negative MaxTTL", l, "k", lim, []int64{1}, DiffOptions{MaxTTL: -time.Second}, "MaxTTL -1s is negative"},
	} {
		if _, err := DifferentialWith(ctx, c, bad.l, bad.key, bad.lim, bad.times, bad.opt); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error saying %q", bad.name, err, bad.want)
		}
	}
	if rep, err := Differential(ctx, c, l, "k", lim, []int64{1}); err == nil || rep.OK() {
		t.Errorf("Differential against a closed port: %v, and the report is OK: %v", err, rep.OK())
	}
}

// TestLuaDiffReportOKCannotBeFooled: OK is true only for a report in which
// every planned call ran, was compared and had its expiry read, with no
// error, difference or expiry out of bound; anything else is not OK, and
// the report says why.
func TestLuaDiffReportOKCannotBeFooled(t *testing.T) {
	lim := algos.MustLimit(1, algos.Second, 1)
	onStore := func() *DiffReport {
		return &DiffReport{Algorithm: "mine", Clock: limiter.StoreClock, Key: "k" + StoreClockKeySuffix, Limit: lim, Planned: 10, Calls: 10, Admitted: 3, TTLChecks: 10}
	}
	clean := DiffReport{Algorithm: "mine", Key: "k", Limit: lim, Planned: 10, Calls: 10, Admitted: 4, TTLChecks: 10, OnStoreClock: onStore()}
	if !clean.OK() || !clean.OnStoreClock.OK() {
		t.Fatalf("a complete, clean report is not OK: %v", clean)
	}
	for _, c := range []struct {
		name string
		r    func(r *DiffReport)
		want string
	}{
		{"the zero report", func(r *DiffReport) { *r = DiffReport{} }, "nothing was compared"},
		{"no calls", func(r *DiffReport) { r.Planned, r.Calls, r.TTLChecks = 0, 0, 0 }, "nothing was compared"},
		{"a comparison that stopped", func(r *DiffReport) { r.Calls, r.TTLChecks = 5, 5 }, "the comparison stopped after 5 of 10 calls"},
		{"an error", func(r *DiffReport) {
			r.Errors = 1
			r.FirstErrors = []CallError{{Call: 2, Told: 7, What: "the script's reply could not be read", Err: "bad reply: want an array"}}
		}, "call 2 at 7 µs: the script's reply could not be read: bad reply: want an array"},
		{"an error not kept in words", func(r *DiffReport) { r.Errors = 1 }, "(1 more errors not shown)"},
		{"a difference", func(r *DiffReport) { r.Differences = 1 }, "1 differences"},
		{"an expiry out of bound", func(r *DiffReport) { r.TTLDifferences = 1 }, "9 of 10 TTLs within bound"},
		{"an expiry not read", func(r *DiffReport) { r.TTLChecks = 9 }, "the expiry was read after 9 of 10 calls"},
		// The told path alone passing is not a pass: the store-clock path
		// must have run, and passed.
		{"no store-clock path", func(r *DiffReport) { r.OnStoreClock = nil }, "the store-clock path (the script reading TIME) did not run"},
		{"a store-clock path that is not one", func(r *DiffReport) { r.OnStoreClock.Clock = limiter.CallerClock }, ""},
		{"a difference on the store-clock path", func(r *DiffReport) {
			r.OnStoreClock.Differences = 1
			r.OnStoreClock.First = []Difference{{Call: 0, Told: 1_700_000_000_123_456, Clock: limiter.StoreClock}}
		}, "on the store-clock path, reading TIME on \"k:store-clock\": 10 calls (3 admitted), 1 differences, 0 errors, 10 of 10 TTLs within bound\n" +
			"call 0 at 1700000000123456 µs (its TIME) differs in"},
		{"a store-clock path that stopped", func(r *DiffReport) { r.OnStoreClock.Calls, r.OnStoreClock.TTLChecks = 5, 5 }, "the comparison stopped after 5 of 10 calls"},
		{"an error on the store-clock path", func(r *DiffReport) {
			r.OnStoreClock.Errors = 1
			r.OnStoreClock.FirstErrors = []CallError{{Call: 2, Told: 9, Clock: limiter.StoreClock, What: "the script failed", Err: "boom"}}
		}, "call 2 at 9 µs (its TIME): the script failed: boom"},
	} {
		r := clean
		r.OnStoreClock = onStore()
		c.r(&r)
		if r.OK() || !strings.Contains(r.String(), c.want) {
			t.Errorf("%s: OK %v, want false, and the report to say %q:\n%v", c.name, r.OK(), c.want, r)
		}
	}
	// Each path's own verdict stands apart, so that a test can say which
	// path caught a script.
	r := clean
	r.OnStoreClock = onStore()
	r.OnStoreClock.Differences = 1
	if !r.PathOK() || r.OnStoreClock.PathOK() || r.OK() {
		t.Errorf("told path clean, store-clock path with a difference: PathOK %v and %v, OK %v; want true, false, false", r.PathOK(), r.OnStoreClock.PathOK(), r.OK())
	}
}

// TestLuaDifferenceInWords: a report says what differs, both decisions and
// both states; what expiry the key had and what it needed; and which call
// failed and why.
func TestLuaDifferenceInWords(t *testing.T) {
	d := Difference{
		Call: 3, Told: 1_000_000,
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
	admitted := algos.Decision{Allowed: true, Remaining: 2, Reset: 708417}
	for _, c := range []struct {
		d    TTLDifference
		want string
	}{
		{TTLDifference{Call: 9, Told: 1000, Decision: admitted, Idle: 708417 * time.Microsecond, Max: time.Hour, Got: 500 * time.Millisecond},
			"TTL after call 9 at 1000 µs (go twin: admitted, remaining 2, retry-after 0 µs, reset 708417 µs): the key expires 500ms after the call; " +
				"too early: the twin's state is not idle until 708.417ms after the call, and a call after the expiry would start from a fresh state; want at least 708.417ms and at most 1h0m0s"},
		{TTLDifference{Call: 9, Idle: time.Second, Max: time.Hour, Got: KeyMissing},
			"the key does not exist; too early: the twin's state is not idle until 1s after the call"},
		{TTLDifference{Call: 9, Idle: time.Second, Max: time.Hour, Got: NoExpiry},
			"the key has no expiry; too late: want at most 1h0m0s (the larger of the bound and the time to idle plus 1s) and at least 1s"},
		{TTLDifference{Call: 9, Idle: time.Second, Max: time.Hour, Got: 2 * time.Hour, GotLatest: 2*time.Hour - time.Millisecond},
			"the key expires 2h0m0s after the call (1h59m59.999s after the TIME read just after it); too late: want at most 1h0m0s"},
		// A key set to live the bound, whose script Redis paused between
		// its TIME and its SET: longer after the TIME, not after the call.
		{TTLDifference{Call: 9, Idle: time.Second, Max: time.Hour, Got: time.Hour + 700*time.Millisecond, GotLatest: time.Hour - time.Millisecond},
			"the key expires 1h0m0.7s after the call; within bound: at least 1s and at most 1h0m0s"},
		{TTLDifference{Call: 9, Absent: true, Got: 700 * time.Millisecond},
			"the key expires 700ms after the call; it should not exist, as the twin stores nothing"},
		{TTLDifference{Call: 9, Never: true, Max: time.Hour, Got: time.Minute},
			"the twin's state does not become idle before algos.MaxTime, so no expiry is safe"},
	} {
		if got := c.d.String(); !strings.Contains(got, c.want) {
			t.Errorf("TTLDifference.String = %q, want it to contain %q", got, c.want)
		}
	}
	if got := (CallError{Call: -1, What: "the script does not load", Err: "ERR Error compiling script"}).String(); got != "the script does not load: ERR Error compiling script" {
		t.Errorf("CallError of the whole script: %q", got)
	}
	r := DiffReport{Algorithm: "mine", Key: "k", Limit: algos.MustLimit(1, algos.Second, 1), Planned: 10, Calls: 10, Admitted: 4,
		Differences: 7, First: []Difference{d}, TTLChecks: 10,
		OnStoreClock: &DiffReport{Clock: limiter.StoreClock, Key: "k:store-clock", Planned: 10, Calls: 10, Admitted: 2, TTLChecks: 10}}
	if r.OK() || !strings.HasPrefix(r.String(), `mine on "k", 1 per 1s (burst 1): 10 calls (4 admitted), 7 differences, 0 errors, 10 of 10 TTLs within bound; `+
		`reading TIME: 10 calls (2 admitted), 0 differences, 0 errors, 10 of 10 TTLs within bound`) ||
		!strings.HasSuffix(r.String(), "(6 more differences not shown)") {
		t.Errorf("DiffReport.String:\n%s", r)
	}
	// On the store-clock path a call's time is the TIME the script read,
	// and the words say so.
	d.Clock = limiter.StoreClock
	if got := d.String(); !strings.HasPrefix(got, "call 3 at 1000000 µs (its TIME) differs in allowed") {
		t.Errorf("a difference on the store-clock path reads %q", got)
	}
	if got := (TTLDifference{Call: 9, Told: 5, Clock: limiter.StoreClock, Idle: time.Second, Max: time.Hour, Got: KeyMissing}).String(); !strings.HasPrefix(got, "TTL after call 9 at 5 µs (its TIME; go twin:") {
		t.Errorf("a TTL difference on the store-clock path reads %q", got)
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

// plant returns algo's embedded script with correct (which it must hold
// once) replaced by wrong, run through FromSource with algo as its twin.
func plant(t *testing.T, algo algos.Algorithm, correct, wrong string) *Script {
	t.Helper()
	body, err := sources.ReadFile(algo.Name + ".lua")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(body), correct); n != 1 {
		t.Fatalf("%s.lua holds %q %d times, want once", algo.Name, correct, n)
	}
	l, err := FromSource(algo, strings.Replace(string(body), correct, wrong, 1))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// setPX is a store3 replaced by a SET of the same value with the expiry px
// (a Lua expression, in ms).
func setPX(a, b, c, px string) string {
	return fmt.Sprintf("redis.call('SET', KEY, fmt(%s) .. ':' .. fmt(%s) .. ':' .. fmt(%s), 'PX', fmt(%s))", a, b, c, px)
}

// TestLuaDifferentialVerdicts holds Differential to what it claims, on a
// real Redis, with scripts planted to be wrong in one way each.
func TestLuaDifferentialVerdicts(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	var keys atomic.Int64
	run := func(t *testing.T, l *Script, lim algos.Limit, times []int64, opt DiffOptions) DiffReport {
		t.Helper()
		rep, err := DifferentialWith(ctx, c, l, fmt.Sprintf("%s%s:%d", prefix, l.Name(), keys.Add(1)), lim, times, opt)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	calls := func(t *testing.T, lim algos.Limit, n int) []int64 {
		t.Helper()
		times, err := traffic.DifferentialCalls(11, lim, 1_700_000_000_000_000, n)
		if err != nil {
			t.Fatal(err)
		}
		return times
	}
	perSecond := func(rate int64) algos.Limit { return algos.MustLimit(rate, algos.Second, rate) }

	t.Run("a key whose expiry comes before its state is idle is caught at 3/s and at 100/s", func(t *testing.T) {
		t.Parallel() // Redis runs one pipeline while the twin checks another
		fw, tb := algos.FixedWindow, algos.TokenBucket
		for _, lim := range []algos.Limit{perSecond(3), perSecond(100)} {
			times := calls(t, lim, 1000)
			for _, c := range []struct {
				what   string
				script *Script
				twin   algos.Algorithm
				half   time.Duration
			}{
				{"a fixed window expiring after half the window", plant(t, fw, "store3(w_idx, count, c, reset)",
					setPX("w_idx", "count", "c", "ceildiv(window, 2000)")), fw, 500 * time.Millisecond},
				{"a token bucket expiring after half the time to refill", plant(t, tb, "store3(tokens, last, c, reset)",
					setPX("tokens", "last", "c", "ceildiv(burst * window, rate * 2000)")), tb, 500 * time.Millisecond},
			} {
				good, _ := New(c.twin.Name)
				if rep := run(t, good, lim, times, DiffOptions{}); !rep.OK() {
					t.Fatalf("the unplanted %s:\n%v", c.twin.Name, rep)
				}
				rep := run(t, c.script, lim, times, DiffOptions{})
				if rep.OK() || rep.Differences != 0 || rep.Errors != 0 || rep.TTLDifferences == 0 || len(rep.FirstTTL) == 0 {
					t.Fatalf("%s, %v: want every decision alike and the expiry caught:\n%v", c.what, lim, rep)
				}
				for _, d := range rep.FirstTTL {
					if !d.Early() || d.GotLatest > c.half+TTLSlack || d.Idle <= d.Got || !strings.Contains(d.String(), "too early") {
						t.Errorf("%s, %v: not an early expiry of about %v:\n%v", c.what, lim, c.half, d)
					}
				}
				// Reading TIME, the decisions are alike too; the calls come
				// a few µs apart, so the bucket they drain takes about a
				// second to refill and its early expiry shows on every run,
				// while the window's shows only when Redis's clock is in
				// the first half of its second.
				if st := rep.OnStoreClock; st == nil || st.Calls != len(times) || st.Differences != 0 || st.Errors != 0 ||
					c.twin.Name == tb.Name && (st.TTLDifferences == 0 || !st.FirstTTL[0].Early()) {
					t.Fatalf("%s, %v, reading TIME: want every decision alike (and the bucket's early expiry caught):\n%v", c.what, lim, rep)
				}
				t.Logf("%s, %v: %s\n%v", c.what, lim, rep.Summary(), rep.FirstTTL[0])
			}
		}
	})

	t.Run("a key the store expires between two calls is followed, by the store's clock, not counted as a difference", func(t *testing.T) {
		t.Parallel()
		// The key is set to live 1 ms, and the script then spins until the
		// store's clock has run 2 ms: PEXPIRETIME after each call finds
		// the key gone, as does the next call, whatever the machine does.
		fw := algos.FixedWindow
		spin := "\nlocal t0 = redis.call('TIME')\n" +
			"repeat local t1 = redis.call('TIME') until (t1[1] - t0[1]) * 1000000 + (t1[2] - t0[2]) >= 2000\n"
		gone := plant(t, fw, "store3(w_idx, count, c, reset)", setPX("w_idx", "count", "c", "1")+spin)
		lim := perSecond(3)
		times := calls(t, lim, 60)
		rep := run(t, gone, lim, times, DiffOptions{})
		if rep.OK() || rep.Differences != 0 || rep.Errors != 0 || rep.Expired == 0 || rep.TTLDifferences == 0 ||
			!strings.Contains(rep.String(), "the key does not exist; too early") || !strings.Contains(rep.Summary(), "found the key expired by the store's clock") {
			t.Errorf("a key that lives 1 ms: want every decision alike (the key followed where the store expired it), the early expiry caught, and not OK:\n%v", rep)
		}
		if st := rep.OnStoreClock; st == nil || st.Differences != 0 || st.Errors != 0 || st.Expired == 0 || st.TTLDifferences == 0 {
			t.Errorf("a key that lives 1 ms, reading TIME: want the same:\n%v", rep)
		}
		t.Logf("a key that lives 1 ms: %s", rep.Summary())
	})

	t.Run("a key that lives longer than its state needs, up to the bound, passes", func(t *testing.T) {
		t.Parallel() // Redis runs one pipeline while the twin checks another
		fw, tb := algos.FixedWindow, algos.TokenBucket
		for _, lim := range []algos.Limit{perSecond(3), perSecond(100)} {
			times := calls(t, lim, 1000)
			for what, script := range map[string]*Script{
				"a token bucket expiring 10 s after reset, plus the margin": plant(t, tb, "store3(tokens, last, c, reset)", "store3(tokens, last, c, reset + 10000000)"),
				"a fixed window expiring after a constant hour":             plant(t, fw, "store3(w_idx, count, c, reset)", setPX("w_idx", "count", "c", "3600000")),
			} {
				if rep := run(t, script, lim, times, DiffOptions{}); !rep.OK() {
					t.Errorf("%s, %v:\n%v", what, lim, rep)
				}
			}
			twoHours := plant(t, fw, "store3(w_idx, count, c, reset)", setPX("w_idx", "count", "c", "7200000"))
			rep := run(t, twoHours, lim, times, DiffOptions{})
			if st := rep.OnStoreClock; rep.OK() || rep.TTLDifferences != rep.TTLChecks || !rep.FirstTTL[0].Late() || !strings.Contains(rep.String(), "too late: want at most 1h0m0s") ||
				st == nil || st.TTLDifferences != st.TTLChecks || st.TTLChecks != len(times) || !st.FirstTTL[0].Late() {
				t.Errorf("a fixed window expiring after two hours, %v, under the default bound of an hour:\n%v", lim, rep)
			}
			if rep := run(t, twoHours, lim, times, DiffOptions{MaxTTL: 2 * time.Hour}); !rep.OK() || rep.MaxTTL != 2*time.Hour {
				t.Errorf("a fixed window expiring after two hours, %v, with MaxTTL two hours:\n%v", lim, rep)
			}
		}
	})

	t.Run("a script wrong only near the limit is caught by the default calls at 3, 100 and 10,000 per window", func(t *testing.T) {
		t.Parallel() // Redis runs one pipeline while the twin checks another
		fw, sc := algos.FixedWindow, algos.SlidingCounter
		lessOrEqual := plant(t, fw, "if count < rate then", "if count <= rate then")
		// The previous window's share rounded to whole requests, in floats.
		rounded := plant(t, sc, "if weighted + cur * w < rate * w then", "if math.floor(weighted / w + 0.5) + cur < rate then")
		for _, lim := range []algos.Limit{perSecond(3), perSecond(100), perSecond(10_000)} {
			for _, l := range []*Script{lessOrEqual, rounded} {
				t.Run(fmt.Sprintf("%s-%d", l.Name(), lim.Rate), func(t *testing.T) {
					t.Parallel()
					nearTheLimit(t, run, calls, l, lim)
				})
			}
		}
	})

	t.Run("a reply that cannot be read, a script error or a script that does not load is in the report, and not OK", func(t *testing.T) {
		t.Parallel() // Redis runs one pipeline while the twin checks another
		lim := perSecond(3)
		times := calls(t, lim, 50)
		for _, c := range []struct {
			body, want string
		}{
			{"return {1, 2}\n", "the script's reply could not be read: bad reply: want at least 6 integers (allowed, remaining, retry-after, reset, Redis TIME, seq), got 2: [1 2]"},
			{"return {1, rate, 0, 0, 'x', 0}\n", "the script's reply could not be read: bad reply: element 4 is string x, not an integer"},
			{"return {1, rate, 0, 0, 0, 0}\n", "the script's reply could not be read: its Redis TIME 0 µs is not when it ran"},
			{"return nil\n", "the script's reply could not be read: it replied nil"},
			{"error('mine broke')\n", "the script failed: "},
		} {
			l, err := FromSource(allowAll, c.body)
			if err != nil {
				t.Fatal(err)
			}
			rep := run(t, l, lim, times, DiffOptions{})
			st := rep.OnStoreClock
			if rep.OK() || rep.Errors != len(times) || rep.Calls != len(times) || rep.TTLChecks != 0 ||
				!strings.Contains(rep.String(), c.want) || !strings.Contains(rep.String(), fmt.Sprintf("%d errors", len(times))) ||
				st == nil || st.Errors != len(times) || st.Calls != len(times) || st.TTLChecks != 0 || !strings.Contains(st.FirstErrors[0].String(), c.want) {
				t.Errorf("%q: want every call an error saying %q, on both paths:\n%v", c.body, c.want, rep)
			} else {
				t.Logf("%q: %s\n%v", c.body, rep.Summary(), rep.FirstErrors[0])
			}
		}
		l, _ := FromSource(allowAll, "error('mine broke')\n")
		if rep := run(t, l, lim, times, DiffOptions{}); !strings.Contains(rep.String(), "mine broke") {
			t.Errorf("a Lua error's message is not in the report:\n%v", rep)
		}
		l, _ = FromSource(allowAll, "return (\n")
		rep := run(t, l, lim, times, DiffOptions{})
		if rep.OK() || rep.Calls != 0 || rep.Errors != 1 || !strings.Contains(rep.String(), "the script does not load: ") ||
			rep.OnStoreClock != nil || !strings.Contains(rep.String(), "the store-clock path (the script reading TIME) did not run") {
			t.Errorf("a script that does not compile:\n%v", rep)
		}
		t.Logf("a script that does not compile:\n%v", rep)
	})

	t.Run("a twin that stores nothing passes only with the key absent", func(t *testing.T) {
		t.Parallel() // Redis runs one pipeline while the twin checks another
		lim := perSecond(3)
		times := calls(t, lim, 450)
		script := func(body string) *Script {
			t.Helper()
			l, err := FromSource(allowAll, body)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		rep := run(t, script("return reply(true, rate, 0, 0, {})\n"), lim, times, DiffOptions{})
		if !rep.OK() || rep.Calls != 450 || rep.Admitted != 450 || rep.TTLChecks != 450 || rep.OnStoreClock.Admitted != 450 {
			t.Errorf("a script that stores nothing:\n%v", rep)
		}
		rep = run(t, script("redis.call('SET', KEY, 1)\nreturn reply(true, rate, 0, 0, {})\n"), lim, times, DiffOptions{})
		if rep.Differences != 0 || rep.TTLDifferences != 450 || !strings.Contains(rep.String(), "the key has no expiry; it should not exist") ||
			rep.OnStoreClock.Differences != 0 || rep.OnStoreClock.TTLDifferences != 450 {
			t.Errorf("a script that says it stores nothing but leaves its key:\n%v", rep)
		}
	})

	t.Run("what stops the comparison is an error, and the report is not OK", func(t *testing.T) {
		t.Parallel() // Redis runs one pipeline while the twin checks another
		lim := perSecond(3)
		times := calls(t, lim, 50)
		l, _ := FromSource(allowAll, "return reply(true, rate, 0, 0, {})\n")
		key := prefix + "exists"
		if err := c.Set(ctx, key, 1, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if rep, err := Differential(ctx, c, l, key, lim, times); err == nil || !strings.Contains(err.Error(), "already exists") || rep.OK() {
			t.Errorf("a key that exists: %v", err)
		}
		calls := 0
		panicky := algos.Algorithm{Name: "panicky", Decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
			if calls++; calls > 10 {
				panic("mine broke")
			}
			return algos.Decision{Allowed: true, Remaining: l.Rate}
		}}
		l, _ = FromSource(panicky, "return reply(true, rate, 0, 0, {})\n")
		rep, err := Differential(ctx, c, l, prefix+"panicky", lim, times)
		if err == nil || !strings.Contains(err.Error(), "mine broke") || rep.OK() || rep.Calls != 10 ||
			!strings.Contains(rep.String(), "the comparison stopped") || rep.OnStoreClock != nil {
			t.Errorf("a twin that panics on call 10: %v\n%v", err, rep)
		}
	})
}

// nearTheLimit holds l, planted to be wrong only near the limit, to what
// Differential must find under lim: agreement far from the limit, and the
// first difference at it among the default calls.
func nearTheLimit(t *testing.T, run func(*testing.T, *Script, algos.Limit, []int64, DiffOptions) DiffReport,
	calls func(*testing.T, algos.Limit, int) []int64, l *Script, lim algos.Limit) {
	// Calls at a fifth of the rate over three windows never come near the
	// limit, and there the two agree with their twins.
	gap := 5 * lim.Window / lim.Rate
	var far []int64
	for i := range 3 * lim.Rate / 5 {
		far = append(far, 1_700_000_000_000_000+gap/2+i*gap)
	}
	times := calls(t, lim, traffic.MinDifferentialCalls(lim))
	if rep := run(t, l, lim, far, DiffOptions{}); !rep.OK() {
		t.Fatalf("%s planted, %v, far from the limit: want agreement:\n%v", l.Name(), lim, rep)
	}
	// Caught by the default calls is caught by a prefix of them: the run
	// stops at the pipeline of the first difference (StopAfter), which is
	// all this claim reads, instead of running the 55,035 calls at 10,000
	// per window.
	rep := run(t, l, lim, times, DiffOptions{StopAfter: 1})
	if rep.OK() || rep.Differences == 0 || len(rep.First) == 0 {
		t.Fatalf("%s planted, %v: not caught:\n%v", l.Name(), lim, rep)
	}
	if !rep.Stopped && rep.Calls < rep.Planned {
		t.Errorf("%s planted, %v: %d of %d calls ran, and the report does not say it stopped:\n%v", l.Name(), lim, rep.Calls, rep.Planned, rep)
	}
	if rep.Stopped && rep.OnStoreClock != nil {
		t.Errorf("%s planted, %v: the told path stopped, and the store-clock path ran after it", l.Name(), lim)
	}
	// The first difference is at the limit: the twin's estimate, before the
	// call, within one request of it.
	f := rep.First[0]
	if est := estimate(l.Name(), f.Before, f.Told, lim); est < (lim.Rate-1)*lim.Window || est > lim.Rate*lim.Window || f.Go.Allowed == f.Lua.Allowed {
		t.Errorf("%s planted, %v: the first difference is not a decision at the limit (estimate %d/%d):\n%v", l.Name(), lim, est, lim.Window, f)
	}
	t.Logf("%s planted, %v: %s\n%v", l.Name(), lim, rep.Summary(), f)
}

// estimate is what the twin (a fixed window or a sliding counter) counts
// against the limit at now, times the window, from the state stored before
// the call: the count, or prev·(W−elapsed) + cur·W.
func estimate(name string, before []int64, now int64, lim algos.Limit) int64 {
	if len(before) != 3 {
		return 0
	}
	w := lim.Window
	idx, cur, prev := now/w, before[1], before[2]
	switch {
	case before[0] == idx-1:
		cur, prev = 0, cur
	case before[0] != idx:
		cur, prev = 0, 0
	}
	if name == algos.FixedWindow.Name {
		return cur * w
	}
	return prev*(w-(now-idx*w)) + cur*w
}
