package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// Hour is an hour in µs: the idle spells are at least this long.
const Hour = 3600 * algos.Second

// The generators whose ranges do not depend on the limit, made once: a
// case draws dozens of values, and making a generator per draw was a fifth
// of what the properties cost. A generator is immutable once made, so the
// draws (and so every case a seed gives) are the same, and sharing them
// between goroutines is safe. Only Draw them: SliceOf and String would name
// them, and a named generator labels its draws, which steers how rapid
// shrinks (golden/mutants.txt holds shrunk counterexamples).
var (
	smallRate     = rapid.Int64Range(1, 6)
	smallWindow   = rapid.OneOf(rapid.Int64Range(1, 40), rapid.SampledFrom([]int64{1000, algos.Second}))
	smallBurst    = rapid.Int64Range(1, 8)
	arrivalCount  = rapid.IntRange(0, 64)
	gapKind       = rapid.IntRange(0, 15)
	someIntervals = rapid.Int64Range(1, 3)
	idleSpell     = rapid.Int64Range(0, 24*Hour)
	stepKind      = rapid.IntRange(0, 5)
	nudges        = rapid.Int64Range(-1, 1)
)

// SmallLimits draws limits small enough that every edge gets hit: 1 to 6
// requests per 1 to 40 µs (now and then per 1 ms or 1 s), bursts of 1 to 8.
// Rates above the window give emission intervals below 1 µs, and most pairs
// give fractional ones.
func SmallLimits() *rapid.Generator[algos.Limit] {
	return rapid.Custom(func(t *rapid.T) algos.Limit {
		rate := smallRate.Draw(t, "rate")
		window := smallWindow.Draw(t, "window")
		burst := smallBurst.Draw(t, "burst")
		return algos.MustLimit(rate, window, burst)
	})
}

// Arrivals draws the times one node with a true clock calls at: sorted,
// starting near 0 or anywhere up to MaxTime/2, mixing calls at the same µs
// (bursts), 1 µs gaps, gaps of about W and about k·W/L, jumps to just
// before, onto and just after the next aligned window edge, and idle spells
// of an hour to a day. It shrinks towards fewer calls, all at one instant.
// Being sorted, they can be played on a store-clock limiter, whose store's
// clock never goes back.
func Arrivals(l algos.Limit) *rapid.Generator[[]int64] {
	return rapid.Custom(func(t *rapid.T) []int64 {
		now := rapid.OneOf(rapid.Int64Range(0, 3*l.Window), rapid.Int64Range(0, algos.MaxTime/2)).Draw(t, "start")
		n := arrivalCount.Draw(t, "n")
		times := make([]int64, 0, n)
		for range n {
			now = min(algos.MaxTime, now+gap(t, l, now))
			times = append(times, now)
		}
		return times
	})
}

// gap draws the wait before the next call (never negative).
func gap(t *rapid.T, l algos.Limit, now int64) int64 {
	w := l.Window
	var g int64
	switch gapKind.Draw(t, "kind") {
	case 0, 1, 2, 3, 4, 5:
		g = 0
	case 6:
		g = 1
	case 7, 8:
		g = rapid.Int64Range(0, 2*w).Draw(t, "small")
	case 9, 10:
		g = w + nudge(t)
	case 11:
		g = nextEdge(now, w) - now + nudge(t)
	case 12, 13, 14:
		g = someIntervals.Draw(t, "intervals")*interval(l) + nudge(t)
	default:
		g = Hour + idleSpell.Draw(t, "idle")
	}
	return max(0, g)
}

// stepBack draws how far a node's clock steps back from now: 1 µs, about a
// window, to about the start of the current aligned window (so the step
// often crosses an edge), about k·W/L, anything up to 3·W, or an hour. It
// is at least 1 unless now is 0.
func stepBack(t *rapid.T, l algos.Limit, now int64) int64 {
	w := l.Window
	var s int64
	switch stepKind.Draw(t, "step kind") {
	case 0:
		s = 1
	case 1:
		s = w + nudge(t)
	case 2:
		s = now - algos.FloorDiv(now, w)*w + nudge(t)
	case 3:
		s = someIntervals.Draw(t, "intervals")*interval(l) + nudge(t)
	case 4:
		s = rapid.Int64Range(1, 3*w).Draw(t, "step")
	default:
		s = Hour
	}
	return min(now, max(1, s))
}

func nudge(t *rapid.T) int64 { return nudges.Draw(t, "nudge") }

// interval is W/L rounded up: the emission interval in whole µs.
func interval(l algos.Limit) int64 { return (l.Window + l.Rate - 1) / l.Rate }

func nextEdge(now, w int64) int64 { return (algos.FloorDiv(now, w) + 1) * w }
