package lua

import (
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
)

// A key's state is idle at time T when deciding on it from T on gives
// exactly what deciding on an absent key gives: a full bucket, a window no
// longer counted, a log whose entries are all outside the window. Forgetting
// the key then (its expiry) changes nothing; forgetting it earlier hands out
// a fresh burst early.
//
// The time is found from the Go twin alone, so that it holds for a user's
// script and twin as for the six: one call at T on a copy of the state, and
// one on an absent key, must give the same decision and leave the same
// stored values (after which nothing tells them apart), and so must a call
// at T+1 and T+2W instead. The earliest such T is searched for from
// the call's own time, first at the time the twin's decision names (now +
// Reset), which it is for the six (TestLuaIdleIsWhereTheTwinsSayItIs).

// idleTime is the result of the search: At, the earliest time (µs) from which
// the state is idle, or Never when there is none up to algos.MaxTime and the
// twin's Reset names none later either.
type idleTime struct {
	At    int64
	Never bool
}

// twinPanic is a panic of the Go twin's Decide, as an error.
type twinPanic struct{ v any }

func (p twinPanic) Error() string { return fmt.Sprintf("the Go twin's Decide panicked: %v", p.v) }

// decide runs the twin, turning a panic into an error: a user's twin is
// input, and bad input is an error.
func decide(f algos.DecideFunc, s *algos.State, now int64, lim algos.Limit) (d algos.Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = twinPanic{v}
		}
	}()
	return f(s, now, lim), nil
}

// idleSearch finds when a twin's state is idle.
type idleSearch struct {
	decide algos.DecideFunc
	lim    algos.Limit
	err    error // the first panic of the twin; every answer after it is false
}

// sameAsAbsent reports whether a call at t decides and stores the same on a
// copy of s as on an absent key.
func (q *idleSearch) sameAsAbsent(s algos.State, t int64) bool {
	if q.err != nil {
		return false
	}
	st := s.Clone()
	var fresh algos.State
	d1, err1 := decide(q.decide, &st, t, q.lim)
	d2, err2 := decide(q.decide, &fresh, t, q.lim)
	if q.err = cmpErr(err1, err2); q.err != nil {
		return false
	}
	return d1 == d2 && slices.Equal(st.Stored(), fresh.Stored())
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// idleFrom reports whether s is idle at t: a first call at t, t+1 or t+2W
// (those not past algos.MaxTime) finds it as an absent key.
func (q *idleSearch) idleFrom(s algos.State, t int64) bool {
	for _, off := range []int64{0, 1, 2 * q.lim.Window} {
		if at := t + off; at <= algos.MaxTime && !q.sameAsAbsent(s, at) {
			return false
		}
	}
	return true
}

// find returns when s, the state after a call at now whose decision named
// reset, is first idle at or after now. It assumes that a state once idle
// stays idle; the checks at t+1 and t+2W guard the search from a twin that
// looks idle at one instant only.
func (q *idleSearch) find(s algos.State, now, reset int64) (idleTime, error) {
	hint := int64(-1)
	if reset > 0 && reset <= algos.MaxTime-now {
		hint = now + reset
	}
	// The twin's word first: not idle just before now + Reset, idle from it.
	// (A state copy per check is the cost; a long log makes it count.)
	if hint > now && !q.sameAsAbsent(s, hint-1) && q.idleFrom(s, hint) {
		return idleTime{At: hint}, q.err
	}
	if q.idleFrom(s, now) {
		return idleTime{At: now}, q.err
	}
	lo, hi := now, int64(-1) // idle at hi, not at lo
	if hint > now && q.idleFrom(s, hint) {
		hi = hint
	} else {
		lo = max(lo, hint)
		for step := max(q.lim.Window, 1); hi < 0; step *= 2 {
			t := algos.MaxTime
			if step < algos.MaxTime-lo {
				t = lo + step
			}
			if q.idleFrom(s, t) {
				hi = t
			} else if t == algos.MaxTime || q.err != nil {
				if reset > 0 && reset > algos.MaxTime-now {
					// Past MaxTime the algorithms promise nothing; the twin's
					// own word is all there is.
					return idleTime{At: now + min(reset, math.MaxInt64-now)}, q.err
				}
				return idleTime{Never: true}, q.err
			} else {
				lo = t
			}
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if q.idleFrom(s, mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return idleTime{At: hi}, q.err
}
