package properties

import (
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// episode is one node whose clock steps back: true-clock arrivals up to
// time now, then calls at node times in [now-step, now), then a probe at a
// true time at or after now, once the clock has caught up.
type episode struct {
	l       algos.Limit
	now     int64       // the latest time the key saw before the step
	before  algos.State // the key at now
	after   algos.State // the key after the calls while behind
	behind  []call      // the calls while behind
	admits  int64       // how many of them were admitted
	probe   int64
	instant int64 // the promise's most admits at one instant
	calls   []call
}

func drawEpisode(t *rapid.T, algo algos.Algorithm, c config) episode {
	l := c.limits.Draw(t, "limit")
	times := Arrivals(l).Draw(t, "arrivals")
	e := episode{l: l, instant: atOneInstant(t, algo.Promise(l))}
	e.before, e.calls = replay(algo, l, times, nil)
	if len(times) > 0 {
		e.now = times[len(times)-1]
	}
	step := stepBack(t, l, e.now)
	e.after = e.before.Clone()
	if step > 0 {
		offsets := rapid.SliceOfN(rapid.Int64Range(0, step-1), 1, 8).Draw(t, "behind offsets")
		slices.Sort(offsets)
		for _, off := range offsets {
			at := e.now - step + off
			d := algo.Decide(&e.after, at, l)
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
func (e episode) describe(algo algos.Algorithm) string {
	return fmt.Sprintf("%s under %v, clock at %d before the step%s\n  then behind:%s",
		algo.Name, e.l, e.now, trace(e.calls), trace(e.behind))
}

// availability is how many calls at the probe a key admits at one instant,
// without and with the calls made while behind.
func (e episode) availability(algo algos.Algorithm) (without, with int64) {
	return admitsAt(algo, e.before, e.probe, e.l, e.instant+1), admitsAt(algo, e.after, e.probe, e.l, e.instant+1)
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
func StepBackNoNegativeRefill(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		e := drawEpisode(t, algo, c)
		for i, b := range e.behind {
			if msg := badDecision(b.d); msg != "" {
				t.Fatalf("%s while behind: %s%s", e.describe(algo), msg, trace(e.behind[:i+1]))
			}
		}
		without, with := e.availability(algo)
		if with < without-e.admits {
			t.Fatalf("%s\nat %d: %d admits at one instant after the step, %d without it, and only %d were admitted while behind",
				e.describe(algo), e.probe, with, without, e.admits)
		}
	}
}

// StepBackNoLongLockout claims that a clock stepping back locks a key out
// for no longer than the step: a denial at node time x, when the key has
// seen time now, reports a retry-after of at most (now-x) + MaxWait(l).
func StepBackNoLongLockout(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		e := drawEpisode(t, algo, c)
		for _, b := range e.behind {
			if bound := e.now - b.t + c.maxWait(e.l); !b.d.Allowed && b.d.RetryAfter > bound {
				t.Fatalf("%s\nat %d, %dµs behind: retry-after %d, beyond the step plus the longest wait %d",
					e.describe(algo), b.t, e.now-b.t, b.d.RetryAfter, bound)
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
func StepBackNoDoubleRefill(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		e := drawEpisode(t, algo, c)
		without, with := e.availability(algo)
		if with > without {
			t.Fatalf("%s\nat %d: %d admits at one instant after the step, only %d without it: refilled twice",
				e.describe(algo), e.probe, with, without)
		}
	}
}
