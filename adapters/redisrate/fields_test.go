package redisrate

import (
	"context"
	"strconv"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/traffic"
)

// fork is a second store on which a decision's state is copied and probed
// at other times, so that the library is held to its own answers.
type fork struct {
	*sim
}

// at puts the store's clock at now (forward or back) and the key's TAT to
// v, exactly as the main store holds it ("" for an absent key). The copy
// has no TTL; it needs none, since the script treats a TAT in the past as
// an absent key (tat = max(tat, now)), and the TTL is never shorter than
// the time to that.
func (f fork) at(t *testing.T, now int64, v string) {
	t.Helper()
	ctx := context.Background()
	clock := EpochUnixMicro + now
	var err error
	if clock >= f.Server.Clock() {
		err = f.Server.SetClock(clock)
	} else {
		err = f.Server.StepBack(clock)
	}
	if err == nil && v == "" {
		err = f.Client.Del(ctx, "rate:overshoot:0").Err()
	} else if err == nil {
		err = f.Client.Set(ctx, "rate:overshoot:0", v, 0).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// admits counts the admits at the fork's clock, calling until a denial or
// most calls.
func (f fork) admits(t *testing.T, most int64) int64 {
	t.Helper()
	var n int64
	for n < most {
		d, err := allow(context.Background(), f.lib, "overshoot:0", f.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			break
		}
		n++
	}
	return n
}

// scriptNow is the script's time at now, computed as the script does:
// (TIME[1] - 1483228800) + TIME[2]/1000000 in float64, each operation
// rounded once, as Lua's doubles are.
func scriptNow(now int64) float64 {
	clock := EpochUnixMicro + now
	return float64(clock/1_000_000-1_483_228_800) + float64(clock%1_000_000)/1e6
}

// idleAt reports whether the script, at now, sees the key v as it sees an
// absent one: TAT at or before its now (tat = max(tat, now)).
func idleAt(t *testing.T, v string, now int64) bool {
	if v == "" {
		return true
	}
	tat, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatal(err)
	}
	return tat <= scriptNow(now)
}

type honesty struct {
	decisions, denials, resets int
	// Remaining: more (under) or fewer (over) admitted at the same instant.
	remainingUnder, remainingOver int
	// RetryAfter: a retry 1 µs early admitted (no ExactRetry), one 2 µs
	// early admitted, or one at RetryAfter denied (too short).
	retryEarly, retryEarly2, retryShort int
	// Reset: at Reset the key not yet idle (TAT after the script's now), or
	// fewer admitted at one instant than from an absent key (too short);
	// 1 µs before, or 2, already idle (too long).
	resetShort, resetLong, resetLong2 int
}

// The library held to its own answers, not GCRA's: for each decision of a
// seeded sequence (aimed at the boundaries), its stored TAT is copied to a
// second store and probed there: the calls Remaining promises at the same
// instant, a retry at RetryAfter and 1 and 2 µs before it, and whether the
// script sees the key as idle (TAT at or before its own float now) at
// Reset and 1 and 2 µs before; every fourth also counts the admits at one
// instant at Reset against those of an absent key (its "idle burst",
// which for 7 per 3 s is 4 and for 3 per ms 3, one short of the burst;
// see TestDecisionsByHand).
func TestFieldsAgainstTheLibrary(t *testing.T) {
	t.Parallel()
	var all honesty
	for _, l := range limits {
		var h honesty
		lim, f := open(t, l), fork{open(t, l)}
		q, err := traffic.NewCallSequence(13, l, true)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		f.at(t, 0, "")
		idle := f.admits(t, l.Burst+2)
		var prev algos.Decision
		for i := range 120 {
			now := q.Next(prev, i == 0)
			d, err := lim.Allow(ctx, 0, now)
			if err != nil {
				t.Fatal(err)
			}
			prev = d
			v, _ := lim.Client.Get(ctx, "rate:overshoot:0").Result()
			h.decisions++
			f.at(t, now, v)
			switch n := f.admits(t, d.Remaining+2); {
			case n > d.Remaining:
				h.remainingUnder++
			case n < d.Remaining:
				h.remainingOver++
			}
			if !d.Allowed {
				h.denials++
				f.at(t, now+d.RetryAfter-1, v)
				if f.admits(t, 1) == 1 {
					h.retryEarly++
				}
				if d.RetryAfter > 1 {
					f.at(t, now+d.RetryAfter-2, v)
					if f.admits(t, 1) == 1 {
						h.retryEarly2++
					}
				}
				f.at(t, now+d.RetryAfter, v)
				if f.admits(t, 1) == 0 {
					h.retryShort++
				}
			}
			if !idleAt(t, v, now+d.Reset) {
				h.resetShort++
			}
			if d.Reset > 0 && idleAt(t, v, now+d.Reset-1) {
				h.resetLong++
			}
			if d.Reset > 1 && idleAt(t, v, now+d.Reset-2) {
				h.resetLong2++
			}
			if i%4 == 0 {
				h.resets++
				f.at(t, now+d.Reset, v)
				if f.admits(t, idle+1) != idle {
					h.resetShort++
				}
			}
		}
		t.Logf("%v (idle burst %d): %d decisions: Remaining under %d, over %d; %d denials: a retry 1 µs early admitted %d (2 µs early %d), at RetryAfter denied %d; Reset short %d, 1 µs long %d (2 µs %d)",
			l, idle, h.decisions, h.remainingUnder, h.remainingOver, h.denials, h.retryEarly, h.retryEarly2, h.retryShort, h.resetShort, h.resetLong, h.resetLong2)
		all.decisions += h.decisions
		all.denials += h.denials
		all.resets += h.resets
		all.remainingUnder += h.remainingUnder
		all.remainingOver += h.remainingOver
		all.retryEarly += h.retryEarly
		all.retryEarly2 += h.retryEarly2
		all.retryShort += h.retryShort
		all.resetShort += h.resetShort
		all.resetLong += h.resetLong
		all.resetLong2 += h.resetLong2
	}
	t.Logf("in all: %+v", all)
	// As found: Remaining is exactly what the library then admits; a retry
	// at RetryAfter is always admitted and the key is idle at Reset, so
	// neither is ever too short; both are at most 1 µs too long, the
	// adapter's rounding up of a float a few ns over a whole µs.
	if all.remainingUnder+all.remainingOver+all.retryShort+all.retryEarly2+all.resetShort+all.resetLong2 != 0 {
		t.Errorf("the library's own answers broke: %+v", all)
	}
	// Which is why Spec claims no ExactRetry: some retries 1 µs before
	// RetryAfter are admitted (and some keys idle 1 µs before Reset).
	if all.retryEarly == 0 || all.resetLong == 0 {
		t.Errorf("no retry admitted 1 µs early and no key idle 1 µs before Reset: ExactRetry may hold now; %+v", all)
	}
	if all.denials == 0 {
		t.Error("no denials to check")
	}
}
