package planted

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/arith"
)

// SlidingCounterWrongWeight is the sliding counter weighing the previous
// window by the share of the current window that has elapsed instead of
// the share that remains.
//
// PLANTED BUG: `weighted := prev * elapsed` instead of
// `weighted := prev * (w - elapsed)`. The author reads "weigh the previous
// window by how far we are into this one" and writes the fraction that has
// passed. Early in a window the previous window then counts for almost
// nothing, so a key that was full just before an edge gets almost a whole
// window again just after it; late in a window the previous window counts
// almost in full, so requests are turned away that the correct counter
// admits, and a flood gets about 85 of 100 per window.
//
// It still keeps the sliding counter's own promise, AlignedWindowPromise:
// weighted is never negative, so an admit needs cur·W < L·W, that is at most
// L admits in each aligned window, exactly as the fixed window.
//
// Everything else is what such an author writes to stay consistent with
// that estimate, so that the bug is the estimate alone. Remaining is
// computed from the same weighted, so it is exact. The estimate only grows
// within a window (prev·elapsed) and is cur·W at the next window's start,
// where cur is 0, so a denial's RetryAfter is the time to the next window,
// exactly: the one other line that differs from algos.SlidingCounter, whose
// retry (slidingCounterRetry) solves the correct estimate and would here
// answer a wait that is negative or too short. Reset is the correct
// counter's, 2W − elapsed: later than needed, but a full burst is there.
// So the whole contract of package properties passes (estimate_test.go);
// only a comparison with the correct counter on the same requests (package
// differential) shows that its admits per window are not a sliding
// counter's.
//
// Stored: algos.WindowState, as the sliding counter's.
var SlidingCounterWrongWeight = algos.Algorithm{
	Name:       "planted-sliding-counter-wrong-weight",
	Decide:     decidePlantedSlidingCounterWrongWeight,
	Promise:    algos.AlignedWindowPromise,
	StateDoc:   "window index, current count, previous count",
	StateInts:  func(algos.Limit) int64 { return 3 },
	ExactRetry: true,
	// A sliding counter, and so as conservative as the real one: only a
	// reference can tell its refusals from the real counter's.
	Conservative: true,
}

func decidePlantedSlidingCounterWrongWeight(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return decideBy(plantedSlidingCounterWrongWeight, s, now, &l)
}

func plantedSlidingCounterWrongWeight(s *algos.State, now int64, l *algos.Limit) (bool, int64, int64, int64) {
	w, limit := l.Window, l.Rate
	idx := algos.FloorDiv(now, w)
	win := s.Window()
	if !s.Set || win.Index != idx {
		prev := int64(0)
		if s.Set && win.Index == idx-1 { // the stored window is the previous one now
			prev = win.Count
		}
		win = algos.WindowState{Index: idx, Prev: prev}
		*s = win.State()
	}
	cur, prev := win.Count, win.Prev
	elapsed := now - idx*w
	weighted := prev * elapsed // PLANTED: was prev * (w - elapsed)
	d := decision{}
	if weighted+cur*w < limit*w {
		cur++
		d.Allowed = true
	} else {
		d.RetryAfter = w - elapsed // not the bug: the wait its own estimate gives
	}
	s.SetWindow(algos.WindowState{Index: idx, Count: cur, Prev: prev})
	d.Remaining = max(0, arith.CeilDiv(limit*w-weighted, w)-cur)
	switch {
	case cur > 0:
		d.Reset = 2*w - elapsed
	case prev > 0:
		d.Reset = w - elapsed
	}
	return d.fields()
}
