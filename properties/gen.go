package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// Hour is an hour in µs: the idle spells are at least this long.
const Hour = 3600 * algos.Second

// MaxBurst is the most calls a step of Arrivals draws at its instant, and
// MaxArrivals the most calls it draws in all. They bound what a case costs
// at a large limit: the flood Arrivals draws at the limit under test,
// max(L, B)+2 calls, is 10,002 calls at 10,000 a second, and the
// properties that branch replay a history once per branch. So above a
// max(L, B) of MaxBurst-2 (1,022) one step's burst no longer outnumbers the
// limit, and such a limit is flooded past its burst only where steps with
// no wait between them add up (at most MaxArrivals calls), or not at all.
const (
	MaxBurst    = 1024
	MaxArrivals = 4096
)

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
	stepCount     = rapid.IntRange(0, maxSteps)
	stepShape     = rapid.IntRange(0, 255)
	shortOfFlood  = rapid.Int64Range(0, 2)
	someIntervals = rapid.Int64Range(1, 3)
	idleSpell     = rapid.Int64Range(0, 24*Hour)
	stepKind      = rapid.IntRange(0, 5)
	nudges        = rapid.Int64Range(-1, 1)
)

// maxSteps is the most steps Arrivals draws: 14 on average, over about 10
// instants (some steps wait 0), and 28 calls at a small limit.
const maxSteps = 40

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

// Arrivals draws the times one node with a true clock calls at, sorted:
// from a start near 0 or anywhere up to MaxTime/2, up to 40 steps, each a
// wait and then a burst of calls at one instant.
//
// The bursts are sized by the limit under test, l: one call (most often),
// any number up to the flood, max(L, B)+2 calls, or up to two short of it,
// and the flood itself, in about one step in eleven; so a case floods the
// key past both its burst and its rate, and is denied, with real
// probability at every limit (half the cases do, at 10 a second with a
// burst of 20 as at 100 with 150). The waits mix 0 (another burst at the same instant), 1 µs,
// up to 2·W, about W, onto the next aligned window edge, about k·W/L, up
// to and about DefaultMaxWait(l) (the longest a key of the six takes to
// become idle, where a key dropped too early shows: just short of it the
// state still counts, and a key that is gone hands out a fresh burst) and
// idle spells of an hour to a day; so a case spans several windows and the
// key's idle time, and sees a denied key recover.
//
// A case has at most min(MaxArrivals, 64+4·flood) calls, and a step's
// burst at most MaxBurst: see MaxBurst for what that leaves out at a large
// limit. Each step is one draw, so rapid shrinks a case by removing whole
// steps, as well as by lowering each value: towards fewer steps, single
// calls and no wait. Being sorted, the times can be played on a
// store-clock limiter, whose store's clock never goes back.
func Arrivals(l algos.Limit) *rapid.Generator[[]int64] {
	flood := floodSize(l)
	most := int(min(MaxArrivals, 64+4*flood))
	idle := DefaultMaxWait(l)
	steps := stepsOf(l, flood, idle)
	return rapid.Custom(func(t *rapid.T) []int64 {
		now := rapid.OneOf(rapid.Int64Range(0, 3*l.Window), rapid.Int64Range(0, algos.MaxTime/2)).Draw(t, "start")
		n := stepCount.Draw(t, "steps")
		var times []int64
		for range n {
			s := steps.Draw(t, "step")
			now = min(algos.MaxTime, now+s.wait(l, now, idle))
			for range min(s.size, int64(most-len(times))) {
				times = append(times, now)
			}
			if len(times) == most {
				break
			}
		}
		return times
	})
}

// floodSize is max(L, B)+2, at most MaxBurst: a burst that outnumbers
// whatever the key admits at one instant (Burst for a bucket, Rate for a
// window) by two, so that a flood gets at least two denials.
func floodSize(l algos.Limit) int64 {
	return min(MaxBurst, max(l.Rate, l.Burst)+2)
}

// step is one step of Arrivals: how long it waits, given the time it
// waits from and the limit, and the size of its burst.
type step struct {
	kind  int   // of wait
	value int64 // the value the kind of wait draws, if any
	size  int64
}

// stepsOf draws steps under l, whose flood is flood and idle time idle.
// A step draws only the values its kinds use (a case draws hundreds of
// values, and they are most of what a case of a limiter in memory costs):
// rapid, shrinking a kind, may read the values after it as another kind's,
// but it also removes a value on its own, and a whole step.
func stepsOf(l algos.Limit, flood, idle int64) *rapid.Generator[step] {
	small, short, some := rapid.Int64Range(0, 2*l.Window), rapid.Int64Range(0, idle), rapid.Int64Range(1, flood)
	return rapid.Custom(func(t *rapid.T) step {
		// One draw for both kinds: the wait's in the low 4 bits, the
		// burst's above, so that both shrink towards 0, no wait and one
		// call.
		shape := stepShape.Draw(t, "shape")
		s := step{kind: shape % 16}
		switch s.kind {
		case 3, 4:
			s.value = small.Draw(t, "small")
		case 5, 6, 7, 13, 14:
			s.value = nudges.Draw(t, "nudge")
		case 8, 9, 10:
			s.value = someIntervals.Draw(t, "intervals")*interval(l) + nudges.Draw(t, "nudge")
		case 11, 12:
			s.value = short.Draw(t, "short of idle")
		case 15:
			s.value = idleSpell.Draw(t, "idle")
		}
		switch shape / 16 {
		case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10:
			s.size = 1
		case 11, 12:
			s.size = some.Draw(t, "size")
		case 13:
			s.size = max(1, flood-shortOfFlood.Draw(t, "short of the flood"))
		default:
			s.size = flood
		}
		return s
	})
}

// wait is how long the step waits from now (never negative): idle is
// DefaultMaxWait(l).
func (s step) wait(l algos.Limit, now, idle int64) int64 {
	w := l.Window
	var g int64
	switch s.kind {
	case 0, 1:
		g = 0
	case 2:
		g = 1
	case 3, 4:
		g = s.value // up to 2·W
	case 5, 6:
		g = w + s.value
	case 7:
		g = nextEdge(now, w) - now + s.value
	case 8, 9, 10:
		g = s.value // about k·W/L
	case 11, 12:
		g = idle - s.value
	case 13, 14:
		g = idle + s.value
	default:
		g = Hour + s.value
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
