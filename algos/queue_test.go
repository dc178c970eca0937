package algos_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
)

// queueing is QueueingGCRA(maxDelay) for a test, failing it on an error.
func queueing(t testing.TB, maxDelay int64) algos.Algorithm {
	t.Helper()
	a, err := algos.QueueingGCRA(maxDelay)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// heldStep is a step with the µs the admitted request is held.
type heldStep struct {
	t          int64
	allowed    bool
	delay      int64
	remaining  int64
	retryAfter int64
	reset      int64
}

// runHeld plays the steps on a fresh key and reports every field that
// differs, as run does.
func runHeld(t *testing.T, algo algos.Algorithm, l algos.Limit, steps []heldStep) {
	t.Helper()
	var s algos.State
	for i, st := range steps {
		d := algo.Decide(&s, st.t, l)
		want := algos.Decision{Allowed: st.allowed, Delay: st.delay, Remaining: st.remaining, RetryAfter: st.retryAfter, Reset: st.reset}
		if d != want {
			t.Errorf("step %d at t=%dµs: got %+v, want %+v", i, st.t, d, want)
		}
	}
}

func TestQueueingGCRARefusesABadMaxDelay(t *testing.T) {
	for _, d := range []int64{-1, -algos.Second, algos.MaxTime + 1} {
		if a, err := algos.QueueingGCRA(d); err == nil {
			t.Errorf("QueueingGCRA(%d) = %q, want an error", d, a.Name)
		} else if !strings.Contains(err.Error(), "max delay") {
			t.Errorf("QueueingGCRA(%d): %v, want an error that names the max delay", d, err)
		}
	}
	if a := queueing(t, 500_000); a.Name != "gcra-queue-500ms" {
		t.Errorf("name %q, want gcra-queue-500ms", a.Name)
	}
}

// With T = 5 µs, tau = 5 µs and a max delay of 7 µs: what the GCRA refuses
// for coming up to 7 µs early is held until the GCRA would admit it.
func TestQueueingGCRASteps(t *testing.T) {
	runHeld(t, queueing(t, 7), lim2per10, []heldStep{
		{t: 100, allowed: true, remaining: 1, reset: 5},  // TAT 105
		{t: 100, allowed: true, remaining: 0, reset: 10}, // TAT 110
		{t: 100, allowed: true, delay: 5, reset: 15},     // the GCRA admits at 105: held 5, TAT 115
		{t: 100, retryAfter: 3, reset: 15},               // admitted at 110: 10 > 7, retry when it is 7
		{t: 102, retryAfter: 1, reset: 13},               // 8 > 7
		{t: 103, allowed: true, delay: 7, reset: 17},     // exactly at retry-after: held the max, TAT 120
		{t: 120, allowed: true, remaining: 1, reset: 5},  // the queue has drained: at once
	})
	// With a max delay of 10 the fourth request at one instant is held 10.
	runHeld(t, queueing(t, 10), lim2per10, []heldStep{
		{t: 0, allowed: true, remaining: 1, reset: 5},
		{t: 0, allowed: true, remaining: 0, reset: 10},
		{t: 0, allowed: true, delay: 5, reset: 15},
		{t: 0, allowed: true, delay: 10, reset: 20}, // at the max: admitted
		{t: 0, retryAfter: 5, reset: 20},
	})
}

// With T = 10/3 µs and a burst of 1 (tau = 0), TAT carries a third of a µs
// past the whole µs a held request is let through at, and the GCRA
// restarts TAT there: a back-to-back queue drains one every 4 µs.
func TestQueueingGCRAFractionalInterval(t *testing.T) {
	runHeld(t, queueing(t, 4), algos.MustLimit(3, 10, 1), []heldStep{
		{t: 100, allowed: true, remaining: 0, reset: 4}, // TAT 103⅓
		{t: 100, allowed: true, delay: 4, reset: 8},     // let through at ⌈103⅓⌉ = 104, TAT 107⅓
		{t: 100, retryAfter: 4, reset: 8},               // admitted at 108: held 8 > 4
		{t: 103, retryAfter: 1, reset: 5},
		{t: 104, allowed: true, delay: 4, reset: 8}, // let through at 108, TAT 111⅓
		{t: 112, allowed: true, remaining: 0, reset: 4},
	})
}

// A node whose clock is behind is held or told to wait the gap too, as the
// GCRA tells it, and TAT does not move back.
func TestQueueingGCRABehind(t *testing.T) {
	runHeld(t, queueing(t, 7), lim2per10, []heldStep{
		{t: 0, allowed: true, remaining: 1, reset: 5},
		{t: 0, allowed: true, remaining: 0, reset: 10},
		{t: 0, allowed: true, delay: 5, reset: 15},      // TAT 15
		{t: 10, allowed: true, remaining: 0, reset: 10}, // at once: TAT 20
		{t: 0, retryAfter: 8, reset: 20},                // behind by 10: admitted at 15, held 15 > 7
		{t: 8, allowed: true, delay: 7, reset: 17},      // let through at 15, TAT 25
		{t: 25, allowed: true, remaining: 1, reset: 5},  // drained: TAT 30
		{t: 15, retryAfter: 3, reset: 15},               // behind by 10: admitted at 25, held 10 > 7
		{t: 18, allowed: true, delay: 7, reset: 17},     // let through at 25, TAT 35
	})
}

// randomLimit draws a limit small enough that a few dozen calls reach every
// branch: rates of 1 to 12 per 1 to 60 µs (emission intervals whole and
// fractional), bursts of 1 to 5.
func randomLimit(r *rand.Rand) algos.Limit {
	return algos.MustLimit(1+r.Int64N(12), 1+r.Int64N(60), 1+r.Int64N(5))
}

// A max delay of 0 is the GCRA: every decision and every stored state the
// same, over random sequences that include calls from a clock behind.
func TestQueueingGCRAWithNoDelayIsTheGCRA(t *testing.T) {
	zero := queueing(t, 0)
	r := rand.New(rand.NewPCG(28, 6))
	for seq := range 5000 {
		l := randomLimit(r)
		if got, want := zero.Promise(l).Text, algos.GCRA.Promise(l).Text; got != want {
			t.Fatalf("under %v: promise %q, want the GCRA's %q", l, got, want)
		}
		var gs, qs algos.State
		now := r.Int64N(algos.Second)
		for i := range 40 {
			now += r.Int64N(2*l.Window/l.Rate+2) - r.Int64N(l.Window/l.Rate+1)/2 // mostly forward, sometimes back
			g, q := algos.GCRA.Decide(&gs, now, l), zero.Decide(&qs, now, l)
			if g != q || !statesEqual(gs, qs) {
				t.Fatalf("sequence %d, call %d at %d µs under %v: GCRA %+v (state %+v), max delay 0 %+v (state %+v)", seq, i, now, l, g, gs, q, qs)
			}
		}
	}
}

func statesEqual(a, b algos.State) bool {
	return a.Set == b.Set && a.Ints == b.Ints && a.Log == nil && b.Log == nil
}

// The queueing GCRA's promises, on one node with a true clock, over random
// limits, max delays and arrivals: no Delay exceeds the max; the admits let
// through at now + Delay keep the GCRA's bucket promise, and as decided
// keep the algorithm's own (widened) Promise; each admit is the GCRA's
// decision at the instant it is let through, and each refusal is of a
// request the GCRA would hold longer than the max, with a RetryAfter that is
// exact (a µs sooner is refused, then it is admitted and held the max).
func TestQueueingGCRAKeepsItsPromises(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := algos.MustLimit(rapid.Int64Range(1, 6).Draw(t, "rate"), rapid.Int64Range(1, 40).Draw(t, "window"), rapid.Int64Range(1, 4).Draw(t, "burst"))
		maxDelay := rapid.Int64Range(0, 60).Draw(t, "maxDelay")
		gaps := rapid.SliceOfN(rapid.Int64Range(0, 12), 1, 60).Draw(t, "gaps")
		algo, err := algos.QueueingGCRA(maxDelay)
		if err != nil {
			t.Fatal(err)
		}
		var s algos.State
		var released, decided []int64
		now := int64(1000)
		for i, gap := range gaps {
			now += gap
			before := s
			d := algo.Decide(&s, now, l)
			// What the GCRA says on the same state at the same instant.
			gs := before
			g := algos.GCRA.Decide(&gs, now, l)
			wait := int64(0)
			if !g.Allowed {
				wait = g.RetryAfter
			}
			switch {
			case d.Allowed && (d.Delay < 0 || d.Delay > maxDelay):
				t.Fatalf("call %d at %d: held %d µs, outside [0, %d]", i, now, d.Delay, maxDelay)
			case d.Allowed != (wait <= maxDelay):
				t.Fatalf("call %d at %d: allowed %v, but the GCRA would admit it in %d µs (max %d)", i, now, d.Allowed, wait, maxDelay)
			case d.Allowed && d.Delay != wait:
				t.Fatalf("call %d at %d: held %d µs, the GCRA admits it in %d", i, now, d.Delay, wait)
			case !d.Allowed && (d.Delay != 0 || d.RetryAfter != wait-maxDelay):
				t.Fatalf("call %d at %d: refused with %+v; the GCRA admits in %d, so Retry-After is %d", i, now, d, wait, wait-maxDelay)
			}
			if d.Allowed {
				// The GCRA at the instant it is let through leaves the same state.
				at := before
				if ga := algos.GCRA.Decide(&at, now+d.Delay, l); !ga.Allowed || !statesEqual(at, s) {
					t.Fatalf("call %d at %d, held %d: state %+v; the GCRA at %d gives %+v (state %+v)", i, now, d.Delay, s, now+d.Delay, ga, at)
				}
				released = append(released, now+d.Delay)
				decided = append(decided, now)
				continue
			}
			for _, retry := range []struct {
				at    int64
				admit bool
			}{{now + d.RetryAfter - 1, false}, {now + d.RetryAfter, true}} {
				c := before
				if rd := algo.Decide(&c, retry.at, l); rd.Allowed != retry.admit || retry.admit && rd.Delay != maxDelay {
					t.Fatalf("call %d at %d told Retry-After %d; at %d: %+v", i, now, d.RetryAfter, retry.at, rd)
				}
			}
		}
		if v := algos.BucketPromise(l).CheckAdmits(released); v != nil {
			t.Fatalf("under %v, max delay %d, let through at %v: %v", l, maxDelay, released, v)
		}
		if v := algo.Promise(l).CheckAdmits(decided); v != nil {
			t.Fatalf("under %v, max delay %d, decided at %v: %v", l, maxDelay, decided, v)
		}
	})
}

