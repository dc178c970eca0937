package algos

import (
	"math"
	"math/rand/v2"
	"testing"
)

// While the admits so far keep the promise, Allows(t) says exactly whether
// CheckAdmits would still find nothing with t added: on seeded runs of
// every built-in promise, at small limits where edges are often hit, each
// candidate time is asked and then admitted only if the envelope allows it
// (so the run stays within the promise), or, now and then, admitted anyway
// to leave the promise broken and check that Allows then follows the run.
func TestEnvelopeAgreesWithCheck(t *testing.T) {
	promises := []func(Limit) Promise{BucketPromise, AlignedWindowPromise, SlidingWindowPromise, AnchoredWindowPromise}
	asked := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		l := MustLimit(1+r.Int64N(4), 1+r.Int64N(12), 1+r.Int64N(4))
		for _, promise := range promises {
			p := promise(l)
			e, ok := p.Envelope()
			if !ok {
				t.Fatalf("%s has no envelope", p.Text)
			}
			var admits []int64
			now := int64(0)
			broken := false
			for range 60 {
				now += r.Int64N(2*l.Window/max(1, l.Rate) + 2)
				if r.IntN(3) == 0 {
					now -= min(now, r.Int64N(2)) // repeat an instant now and then
					if len(admits) > 0 {
						now = max(now, admits[len(admits)-1])
					}
				}
				allows := e.Allows(now)
				if len(admits) > 0 {
					// AllowsFrom agrees with Allows at every time from the
					// latest admit on.
					from := e.AllowsFrom()
					last := admits[len(admits)-1]
					for _, at := range []int64{last, last + 1, now, from - 1, from, from + 1, now + l.Window} {
						if at >= last && e.Allows(at) != (at >= from) {
							t.Fatalf("seed %d, %s: admits %v: Allows(%d) = %v, AllowsFrom = %d", seed, p.Text, admits, at, e.Allows(at), from)
						}
					}
				} else if e.AllowsFrom() != math.MinInt64 {
					t.Fatalf("an empty envelope allows from %d", e.AllowsFrom())
				}
				if !broken {
					want := p.CheckAdmits(append(append([]int64(nil), admits...), now)) == nil
					asked++
					if allows != want {
						t.Fatalf("seed %d, %s: admits %v, then %d: Allows = %v, CheckAdmits says %v", seed, p.Text, admits, now, allows, want)
					}
					// Headroom is how many admits at now CheckAdmits takes.
					more := append([]int64(nil), admits...)
					room := int64(0)
					for room <= l.Burst+l.Rate {
						if more = append(more, now); p.CheckAdmits(more) != nil {
							break
						}
						room++
					}
					if got := e.Headroom(now); got != room {
						t.Fatalf("seed %d, %s: admits %v: Headroom(%d) = %d, CheckAdmits takes %d more", seed, p.Text, admits, now, got, room)
					}
					// Exceeds(now, n) is n > Headroom(now), for every n
					// around it and at the extremes.
					for _, n := range []int64{math.MinInt64, -1, 0, room - 1, room, room + 1, room + 2, math.MaxInt64 / 3, math.MaxInt64} {
						if got := e.Exceeds(now, n); got != (n > room) {
							t.Fatalf("seed %d, %s: admits %v: Exceeds(%d, %d) = %v, Headroom %d", seed, p.Text, admits, now, n, got, room)
						}
					}
					// IdleAt is the first time from which a whole burst fits.
					full := l.Rate
					if p.Text == BucketPromise(l).Text {
						full = l.Burst
					}
					if idle := e.IdleAt(); len(admits) > 0 {
						if e.Headroom(idle) != full || e.Headroom(idle+l.Window) != full || (idle > admits[len(admits)-1] && e.Headroom(idle-1) == full) {
							t.Fatalf("seed %d, %s: admits %v: IdleAt = %d, where Headroom is %d (a µs before: %d), want the first time of %d",
								seed, p.Text, admits, idle, e.Headroom(idle), e.Headroom(idle-1), full)
						}
					} else if idle != math.MinInt64 {
						t.Fatalf("an empty envelope is idle from %d", idle)
					}
				}
				// Past a broken promise too (a bucket over its capacity).
				for _, n := range []int64{-1, 0, 1, 2, l.Burst, math.MaxInt64} {
					if got, room := e.Exceeds(now, n), e.Headroom(now); got != (n > room) {
						t.Fatalf("seed %d, %s: admits %v: Exceeds(%d, %d) = %v, Headroom %d", seed, p.Text, admits, now, n, got, room)
					}
				}
				if allows || r.IntN(40) == 0 {
					e.Admit(now)
					admits = append(admits, now)
					broken = broken || !allows
				}
			}
		}
	}
	t.Logf("%d times asked", asked)
}

