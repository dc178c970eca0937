package redisrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/adaptertest"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/simredis"
)

const (
	ms = 1000
	s  = algos.Second
)

// The steps the tables list, in package adaptertest's shape (the other
// adapter's tests share it), by short names.
type step = adaptertest.Expected

var admit, deny, burst = adaptertest.Admit, adaptertest.Deny, adaptertest.Burst

// open is a limiter of Spec, closed when the test ends.
func open(t testing.TB, l algos.Limit) *sim {
	t.Helper()
	lim, err := Spec().Open(l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := limiter.Close(lim); err != nil {
			t.Error(err)
		}
	})
	return lim.(*sim)
}

// The numbers are GCRA's, worked out by hand (T the emission interval,
// tau = (B-1)·T): a request at now is admitted when now ≥ TAT - tau, and
// TAT becomes max(TAT, now) + T; RetryAfter is TAT - tau - now, Reset
// TAT - now, Remaining ⌊(now - (TAT - B·T))/T⌋ after an admit. Each case
// runs on the library and on algos.GCRA. Where the library's float64
// seconds make it differ, the case says so and asserts what it does.
func TestDecisionsByHand(t *testing.T) {
	cases := []struct {
		name  string
		limit algos.Limit
		lib   []step
		// gcra, when set, is what algos.GCRA decides where it differs
		// from the library; otherwise both must give lib.
		gcra []step
	}{
		{
			// 10 a second, burst 20: T = 100 ms, tau = 1.9 s. At this epoch
			// the script's float64 TAT drifts by about -6 ns an admit (0.1 s
			// is 3 355 443.2 steps of 2^-25 s, rounded down), far below the
			// µs the adapter rounds up to: every number is GCRA's exactly.
			name:  "10/s burst 20",
			limit: algos.MustLimit(10, s, 20),
			lib: slices.Concat(
				burst(0, 20, 100*ms), // TAT 0 → 2 s
				[]step{
					// TAT 2 s: allowed from 2 - 1.9 = 0.1 s; full at 2 s.
					{0, deny(100*ms, 2*s)},
					{99_999, deny(1, 1_900_001)},
					// At 0.1 s: TAT 2.1 s, full 2 s later.
					{100 * ms, admit(0, 2*s)},
					{150 * ms, deny(50*ms, 1950*ms)},
					// At 0.65 s: TAT max(2.1, 0.65) + 0.1 = 2.2 s; Reset
					// 1.55 s; Remaining ⌊(0.65 - (2.2 - 2))/0.1⌋ = 4.
					{650 * ms, admit(4, 1550*ms)},
				},
				// Idle past TAT (2.2 s): a full burst of 20 again.
				burst(2200*ms, 20, 100*ms),
				[]step{{2200 * ms, deny(100*ms, 2*s)}},
			),
		},
		{
			// 7 per 3 s, burst 5: T = 3/7 s = 428 571.43 µs, which the
			// script holds as a float64 that, added to a TAT near 2.5·10⁸ s,
			// rounds up by about 4.3 ns each time (14 380 470.86 steps of
			// 2^-25 s). After 4 admits at one instant the 5th is denied:
			// its allow_at, TAT + T - 5·T, is 4 additions of rounding later
			// than now, a few ns, which the adapter rounds up to a RetryAfter
			// of 1 µs. The library's burst at one instant is 4, not 5, and
			// its Remaining (a float just under the integer, truncated) is
			// one short from the first admit; a retry 1 µs later gets the
			// 5th. algos.GCRA admits 5.
			name:  "7 per 3s burst 5",
			limit: algos.MustLimit(7, 3*s, 5),
			lib: []step{
				// Reset ⌈i·428 571.43⌉: 428 572, 857 143, 1 285 715, 1 714 286.
				{0, admit(3, 428_572)},
				{0, admit(2, 857_143)},
				{0, admit(1, 1_285_715)},
				{0, admit(0, 1_714_286)},
				{0, deny(1, 1_714_286)},
				{1, admit(0, 2_142_857)}, // ⌈2 142 857.14 - 1⌉
				// TAT 5·T: allowed from 5T - 4T = T, 428 571.43 - 1 away.
				{1, deny(428_571, 2_142_857)},
			},
			gcra: []step{
				{0, admit(4, 428_572)},
				{0, admit(3, 857_143)},
				{0, admit(2, 1_285_715)},
				{0, admit(1, 1_714_286)},
				{0, admit(0, 2_142_858)},
				{0, deny(428_572, 2_142_858)},
				{1, deny(428_571, 2_142_857)},
			},
		},
		{
			// One per 2 µs, burst 2: T = 2 µs is 67.11 steps of 2^-25 s,
			// and the burst offset 4 µs 134.22. 1st: TAT + T rounds to 67
			// steps (1.997 µs, Reset 2), allow_at = TAT + 67 - 134.22
			// rounds to -67 steps, and Remaining is 67 steps / 2 µs =
			// 0.998, truncated to 0. 2nd: TAT 134 steps, allow_at 134 -
			// 134.22 rounds to now itself: diff 0, not below 0, so it is
			// admitted too, Remaining 0 (Reset 3.99 µs → 4). 3rd: allow_at
			// 201 - 134.22 → 67 steps after now: denied, 1.997 µs → 2.
			// The first Remaining said 0 and one more was admitted.
			name:  "1 per 2µs burst 2",
			limit: algos.MustLimit(1, 2, 2),
			lib:   []step{{0, admit(0, 2)}, {0, admit(0, 4)}, {0, deny(2, 4)}},
			gcra:  []step{{0, admit(1, 2)}, {0, admit(0, 4)}, {0, deny(2, 4)}},
		},
		{
			// One per second, burst 1: tau = 0, each admit pushes TAT 1 s on.
			// At 999 999 µs GCRA's wait is exactly 1 µs. The script's now,
			// 252 460 800.999999 s, is 33 554 398.44 steps of 2^-25 s past
			// the second and rounds down by 0.013 µs, so the library's wait
			// is 1.013 µs, 1013 ns, which the adapter rounds up to 2 µs: an
			// error of a hundredth of a µs in the store's time becomes a
			// whole µs, the same for Reset. (A retry at 2 µs is admitted;
			// the wait was not too short, only 1 µs too long.)
			name:  "1/s burst 1",
			limit: algos.MustLimit(1, s, 1),
			lib: []step{
				{0, admit(0, s)},
				{999_999, deny(2, 2)},
				{s, admit(0, s)},
				// Idle for 10 s: one admit, never ten.
				{11 * s, admit(0, s)},
				{11 * s, deny(s, s)},
			},
			gcra: []step{
				{0, admit(0, s)},
				{999_999, deny(1, 1)},
				{s, admit(0, s)},
				{11 * s, admit(0, s)},
				{11 * s, deny(s, s)},
			},
		},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lib := open(t, c.limit)
			for i, st := range c.lib {
				got, err := lib.Allow(ctx, 0, st.Now)
				if err != nil {
					t.Fatal(err)
				}
				if got != st.Want {
					t.Errorf("step %d at %d µs: redis_rate decided %+v, want %+v", i, st.Now, got, st.Want)
				}
			}
			gsteps := c.gcra
			if gsteps == nil {
				gsteps = c.lib
			}
			g, _ := limiter.FromAlgorithm(algos.GCRA).New(c.limit)
			for i, st := range gsteps {
				if got, _ := g.Allow(ctx, 0, st.Now); got != st.Want {
					t.Errorf("step %d at %d µs: algos.GCRA decided %+v, want %+v", i, st.Now, got, st.Want)
				}
			}
		})
	}
}

