package redisrate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/adaptertest"
	"github.com/overshoot-go/overshoot/traffic"
)

// The script's time at now = 0: EpochUnixMicro less 2017-01-01, in s.
const scriptZero = float64(EpochUnixMicro/1_000_000 - 1_483_228_800) // 252 460 800

// half is half the step of a float64 between 2^27 and 2^28 s, where the
// script's times lie for years around the epoch: 2^-26 s, in µs. Each
// rounding the script does on a time costs at most this much.
var half = 1e6 / math.Exp2(26) // 0.0149 µs

// slack covers this test's own float64 arithmetic on µs (values below
// 10^10 µs, so errors below 10^-5 µs).
const slack = 1e-5

// limits are the adapters' shared limits.
var limits = adaptertest.Limits()

const calls = 400

// storedTAT reads the library's TAT for key, in µs of now, and whether the
// key is there. The script stores it with SET (a Lua number, written in
// the shortest form that reads back as the same float64).
func storedTAT(t *testing.T, lim *sim, key int) (float64, bool) {
	t.Helper()
	v, err := lim.Client.Get(context.Background(), fmt.Sprintf("rate:overshoot:%d", key)).Result()
	if err != nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatal(err)
	}
	// The subtraction is exact (Sterbenz); the product errs by 10^-9 µs.
	return (f - scriptZero) * 1e6, true
}

// gcraTAT is GCRA's TAT in µs: its whole µs and the remainder in 1/Refill µs.
func gcraTAT(st algos.State, l algos.Limit) float64 {
	g := st.GCRA()
	return float64(g.TAT) + float64(g.Frac)/float64(l.Refill)
}

// ceilWithin reports whether got is ⌈y⌉ for some y within eps of x.
func ceilWithin(got int64, x, eps float64) bool {
	return float64(got) >= math.Ceil(x-eps) && float64(got) <= math.Ceil(x+eps)
}

type tally struct {
	calls, admits, allowed, remaining, retry, reset int
	libOnly, gcraOnly                               int // admitted by one side only
	maxRemaining, maxRetry, maxReset                int64
	maxDrift                                        float64 // µs
	early, late                                     float64 // µs: the library's TAT before, after GCRA's
}

// The library against algos.GCRA on one node, over 400 seeded request
// times per limit, seed and mode. They cannot agree exactly: the script
// keeps TAT in float64 seconds since 2017, about 2.5·10⁸ at this epoch,
// whose step is 2^-25 s (0.03 µs). So the test holds every difference to
// what that rounding explains, with the library's actual TAT read from the
// store after every call:
//
//   - drift: |library TAT - GCRA's TAT| grows by at most 2 half-steps per
//     admit (the script's now, rounded once, then TAT + T, rounded once),
//     and no more; it is measured, not assumed.
//   - Allowed differs only where GCRA's margin, now - (TAT - tau), is
//     within the drift + 4 half-steps of 0. Then both go on with a fresh
//     key, since their states now differ by a whole request.
//   - RetryAfter and Reset are the adapter's ⌈·⌉ of a value within the drift
//   - 2 half-steps (+ the library's 1 ns truncation) of GCRA's exact
//     real value; Remaining is ⌊·⌋ of one within that much over T.
//
// The counts of each kind of difference are logged; each difference is
// asserted call by call to be within those bounds, and, at the end, to be
// of at most one request or one µs.
func TestAgainstGCRA(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var all tally
	for _, l := range limits {
		var per tally
		for seed := uint64(1); seed <= 3; seed++ {
			for _, boundary := range []bool{false, true} {
				compare(t, ctx, l, seed, boundary, &per)
			}
		}
		t.Logf("%v: %d calls, %d admits; Allowed differs on %d (library only %d, GCRA only %d); Remaining on %d (max %d), RetryAfter on %d (max %d µs), Reset on %d (max %d µs); the library's TAT up to %.3f µs before GCRA's, %.3f µs after",
			l, per.calls, per.admits, per.allowed, per.libOnly, per.gcraOnly, per.remaining, per.maxRemaining, per.retry, per.maxRetry, per.reset, per.maxReset, per.early, per.late)
		all.calls += per.calls
		all.allowed += per.allowed
		all.libOnly += per.libOnly
		all.gcraOnly += per.gcraOnly
		all.remaining += per.remaining
		all.retry += per.retry
		all.reset += per.reset
		all.maxRemaining = max(all.maxRemaining, per.maxRemaining)
		all.maxRetry = max(all.maxRetry, per.maxRetry)
		all.maxReset = max(all.maxReset, per.maxReset)
		all.maxDrift = max(all.maxDrift, per.maxDrift)
	}
	t.Logf("in all: %d calls; Allowed differs on %d (library only %d, GCRA only %d); Remaining on %d (max %d), RetryAfter on %d (max %d µs), Reset on %d (max %d µs); max TAT drift %.3f µs",
		all.calls, all.allowed, all.libOnly, all.gcraOnly, all.remaining, all.maxRemaining, all.retry, all.maxRetry, all.reset, all.maxReset, all.maxDrift)
	// Every difference is within float rounding (checked call by call
	// above); these are their sizes, which only that rounding can make:
	// never more than one request or one µs apart.
	if all.maxRemaining > 1 || all.maxRetry > 1 || all.maxReset > 1 {
		t.Errorf("a difference above 1: Remaining %d, RetryAfter %d, Reset %d", all.maxRemaining, all.maxRetry, all.maxReset)
	}
}

