package traffic_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/traffic"
)

// differentialLimits span the limits the calls promise to drive into
// denial: from 1 to 10,000 per window, bursts below, at and above the rate,
// windows from 1 ms to a minute.
var differentialLimits = []algos.Limit{
	algos.MustLimit(1, algos.Second, 1),
	algos.MustLimit(3, algos.Second, 3),
	algos.MustLimit(3, 1000, 1),
	algos.MustLimit(7, 3*algos.Second, 5),
	algos.MustLimit(13, 60*algos.Second, 20),
	algos.MustLimit(50, algos.Second, 1),
	algos.MustLimit(100, algos.Second, 100),
	algos.MustLimit(250, 7*algos.Second, 40),
	algos.MustLimit(10_000, algos.Second, 10_000),
}

// TestDifferentialCallsDriveEveryLimitIntoDenial: within
// MinDifferentialCalls calls, at every limit from 1 to 10,000 per window,
// every algorithm denies in its first burst, and again after it has admitted
// again (the burst after an idle), so that a script wrong only when a count
// reaches the limit is wrong there at 100 per second as at 3.
func TestDifferentialCallsDriveEveryLimitIntoDenial(t *testing.T) {
	for _, lim := range differentialLimits {
		n := traffic.MinDifferentialCalls(lim)
		times, err := traffic.DifferentialCalls(7, lim, 1_700_000_000_000_000, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(times) != n {
			t.Fatalf("%v: %d calls, want %d", lim, len(times), n)
		}
		burst := int(max(lim.Rate, lim.Burst)) + 5
		for _, a := range algos.All() {
			var s algos.State
			runs, first, denied := 0, -1, false
			for i, now := range times {
				d := a.Decide(&s, now, lim)
				if !d.Allowed && !denied {
					runs++
					if first < 0 {
						first = i
					}
				}
				denied = !d.Allowed
			}
			if first < 0 || first >= burst || runs < 2 {
				t.Errorf("%v, %s: first denial at call %d (want one within the first burst of at most %d), %d runs of denials (want at least 2)",
					lim, a.Name, first, burst, runs)
			}
		}
	}
}

// TestDifferentialCalls: the same arguments give the same times, and the
// times hold every kind of call the generator promises: the last and first
// µs of an aligned window back to back, waits of just over (and just under)
// one window, two windows and the time to refill, calls told behind the
// latest (2% at least, by 60 ms at most, never below 0), calls in the same
// µs, and calls exactly one window after a recent one.
func TestDifferentialCalls(t *testing.T) {
	const start = 1_700_000_000_000_000
	for _, lim := range differentialLimits {
		if lim.Rate > 1000 {
			continue // the episodes are the same, only longer
		}
		n := 20 * traffic.MinDifferentialCalls(lim)
		a, err := traffic.DifferentialCalls(1, lim, start, n)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := traffic.DifferentialCalls(1, lim, start, n)
		c, _ := traffic.DifferentialCalls(2, lim, start, n)
		if !slices.Equal(a, b) || slices.Equal(a, c) || len(a) != n {
			t.Fatal("DifferentialCalls is not a function of its seed")
		}
		w := lim.Window
		span := min(50, w/lim.Rate/2)
		refill := (lim.Capacity() + lim.Refill - 1) / lim.Refill
		var edge, same, behind, oneWindow int
		over := map[int64]int{}  // waits of just over h, by h
		under := map[int64]int{} // waits of just under h, by h
		latest := a[0]
		for i := 1; i < n; i++ {
			now := a[i]
			if a[i-1]%w == w-1 && now == a[i-1]+1 {
				edge++
			}
			if now == a[i-1] {
				same++
			}
			if now < latest {
				behind++
				if latest-now > 60_000 {
					t.Fatalf("%v: call %d is %d µs behind, more than 60 ms", lim, i, latest-now)
				}
			}
			if slices.Contains(a[max(0, i-16):i], now-w) {
				oneWindow++
			}
			for _, h := range []int64{w, 2 * w, refill} {
				if wait := now - latest; wait > h && wait <= h+1+span+lim.Window/lim.Rate {
					over[h]++
				} else if wait < h && wait >= h-1-span {
					under[h]++
				}
			}
			latest = max(latest, now)
		}
		t.Logf("%v, %d calls: %d edges at the last and first µs, %d in the same µs, %d behind, %d exactly one window after, waits just over %v and just under %v",
			lim, n, edge, same, behind, oneWindow, over, under)
		if behind < n/50 {
			t.Errorf("%v: %d of %d calls behind the latest, want at least %d", lim, behind, n, n/50)
		}
		for what, got := range map[string]int{
			"edges": edge, "same µs": same, "one window": oneWindow,
			"just over a window": over[w], "just over two windows": over[2*w], "just over the refill": over[refill],
			"just under a window": under[w], "just under the refill": under[refill],
		} {
			if got == 0 {
				t.Errorf("%v: no calls %s", lim, what)
			}
		}
	}
	near, _ := traffic.DifferentialCalls(3, algos.MustLimit(100, algos.Second, 100), 0, 1000)
	if slices.Min(near) < 0 {
		t.Error("calls from a start of 0 went below 0")
	}
	lim := algos.MustLimit(100, algos.Second, 100)
	for _, bad := range []struct {
		lim   algos.Limit
		start int64
		n     int
		want  string
	}{
		{algos.Limit{Rate: 1, Window: 1, Burst: 1}, 0, 10, "limit"},
		{lim, -1, 10, "start"},
		{lim, 0, -1, "-1 calls"},
		{lim, algos.MaxTime - algos.Second, 1000, "MaxTime"},
	} {
		if _, err := traffic.DifferentialCalls(1, bad.lim, bad.start, bad.n); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("DifferentialCalls(%+v, %d, %d) = %v, want an error saying %q", bad.lim, bad.start, bad.n, err, bad.want)
		}
	}
	// A limit of a million asks for bursts of a million calls; n bounds
	// what is built.
	if huge, err := traffic.DifferentialCalls(1, algos.MustLimit(1_000_000, 1000*algos.Second, 1), 0, 10); err != nil || len(huge) != 10 {
		t.Errorf("a huge limit: %d calls, %v", len(huge), err)
	}
}

