package properties

import (
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// The step-back properties hold a caller-clock limiter to a clock that steps
// back, which a store-clock limiter never sees: the store's clock only moves
// forward, so Properties leaves them out for such a spec, and on their own
// they fail its every case with stepBackNotApplicable.
const stepBackNotApplicable = "reads the store's clock, which never steps back: the step-back properties do not apply to a store-clock limiter"

// episode is one node whose clock steps back: true-clock arrivals up to
// time now, then calls at node times in [now-step, now), then a probe at a
// true time at or after now, once the clock has caught up. Key 0 of lim has
// seen the arrivals and then the calls while behind.
type episode struct {
	r       run
	lim     limiter.Limiter
	times   []int64 // the arrivals
	now     int64   // the latest time the key saw before the step
	behind  []call  // the calls while behind
	admits  int64   // how many of them were admitted
	probe   int64
	instant int64 // the promise's most admits at one instant
	calls   []call
}

func drawEpisode(t *rapid.T, spec limiter.Spec, c config) episode {
	if spec.Clock == limiter.StoreClock {
		t.Fatalf("%s %s", spec.Name, stepBackNotApplicable)
	}
	l := c.limits.Draw(t, "limit")
	times := Arrivals(l).Draw(t, "arrivals")
	r := newRun(t, spec, l)
	e := episode{r: r, times: times, instant: c.instant(t, spec, l)}
	e.lim = r.open()
	e.calls = r.replay(e.lim, 0, times, nil)
	if len(times) > 0 {
		e.now = times[len(times)-1]
	}
	step := stepBack(t, l, e.now)
	if step > 0 {
		offsets := rapid.SliceOfN(rapid.Int64Range(0, step-1), 1, 8).Draw(t, "behind offsets")
		slices.Sort(offsets)
		for _, off := range offsets {
			at := e.now - step + off
			d, err := r.try(e.lim, 0, at)
			if err != nil {
				r.callFailed(0, at, err, slices.Concat(e.calls, e.behind))
			}
			e.behind = append(e.behind, call{at, d})
			if d.Allowed {
				e.admits++
			}
		}
	}
	e.probe = e.now + rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, c.maxWait(l))).Draw(t, "probe after now")
	return e
}

// describe prints the episode for a failure message.
func (e episode) describe() string {
	return fmt.Sprintf("%s under %v, clock at %d before the step%s\n  then behind:%s",
		e.r.spec.Name, e.r.l, e.now, trace(e.calls), trace(e.behind))
}

// availability is how many calls at the probe a key admits at one instant,
// without and with the calls made while behind: without is asked of key 1,
// which sees the arrivals alone (and must decide them as key 0 did), with
// of key 0. It may be asked once per episode.
func (e episode) availability() (without, with int64) {
	r := e.r
	for i, c := range e.calls {
		if d := r.allow(e.lim, 1, c.t, e.calls[:i]); d != c.d {
			r.t.Fatalf("%s: key 1, given the same calls as key 0, decided %v where key 0 decided %v; the properties replay a history on fresh keys, so they need a limiter whose decisions follow from a key's own calls%s",
				r.who(), call{c.t, d}, c, trace(e.calls[:i+1]))
		}
	}
	without = r.admitsAt(e.lim, 1, e.probe, e.instant+1, e.calls)
	with = r.admitsAt(e.lim, 0, e.probe, e.instant+1, slices.Concat(e.calls, e.behind))
	return without, with
}

// StepBackNoNegativeRefill claims that a clock stepping back costs nothing
// it should not: every decision while behind is consistent (nothing
// negative, a denial has remaining 0 and a retry-after), and once the clock
// has caught up (at any time from the pre-step time on), the key admits at
// least as many at one instant as it would have without the step, less the
// requests admitted while behind.
//
// It does not claim that remaining drops by at most one across the step
// itself: GCRA keeps TAT in absolute time, so TAT - now grows when now moves
// back, and the sliding counter weighs the previous window by how early in
// the current one now is. Both are correct on a true clock.
//
// It applies to caller-clock limiters only (a store's clock never steps
// back); every case of a store-clock spec fails, saying so.
func StepBackNoNegativeRefill(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		e := drawEpisode(t, spec, c)
		for i, b := range e.behind {
			if msg := badDecision(b.d); msg != "" {
				t.Fatalf("%s while behind: %s%s", e.describe(), msg, trace(e.behind[:i+1]))
			}
		}
		without, with := e.availability()
		if with < without-e.admits {
			t.Fatalf("%s\nat %d: %d admits at one instant after the step, %d without it, and only %d were admitted while behind",
				e.describe(), e.probe, with, without, e.admits)
		}
	}
}

// StepBackNoLongLockout claims that a clock stepping back locks a key out
// for no longer than the step: a denial at node time x, when the key has
// seen time now, reports a retry-after of at most (now-x) + MaxWait(l).
//
// It applies to caller-clock limiters only (a store's clock never steps
// back); every case of a store-clock spec fails, saying so.
func StepBackNoLongLockout(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		e := drawEpisode(t, spec, c)
		for _, b := range e.behind {
			if bound := e.now - b.t + c.maxWait(e.r.l); !b.d.Allowed && b.d.RetryAfter > bound {
				t.Fatalf("%s\nat %d, %dµs behind: retry-after %d, beyond the step plus the longest wait %d",
					e.describe(), b.t, e.now-b.t, b.d.RetryAfter, bound)
			}
		}
	}
}

// StepBackNoDoubleRefill claims that a node whose clock is behind never
// leaves the key better off: once the clock has caught up, the key admits
// no more at one instant than it would have without the calls made while
// behind. The leaky bucket, GCRA and the sliding log claim it; the token
// bucket (last = now refills the same interval twice) and the fixed window
// and sliding counter (a window index that moves back restarts the count)
// break it by design, which is why Check runs it only with
// WithNoDoubleRefill.
//
// It applies to caller-clock limiters only (a store's clock never steps
// back); every case of a store-clock spec fails, saying so.
func StepBackNoDoubleRefill(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		e := drawEpisode(t, spec, c)
		without, with := e.availability()
		if with > without {
			t.Fatalf("%s\nat %d: %d admits at one instant after the step, only %d without it: refilled twice",
				e.describe(), e.probe, with, without)
		}
	}
}