// Time passes only through now: the store's clock is set to it, and the
// machine's clock, which moves on between the calls, is never read.
func TestTimeIsOnlyNow(t *testing.T) {
	lim := open(t, algos.MustLimit(1, ms, 1)) // one a ms, burst 1
	ctx := context.Background()
	steps := []step{
		{0, admit(0, ms)},
		// 20 ms of the machine's time later, the same now: no refill.
		{0, deny(ms, ms)},
		// now 1 ms on: the next one is due.
		{ms, admit(0, ms)},
	}
	for i, st := range steps {
		if i == 1 {
			time.Sleep(20 * time.Millisecond)
		}
		got, err := lim.Allow(ctx, 0, st.Now)
		if err != nil || got != st.Want {
			t.Errorf("step %d at %d: %+v, %v; want %+v", i, st.Now, got, err, st.Want)
		}
	}
	if got, want := lim.Server.Clock(), EpochUnixMicro+ms; got != want {
		t.Errorf("store clock %d, want EpochUnixMicro + 1 ms = %d", got, want)
	}
	// A now before the last is a store clock going back, which simredis
	// refuses: an error, not a denial.
	if d, err := lim.Allow(ctx, 0, ms-1); !errors.Is(err, simredis.ErrClockBackwards) || d != (algos.Decision{}) {
		t.Errorf("a now going back: %+v, %v; want ErrClockBackwards", d, err)
	}
}