// A call sequence on an exact token bucket: the same seed gives the same
// times; the times never run back; and with boundary, calls land exactly
// at a denial's RetryAfter and 1 µs before it, where an exact limiter's
// answer turns, while without it they land there only by chance.
func TestCallSequenceLandsOnTheInstantsAnAnswerTurns(t *testing.T) {
	if _, err := traffic.NewCallSequence(1, algos.Limit{}, true); err == nil {
		t.Error("a call sequence for the zero limit: no error")
	}
	l := algos.MustLimit(10, algos.Second, 20)
	play := func(seed uint64, boundary bool) (times []int64, atRetry, justBefore int) {
		q, err := traffic.NewCallSequence(seed, l, boundary)
		if err != nil {
			t.Fatal(err)
		}
		var st algos.State
		var prev algos.Decision
		for i := range 2000 {
			now := q.Next(prev, i == 0)
			if i > 0 && now < times[i-1] {
				t.Fatalf("seed %d call %d at %d µs, before the call before it (%d µs)", seed, i, now, times[i-1])
			}
			if i > 0 && !prev.Allowed && prev.RetryAfter > 0 {
				switch now - times[i-1] {
				case prev.RetryAfter:
					atRetry++
				case prev.RetryAfter - 1:
					justBefore++
				}
			}
			times = append(times, now)
			prev = algos.TokenBucket.Decide(&st, now, l)
		}
		return times, atRetry, justBefore
	}
	a, atRetry, justBefore := play(3, true)
	if b, _, _ := play(3, true); !slices.Equal(a, b) {
		t.Error("seed 3 gave two different sequences")
	}
	if c, _, _ := play(4, true); slices.Equal(a, c) {
		t.Error("seeds 3 and 4 gave the same sequence")
	}
	_, plainAt, plainBefore := play(3, false)
	t.Logf("after a denial, with boundary: %d calls at its RetryAfter, %d 1 µs before; without: %d and %d", atRetry, justBefore, plainAt, plainBefore)
	if atRetry < 10 || justBefore < 10 { // seed 3: 28 and 31
		t.Errorf("with boundary, %d calls came at a denial's RetryAfter and %d 1 µs before it, want at least 10 of each in 2000", atRetry, justBefore)
	}
	if plainAt+plainBefore >= (atRetry+justBefore)/4 {
		t.Errorf("without boundary, %d calls came at or just before a RetryAfter, against %d with it: boundary does not aim them", plainAt+plainBefore, atRetry+justBefore)
	}
}
