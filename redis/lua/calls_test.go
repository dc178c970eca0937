package lua

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/adaptertest"
	"github.com/overshoot-go/overshoot/traffic"
)

// idleLimits are limits of every shape the idle search must meet: the
// adapters' (integer and fractional emission intervals, bursts of 1 and
// more, a minute down to a millisecond) and a burst at the rate, small
// and large.
func idleLimits() []algos.Limit {
	return append(adaptertest.Limits(), algos.MustLimit(3, algos.Second, 3), algos.MustLimit(100, algos.Second, 100), algos.MustLimit(250, 7*algos.Second, 40))
}

// TestLuaIdleIsWhereTheTwinsSayItIs: for the six algorithms, the search
// that finds when a state is idle (stepping the twin and comparing it with
// an absent key, without the twin's word) lands on now + Reset, the time to
// idle each decision names: so the TTL rule holds the built-in scripts to
// their own Reset, and a user's twin to what its state does.
func TestLuaIdleIsWhereTheTwinsSayItIs(t *testing.T) {
	checked := 0
	for _, a := range algos.All() {
		for _, lim := range idleLimits() {
			times, err := traffic.DifferentialCalls(5, lim, 1_700_000_000_000_000, traffic.MinDifferentialCalls(lim))
			if err != nil {
				t.Fatal(err)
			}
			q := idleSearch{decide: a.Decide, lim: lim}
			var s algos.State
			for i, now := range times {
				d := a.Decide(&s, now, lim)
				if i%3 != 0 {
					continue
				}
				searched, err := q.find(s, now, 0)
				if err != nil {
					t.Fatal(err)
				}
				hinted, _ := q.find(s, now, d.Reset)
				if searched.Never || searched.At != now+d.Reset || hinted != searched {
					t.Fatalf("%s, %v, call %d at %d (%+v, stores %v): idle at %+v searched, %+v with the hint, want %d (now + Reset)",
						a.Name, lim, i, now, d, s.Stored(), searched, hinted, now+d.Reset)
				}
				checked++
			}
		}
	}
	t.Logf("%d states: idle exactly Reset after the call", checked)
}

// TestLuaIdleOfOddTwins: a state that never becomes idle says so, a twin
// whose Reset lies is searched past, and a twin that panics is an error.
func TestLuaIdleOfOddTwins(t *testing.T) {
	lim := algos.MustLimit(10, algos.Second, 10)
	// A counter that never resets: never idle.
	forever := idleSearch{lim: lim, decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		s.Set = true
		s.Ints[0]++
		return algos.Decision{Allowed: s.Ints[0] <= l.Rate}
	}}
	if got, err := forever.find(algos.State{Set: true, Ints: [3]int64{3}}, 1000, 0); err != nil || !got.Never {
		t.Errorf("a counter that never resets: %+v, %v; want never idle", got, err)
	}
	// The fixed window with Reset always 0: the search finds the window's end.
	lying := idleSearch{lim: lim, decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		d := algos.FixedWindow.Decide(s, now, l)
		d.Reset = 0
		return d
	}}
	var s algos.State
	now := int64(5*algos.Second + 123)
	lying.decide(&s, now, lim)
	if got, err := lying.find(s, now, 0); err != nil || got.At != 6*algos.Second {
		t.Errorf("a fixed window whose Reset is 0: idle at %+v, %v; want the window's end, %d", got, err, 6*algos.Second)
	}
	panicky := idleSearch{lim: lim, decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		if s.Set {
			panic("mine broke")
		}
		s.Set = true
		return algos.Decision{}
	}}
	if _, err := panicky.find(algos.State{Set: true}, 1000, 10); err == nil || !strings.Contains(err.Error(), "mine broke") {
		t.Errorf("a twin that panics: %v, want an error saying why", err)
	}
}