// Any failure is an error from Allow, never a denial.
func TestErrorsAreErrors(t *testing.T) {
	ctx := context.Background()
	l := algos.MustLimit(10, s, 20)

	// The server closed: SetClock fails with simredis.ErrClosed.
	lim := open(t, l)
	if _, err := lim.Allow(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	lim.Server.Close()
	if d, err := lim.Allow(ctx, 0, s); !errors.Is(err, simredis.ErrClosed) || d != (algos.Decision{}) {
		t.Errorf("closed server: %+v, %v; want simredis.ErrClosed", d, err)
	}

	// The client closed, the server up: the library's call fails (and so
	// does the limiter's Close, which closes the client again).
	made, err := Spec().New(l)
	if err != nil {
		t.Fatal(err)
	}
	lim = made.(*sim)
	t.Cleanup(lim.Server.Close)
	_ = lim.Client.Close()
	if d, err := lim.Allow(ctx, 0, 0); !errors.Is(err, redis.ErrClosed) || d != (algos.Decision{}) {
		t.Errorf("closed client: %+v, %v; want redis.ErrClosed", d, err)
	}
	if err := limiter.Close(lim); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("Close of a closed client: %v", err)
	}

	// No server at the address (connection refused), as for a store that
	// went away: the library's call fails. (Through Spec the clock would
	// fail first, as above; this is the library's own error path.) Port 1,
	// where nothing listens: a port freed by a closed server can be taken by
	// another package's Redis while the suite runs (seen with go test -p 4).
	lim = open(t, l)
	gone := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DisableIdentity: true})
	t.Cleanup(func() { _ = gone.Close() })
	if d, err := allow(ctx, redis_rate.NewLimiter(gone), "overshoot:0", lim.limit); err == nil || d != (algos.Decision{}) {
		t.Errorf("a refused connection: %+v, %v; want an error", d, err)
	}

	// An invalid limit or a negative key.
	if _, err := Spec().Open(algos.Limit{Rate: 1, Window: 1, Burst: 1}); err == nil {
		t.Error("Open took a limit not built by NewLimit")
	}
	if _, err := lim.Allow(ctx, -1, 0); err == nil {
		t.Error("a negative key was decided")
	}
}

// The key expires on the simulated clock with the TTL the script gives it,
// EX ⌈reset⌉ s: after 20 admits at 0, TAT is 2 s ahead, so EX 2 at clock
// epoch + 0. As Redis 7 keeps it, the expiry is then the ms epoch/1000 +
// 2000, and the key is there up to the µs 2 000 999 and gone from
// 2 001 000. Then the whole burst is admitted again.
func TestKeyExpiresOnTheClock(t *testing.T) {
	lim := open(t, algos.MustLimit(10, s, 20))
	ctx := context.Background()
	for range 20 {
		if d, err := lim.Allow(ctx, 0, 0); err != nil || !d.Allowed {
			t.Fatalf("%+v, %v", d, err)
		}
	}
	const stored = "rate:overshoot:0" // the library prefixes "rate:"
	if ttl, err := lim.Client.PTTL(ctx, stored).Result(); err != nil || ttl != 2*time.Second {
		t.Fatalf("PTTL %v, %v; want 2s", ttl, err)
	}
	for _, c := range []struct {
		now    int64
		exists int64
	}{{2*s - 1, 1}, {2 * s, 1}, {2_000_999, 1}, {2_001_000, 0}} {
		if err := lim.Server.SetClock(EpochUnixMicro + c.now); err != nil {
			t.Fatal(err)
		}
		if n, err := lim.Client.Exists(ctx, stored).Result(); err != nil || n != c.exists {
			t.Errorf("at %d µs: EXISTS %d, %v; want %d", c.now, n, err, c.exists)
		}
	}
	for i, st := range slices.Concat(burst(2_001_000, 20, 100*ms), []step{{2_001_000, deny(100*ms, 2*s)}}) {
		if got, err := lim.Allow(ctx, 0, st.Now); err != nil || got != st.Want {
			t.Errorf("burst after expiry, call %d: %+v, %v; want %+v", i, got, err, st.Want)
		}
	}
}