// A promise of a user's own has no envelope: its check judges whole runs.
func TestOwnPromiseHasNoEnvelope(t *testing.T) {
	if _, ok := NewPromise("anything", func([]int64) *Violation { return nil }).Envelope(); ok {
		t.Error("an own promise has an envelope")
	}
}

// Reset makes a used envelope an empty one of any promise, as Envelope
// returns it: it allows the same times after the same admits, and it
// reports a promise without an envelope.
func TestEnvelopeResetIsAFreshEnvelope(t *testing.T) {
	l := MustLimit(3, 10, 2)
	promises := []func(Limit) Promise{BucketPromise, AlignedWindowPromise, SlidingWindowPromise, AnchoredWindowPromise}
	var reused Envelope
	for round := range 2 {
		for _, promise := range promises {
			p := promise(l)
			fresh, _ := p.Envelope()
			if !reused.Reset(p) {
				t.Fatalf("%s: Reset found no envelope", p.Text)
			}
			for now := int64(0); now < 40; now += 1 + now%3 {
				if reused.Allows(now) != fresh.Allows(now) || reused.AllowsFrom() != fresh.AllowsFrom() {
					t.Fatalf("round %d, %s, at %d: the reset envelope differs from a fresh one", round, p.Text, now)
				}
				if fresh.Allows(now) || now%7 == 0 {
					fresh.Admit(now)
					reused.Admit(now)
				}
			}
		}
	}
	if reused.Reset(NewPromise("anything", func([]int64) *Violation { return nil })) {
		t.Error("Reset found an envelope for an own promise")
	}
}

// LongestIdle bounds every IdleAt: whatever admits a promise allowed, a
// key left alone is idle no later than LongestIdle after its latest admit,
// and for a bucket, a sliding and an anchored window a whole burst at one
// instant takes exactly that long. A promise of the user's own has none.
func TestLongestIdleBoundsEveryIdleAt(t *testing.T) {
	promises := []func(Limit) Promise{BucketPromise, AlignedWindowPromise, SlidingWindowPromise, AnchoredWindowPromise}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 11))
		l := MustLimit(1+r.Int64N(4), 1+r.Int64N(12), 1+r.Int64N(4))
		for _, promise := range promises {
			p := promise(l)
			idle, why, ok := p.LongestIdle()
			if !ok || idle <= 0 || why == "" {
				t.Fatalf("%s: LongestIdle %d, %q, %v", p.Text, idle, why, ok)
			}
			e, _ := p.Envelope()
			now := r.Int64N(3 * l.Window)
			for range 60 {
				now += r.Int64N(l.Window/max(1, l.Rate) + 2)
				if !e.Allows(now) {
					continue
				}
				e.Admit(now)
				if got := e.IdleAt() - now; got > idle {
					t.Fatalf("seed %d, %s: idle %dµs after an admit at %d, LongestIdle %dµs (%s)", seed, p.Text, got, now, idle, why)
				}
			}
			if shape, _ := p.Shape(); shape == AlignedWindowShape {
				continue // a burst at a window's start is idle at its end, W; 2W allows for windows a client cannot see
			}
			burst, _ := p.Envelope()
			for burst.Allows(now) {
				burst.Admit(now)
			}
			if got := burst.IdleAt() - now; got != idle {
				t.Errorf("seed %d, %s: a whole burst at one instant is idle %dµs later, LongestIdle says %dµs", seed, p.Text, got, idle)
			}
		}
	}
	for _, p := range []Promise{{}, NewPromise("mine", func([]int64) *Violation { return nil })} {
		if _, _, ok := p.LongestIdle(); ok {
			t.Errorf("%q: LongestIdle known for a promise of no built-in shape", p.Text)
		}
	}
}