func compare(t *testing.T, ctx context.Context, l algos.Limit, seed uint64, boundary bool, tl *tally) {
	lim := open(t, l)
	q, err := traffic.NewCallSequence(seed, l, boundary)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Refill
	tauTicks := (l.Burst - 1) * l.Unit
	T := float64(l.Unit) / float64(r) // µs
	key := 0
	var st algos.State
	var prev algos.Decision
	for i := range calls {
		now := q.Next(prev, i == 0)
		where := fmt.Sprintf("%v seed %d boundary %v call %d key %d at %d µs", l, seed, boundary, i, key, now)
		if err := lim.Server.SetClock(EpochUnixMicro + now); err != nil {
			t.Fatal(err)
		}
		// Before: GCRA's margin in ticks of 1/r µs, exactly, and the
		// distance between the two TATs once each is raised to now.
		tat := now * r
		if g := st.GCRA(); st.Set {
			tat = max(tat, g.TAT*r+g.Frac)
		}
		margin := float64(now*r-(tat-tauTicks)) / float64(r)
		drift := 0.0
		if lt, ok := storedTAT(t, lim, key); ok {
			drift = math.Abs(max(lt, float64(now)) - float64(tat)/float64(r))
		}
		got, err := lim.Allow(ctx, key, now)
		if err != nil {
			t.Fatal(err)
		}
		want := algos.GCRA.Decide(&st, now, l)
		tl.calls++
		if got.Allowed {
			tl.admits++
		}
		eps := drift + 4*half + slack
		if got.Allowed != want.Allowed {
			tl.allowed++
			if got.Allowed {
				tl.libOnly++
			} else {
				tl.gcraOnly++
			}
			if math.Abs(margin) > eps {
				t.Errorf("%s: library %+v, GCRA %+v, %.4f µs from GCRA's boundary, more than the drift %.4f µs explains", where, got, want, margin, drift)
			}
			key++
			st = algos.State{}
			prev = want
			continue
		}
		// After: the new drift, grown by at most 2 half-steps on an admit.
		after := 0.0
		if lt, ok := storedTAT(t, lim, key); ok {
			signed := lt - gcraTAT(st, l)
			after = math.Abs(signed)
			tl.early, tl.late = max(tl.early, -signed), max(tl.late, signed)
		}
		if got.Allowed && after > drift+2*half+slack {
			t.Errorf("%s: TAT drift %.4f µs after, %.4f before: more than 2 roundings", where, after, drift)
		}
		tl.maxDrift = max(tl.maxDrift, after)
		ns := 0.001 // the library's truncation to the ns
		if got.Allowed {
			y := float64(l.Burst) - (gcraTAT(st, l)-float64(now))/T
			d := (after+2*half)/T + slack
			if float64(got.Remaining) < math.Floor(y-d) || float64(got.Remaining) > math.Floor(y+d) {
				t.Errorf("%s: Remaining %d, GCRA's exact %.6f", where, got.Remaining, y)
			}
			if x := gcraTAT(st, l) - float64(now); !ceilWithin(got.Reset, x, after+2*half+ns+slack) {
				t.Errorf("%s: Reset %d, GCRA's exact %.6f µs", where, got.Reset, x)
			}
		} else {
			if !ceilWithin(got.RetryAfter, -margin, eps+ns) {
				t.Errorf("%s: RetryAfter %d, GCRA's exact %.6f µs", where, got.RetryAfter, -margin)
			}
			if x := float64(tat)/float64(r) - float64(now); !ceilWithin(got.Reset, x, drift+2*half+ns+slack) {
				t.Errorf("%s: Reset %d, GCRA's exact %.6f µs", where, got.Reset, x)
			}
		}
		if got.Remaining != want.Remaining {
			tl.remaining++
			tl.maxRemaining = max(tl.maxRemaining, abs(got.Remaining-want.Remaining))
		}
		if got.RetryAfter != want.RetryAfter {
			tl.retry++
			tl.maxRetry = max(tl.maxRetry, abs(got.RetryAfter-want.RetryAfter))
		}
		if got.Reset != want.Reset {
			tl.reset++
			tl.maxReset = max(tl.maxReset, abs(got.Reset-want.Reset))
		}
		prev = want
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