// Two limiters of two New calls share nothing: each has its own server.
func TestLimitersDoNotShare(t *testing.T) {
	l := algos.MustLimit(1, s, 1)
	a, b := open(t, l), open(t, l)
	if a.Server.Addr() == b.Server.Addr() {
		t.Fatalf("both on %s", a.Server.Addr())
	}
	ctx := context.Background()
	for i, c := range []struct {
		lim  *sim
		key  int
		want algos.Decision
	}{
		{a, 0, admit(0, s)},
		{a, 0, deny(s, s)},
		{b, 0, admit(0, s)}, // b's key 0 is untouched by a's
		{a, 1, admit(0, s)}, // and a's key 1 by its key 0
	} {
		if got, err := c.lim.Allow(ctx, c.key, 0); err != nil || got != c.want {
			t.Errorf("call %d: %+v, %v; want %+v", i, got, err, c.want)
		}
	}
}

// Before 2017 the script's time is negative and larger: at the Unix epoch
// (now = -EpochUnixMicro, the simulated store's earliest clock) it reads
// -1 483 228 800 s, where a float64 steps by 2^-22 s = 0.24 µs, and 0.1 s
// is 419 430.4 steps, rounded down: each admit moves TAT 0.095 µs short.
// After 20 admits at one instant TAT is 1.9 µs early: Reset 1 999 998.1
// rounds up to 1 999 999; the denial's RetryAfter is 99 998.0x, rounded up
// to 99 998 (GCRA: 100 000), and a request at 99 999 µs is admitted, 1 µs
// before GCRA allows it.
func TestBefore2017(t *testing.T) {
	lim := open(t, algos.MustLimit(10, s, 20))
	ctx := context.Background()
	at := -EpochUnixMicro
	var got []algos.Decision
	for range 21 {
		d, err := lim.Allow(ctx, 0, at)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if d := got[19]; d != admit(0, 1_999_999) {
		t.Errorf("20th admit: %+v", d)
	}
	if d := got[20]; d != deny(99_998, 1_999_999) {
		t.Errorf("21st: %+v", d)
	}
	if d, err := lim.Allow(ctx, 0, at+99_999); err != nil || !d.Allowed {
		t.Errorf("at +99 999 µs: %+v, %v; want admitted (1 µs early)", d, err)
	}
	if _, err := lim.Allow(ctx, 0, -EpochUnixMicro-1); err == nil {
		t.Error("a clock before the Unix epoch was set")
	}
}

// OnClient runs the library on a store the caller owns (here a simredis
// server standing for a real Redis): now is ignored, each New has its own
// keys, and Close deletes them and leaves the client open.
func TestOnClient(t *testing.T) {
	srv, err := simredis.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.SetClock(EpochUnixMicro); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	sp := OnClient("redis_rate on a real Redis", rdb)
	if err := sp.Validate(); err != nil || sp.Clock != limiter.StoreClock || sp.ExactRetry {
		t.Fatalf("%+v, %v", sp, err)
	}
	if OnClient("", rdb).Name != Name {
		t.Error("an empty name is not Name")
	}
	l := algos.MustLimit(1, s, 1)
	a, err := sp.Open(l)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sp.Open(l)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range []struct {
		lim       limiter.Limiter
		key       int
		now       int64
		want      algos.Decision
		storeTime int64 // µs after the epoch
	}{
		{a, 0, 0, admit(0, s), 0},
		// now says 1 h later; the store says 0: denied.
		{a, 0, 3600 * s, deny(s, s), 0},
		{b, 0, 0, admit(0, s), 0}, // b's namespace is its own
		{a, 2, 0, admit(0, s), 0},
		// The store's clock moves 1 s; now says 0: admitted.
		{a, 0, 0, admit(0, s), s},
	} {
		if err := srv.SetClock(EpochUnixMicro + c.storeTime); err != nil {
			t.Fatal(err)
		}
		if got, err := c.lim.Allow(ctx, c.key, c.now); err != nil || got != c.want {
			t.Errorf("call %d: %+v, %v; want %+v", i, got, err, c.want)
		}
	}
	// Three keys: a's 0 and 2, b's 0, each "rate:" (the library's) +
	// "overshoot:<namespace>:<key>".
	keys, _ := rdb.Keys(ctx, "*").Result()
	if len(keys) != 3 {
		t.Errorf("keys %v, want 3", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "rate:overshoot:") {
			t.Errorf("key %q outside the namespace", k)
		}
	}
	if err := limiter.Close(a); err != nil {
		t.Fatal(err)
	}
	if err := limiter.Close(b); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("after Close: %d keys, %v; want 0", n, err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Errorf("the caller's client was closed: %v", err)
	}
	if _, err := OnClient("x", nil).Open(l); err == nil {
		t.Error("OnClient took a nil client")
	}
}

func TestSpec(t *testing.T) {
	sp := Spec()
	if err := sp.Validate(); err != nil {
		t.Fatal(err)
	}
	if sp.Name != "redis_rate" || sp.Clock != limiter.StoreClock || sp.ExactRetry {
		t.Errorf("Spec = %q, %v, ExactRetry %v", sp.Name, sp.Clock, sp.ExactRetry)
	}
	l := algos.MustLimit(10, s, 20)
	if got, want := sp.Promise(l).Text, algos.BucketPromise(l).Text; got != want {
		t.Errorf("Promise %q, want %q", got, want)
	}
	lim := open(t, l)
	if !strings.HasPrefix(lim.Server.Addr(), "127.0.0.1:") {
		t.Errorf("server on %s", lim.Server.Addr())
	}
	if got := fmt.Sprint(lim.limit); got != "10 req/s (burst 20)" {
		t.Errorf("library limit %s", got)
	}
}

// BenchmarkAllow is one Allow through simredis: SetClock, then the
// library's EVALSHA over the loopback to the in-process server.
func BenchmarkAllow(b *testing.B) {
	lim := open(b, algos.MustLimit(10, s, 20))
	ctx := context.Background()
	var now int64
	start := time.Now()
	for b.Loop() {
		now += 37 * ms
		if _, err := lim.Allow(ctx, 0, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/1e3/float64(b.N), "µs/op")
}

// BenchmarkNewClose is one New (a server, a client, a PING) and its Close.
func BenchmarkNewClose(b *testing.B) {
	l := algos.MustLimit(10, s, 20)
	start := time.Now()
	for b.Loop() {
		lim, err := Spec().New(l)
		if err != nil {
			b.Fatal(err)
		}
		if err := limiter.Close(lim); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/1e3/float64(b.N), "µs/op")
}

// Near and below the float's step the library breaks. Around 2.5·10⁸ s a
// float64 steps by 2^-25 s = 29.8 ns, and TAT + T is rounded to that step.
//
//   - 1001 per 2 µs: T = 1.998 ns, a fifteenth of a step, so TAT + T
//     rounds back to TAT; reset_after = new_tat - now is 0, and the script
//     SETs the key only when it is positive. Nothing is ever stored, and
//     every request is admitted: 100 of 100 at one instant, then 1000 of
//     1000 at one a µs. GCRA: the burst of 3, then 1000 (500.5 a µs is far
//     more than one a µs).
//   - 1 per µs, burst 3: T = 33.55 steps, and each TAT + T rounds up to 34
//     steps, 1.013 µs: at one instant 2 admits, not 3 (the third's
//     allow_at, 3 rounded-up steps less 3·T, is after now), and at one a
//     µs the key admits one per 1.013 µs: 988 of 1000 (GCRA: 3, then 1000).
func TestBreaksNearTheFloatStep(t *testing.T) {
	cases := []struct {
		limit               algos.Limit
		instant, perMicro   int // the library's admits
		gInstant, gPerMicro int // algos.GCRA's
		stored              bool
	}{
		{algos.MustLimit(1001, 2, 3), 100, 1000, 3, 1000, false},
		{algos.MustLimit(1, 1, 3), 2, 988, 3, 1000, true},
	}
	ctx := context.Background()
	for _, c := range cases {
		lim := open(t, c.limit)
		g, _ := limiter.FromAlgorithm(algos.GCRA).New(c.limit)
		count := func(lim limiter.Limiter, at func(i int64) int64, n int64) int {
			admits := 0
			for i := range n {
				d, err := lim.Allow(ctx, 0, at(i))
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admits++
				}
			}
			return admits
		}
		instant := func(int64) int64 { return 5 }
		perMicro := func(i int64) int64 { return 10 + i }
		got := [2]int{count(lim, instant, 100), count(lim, perMicro, 1000)}
		want := [2]int{count(g, instant, 100), count(g, perMicro, 1000)}
		if got != [2]int{c.instant, c.perMicro} || want != [2]int{c.gInstant, c.gPerMicro} {
			t.Errorf("%v: library %v, GCRA %v; want %v and %v", c.limit, got, want, [2]int{c.instant, c.perMicro}, [2]int{c.gInstant, c.gPerMicro})
		}
		n, err := lim.Client.Exists(ctx, "rate:overshoot:0").Result()
		if err != nil || (n == 1) != c.stored {
			t.Errorf("%v: key stored %d, %v; want %v", c.limit, n, err, c.stored)
		}
	}
}

// At 10 a second the float error runs the lenient way and adds up while
// the key stays busy. 0.1 s is 3 355 443.2 steps of 2^-25 s, so each
// TAT + 0.1 (TAT near 2.5·10⁸ s, where the step is 2^-25 s) rounds down
// by 0.2 steps, 5.96 ns, and TAT never falls back to now while requests
// keep it ahead. A burst of 20 at 0 and then one request exactly at each
// of GCRA's allow times, k·100 ms for k = 1…200, are 220 admits for both;
// the library's TAT is then 220·0.2 = 44 steps, 1.311 µs, early. So a
// request at 20.1 s - 1 µs, which GCRA denies (RetryAfter 1 µs), is
// admitted by the library: it admits up to a µs early after a few hundred
// admits in a row (an extra admit would take 16.7 million, 19 days at 10 a
// second, for the drift to reach a whole T).
func TestDriftAdmitsEarly(t *testing.T) {
	l := algos.MustLimit(10, s, 20)
	lim := open(t, l)
	g, _ := limiter.FromAlgorithm(algos.GCRA).New(l)
	ctx := context.Background()
	both := func(now int64) (algos.Decision, algos.Decision) {
		d, err := lim.Allow(ctx, 0, now)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := g.Allow(ctx, 0, now)
		return d, e
	}
	for i := range 220 {
		now := max(0, int64(i-19)) * 100 * ms
		if d, e := both(now); !d.Allowed || !e.Allowed {
			t.Fatalf("admit %d at %d µs: library %+v, GCRA %+v", i+1, now, d, e)
		}
	}
	v, err := lim.Client.Get(ctx, "rate:overshoot:0").Result()
	if err != nil {
		t.Fatal(err)
	}
	tat, _ := strconv.ParseFloat(v, 64)
	// GCRA's TAT: 220 admits of 0.1 s from 0, 22 s after the epoch.
	drift := (tat - scriptZero - 22) * 1e6
	if want := -44 * 1e6 / math.Exp2(25); math.Abs(drift-want) > 1e-6 {
		t.Errorf("TAT drift %.6f µs, want 44 steps early, %.6f µs", drift, want)
	}
	// GCRA: allowed from TAT - tau = 22 - 1.9 s, 1 µs away; full 1.9 s +
	// 1 µs away. The library admits; its TAT becomes 22.1 s - 1.311 µs,
	// 2 s - 0.311 µs from now: Reset 2 000 000.
	d, e := both(20_100*ms - 1)
	if d != admit(0, 2*s) || e != deny(1, 1_900_001) {
		t.Errorf("at 20.1 s - 1 µs: library %+v, GCRA %+v; want the library admitting, GCRA denying 1 µs early", d, e)
	}
}