// The decision-time promise is the GCRA's with the burst widened by
// ⌈D·L/W⌉, and says both bounds in words.
func TestQueueingGCRAPromise(t *testing.T) {
	l := algos.MustLimit(20, algos.Second, 1)
	p := queueing(t, 120_000).Promise(l) // 2.4 emission intervals: 3 more
	shape, wide := p.Shape()
	if shape != algos.BucketShape || wide.Burst != 4 || wide.Rate != 20 || wide.Window != algos.Second {
		t.Errorf("shape %v, limit %v: want the bucket promise of 20 per 1s with a burst of 4", shape, wide)
	}
	for _, part := range []string{"at most 4 + 20·Δ/1s admits in any interval of length Δ as decided", "1 + 20·Δ/1s as let through, each held at most 120ms"} {
		if !strings.Contains(p.Text, part) {
			t.Errorf("promise %q does not say %q", p.Text, part)
		}
	}
	// A max delay so long the widened burst cannot be counted exactly: every
	// check says why, rather than dividing or overflowing.
	huge := queueing(t, algos.MaxTime).Promise(algos.MustLimit(1_000_000_000, algos.Second, 1))
	if v := huge.CheckAdmits([]int64{1}); v == nil || !strings.Contains(v.Reason, "cannot be counted exactly") {
		t.Errorf("a promise too wide to count: check gave %v", v)
	}
}
