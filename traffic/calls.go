package traffic

import (
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// DifferentialCalls returns n times (µs) at which to call one key under lim,
// starting at start: the calls on which redis/lua's Differential compares a
// script with its Go twin. The same arguments always give the
// same times.
//
// The calls come in episodes sized from the limit, so that every limit,
// from 1 to 10,000 per window and beyond, is driven into denial and an error
// that shows only when a count reaches the limit shows at 100 per second as
// it does at 3. With m = max(Rate, Burst) plus 2 to 5:
//
//   - a burst: m calls within a span of at most 50 µs and under half the
//     time one request takes to refill (W/L/2), so that no bucket or window
//     lets them all through;
//   - an edge: m calls ending exactly at the last µs of an aligned window
//     (k·W − 1) and m calls starting exactly at the first µs of the next
//     (k·W), each within such a span;
//   - an idle: a wait of just over (every fourth idle, just under) one of
//     the times a key takes to become idle, in turn one window, two windows
//     and the time to refill a bucket from empty (⌈Burst·W/L⌉), then a
//     burst;
//   - a steady run: m/2 + 10 calls spaced between half and 1.1 times W/L
//     (about 1.25 times the rate), 4% in the same µs as the call before, 4%
//     exactly one window after one of the last 16 calls when that is not
//     before the latest (the sliding log's boundary), and 15% of the rest
//     told a time up to 60 ms behind, as from a node whose clock is behind
//     (never below 0);
//   - a skewed burst: a burst in which a quarter of the calls are told a
//     time up to 60 ms behind, so that clocks behind meet state written
//     ahead of them, as they do at a high rate. The times are therefore not
//     sorted.
//
// The first five episodes are one of each, in that order;
// MinDifferentialCalls(lim) calls cover them. The rest are drawn at random.
// Only steady runs and skewed bursts have calls told behind: a token bucket
// refills a clock's step back a second time, so a step inside a burst would
// keep it from denying.
//
// It is an error for lim to be invalid, start or n to be negative, or a time
// to pass algos.MaxTime: start earlier.
func DifferentialCalls(seed uint64, lim algos.Limit, start int64, n int) ([]int64, error) {
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("traffic: differential calls: %w", err)
	}
	if start < 0 || start > algos.MaxTime {
		return nil, fmt.Errorf("traffic: differential calls: start %d µs is not within 0 and algos.MaxTime", start)
	}
	if n < 0 {
		return nil, fmt.Errorf("traffic: differential calls: %d calls", n)
	}
	g := newCallGen(seed, lim, start, n)
	episodes := []func(){g.burst, g.edge, g.idle, g.steady, g.skewed}
	for i := 0; !g.done(); i++ {
		if i < len(episodes) {
			episodes[i]()
		} else {
			episodes[g.intN(len(episodes))]()
		}
	}
	if g.err != nil {
		return nil, g.err
	}
	return g.out, nil
}

// MinDifferentialCalls is how many calls DifferentialCalls takes under lim
// to run its first five episodes, one of each kind: about five and a half
// times the larger of the limit's rate and burst. Fewer calls stop partway
// through them (the first burst, into denial, comes first).
func MinDifferentialCalls(lim algos.Limit) int {
	m := max(lim.Rate, lim.Burst)
	return int(5*(m+5) + m/2 + 10) // a burst, an edge's two, an idle's burst, a steady run, a skewed burst
}

// callGen builds DifferentialCalls' times, one episode at a time.
type callGen struct {
	rng   *record.Stream
	lim   algos.Limit
	gap   int64 // W/L: the spacing of calls at exactly the rate
	span  int64 // the longest span of a burst
	m     int64 // max(Rate, Burst): a burst is a few more
	truth int64 // the true time of the latest call; told times may be behind
	// recent are the last 16 told times, for calls exactly one window later.
	recent []int64
	out    []int64
	n      int
	idles  int // how many idles so far, to take their waits in turn
	err    error
}

func newCallGen(seed uint64, lim algos.Limit, start int64, n int) *callGen {
	gap := lim.Window / lim.Rate
	return &callGen{
		rng:   newRand(seed, purposeDifferentialCalls),
		lim:   lim,
		gap:   gap,
		span:  min(50, gap/2),
		m:     max(lim.Rate, lim.Burst),
		truth: start,
		out:   make([]int64, 0, n),
		n:     n,
	}
}

// below is uniform in [0, n), intN the same for an int: drawn as
// math/rand/v2's Int64N and IntN drew them when the calls were first made.
func (g *callGen) below(n int64) int64 { return uniformBelow(g.rng, n) }
func (g *callGen) intN(n int) int      { return int(uniformBelow(g.rng, int64(n))) }

func (g *callGen) done() bool { return g.err != nil || len(g.out) >= g.n }

// call adds a call at true time t (never before the latest), told a time
// up to 60 ms behind it with probability behind (in %).
func (g *callGen) call(t int64, behind int) {
	if g.done() {
		return
	}
	t = max(t, g.truth)
	if t > algos.MaxTime {
		g.err = fmt.Errorf("traffic: differential calls: call %d of %d reaches past algos.MaxTime; start earlier", len(g.out), g.n)
		return
	}
	g.truth = t
	now := t
	if behind > 0 && g.intN(100) < behind {
		now = max(0, t-g.below(60_001))
	}
	g.out = append(g.out, now)
	if g.recent = append(g.recent, now); len(g.recent) > 16 {
		g.recent = g.recent[1:]
	}
}

// size is a burst's length: the larger of rate and burst, plus 2 to 5.
func (g *callGen) size() int { return int(g.m) + 2 + g.intN(4) }

// spread is k sorted offsets within the burst span, no more than the calls
// still to make.
func (g *callGen) spread(k int) []int64 {
	offs := make([]int64, min(k, g.n-len(g.out)))
	for i := range offs {
		offs[i] = g.below(g.span + 1)
	}
	slices.Sort(offs)
	return offs
}

// burst sends a burst a little after the latest call.
func (g *callGen) burst() { g.burstAt(g.truth + g.below(g.gap+1)) }

func (g *callGen) burstAt(at int64) {
	for _, off := range g.spread(g.size()) {
		g.call(at+off, 0)
	}
}

// skewed is a burst with a quarter of its calls told a time behind.
func (g *callGen) skewed() {
	at := g.truth + g.below(g.gap+1)
	for _, off := range g.spread(g.size()) {
		g.call(at+off, 25)
	}
}

// edge fills the end of the next aligned window up to its last µs, then
// the start of the window after it from its first µs.
func (g *callGen) edge() {
	w := g.lim.Window
	e := (g.truth/w + 1) * w
	before := g.spread(g.size())
	for i, off := range before {
		t := e - 1 - g.span + off
		if i == len(before)-1 {
			t = e - 1
		}
		g.call(t, 0)
	}
	for i, off := range g.spread(g.size()) {
		if i == 0 {
			off = 0
		}
		g.call(e+off, 0)
	}
}

// idle waits just over (or just under) the time a key takes to become idle
// under one of the algorithms, then bursts.
func (g *callGen) idle() {
	w := g.lim.Window
	refill := (g.lim.Capacity() + g.lim.Refill - 1) / g.lim.Refill // ⌈Burst·W/L⌉ µs
	h := []int64{w, 2 * w, refill}[g.idles%3]
	wait := h + 1 + g.below(g.span+1)
	if g.idles%4 == 3 { // under each of the three in turn, over twelve idles
		wait = max(0, h-1-g.below(g.span+1))
	}
	g.idles++
	g.burstAt(g.truth + wait)
}

// steady sends calls at about 1.25 times the rate, with the old mix: the
// same µs, exactly one window after a recent call, and clocks behind.
func (g *callGen) steady() {
	w := g.lim.Window
	for range g.m/2 + 10 {
		t := g.truth
		exact := false
		switch p := g.intN(100); {
		case p < 4 && len(g.recent) > 0:
			t = max(t, g.recent[g.intN(len(g.recent))]+w)
			exact = true
		case p < 8: // the same µs
		default:
			t += g.gap/2 + g.below(g.gap*6/10+2)
		}
		behind := 15
		if exact {
			behind = 0
		}
		g.call(t, behind)
	}
}

// CallSequence is a seeded stream of call times on one key under a limit,
// each drawn after the decision of the call before it: the calls on which
// the adapters compare a Go library with its algos twin. A quarter come at
// the same instant as the one before, the rest after gaps of up to a
// quarter, a half or two emission intervals T = W/L, and rarely (2%) after
// an idle of up to a full refill: on average about twice the rate for a
// burst of 20, more for smaller ones. With boundary, half the calls after
// a denial come at its RetryAfter (or 1 µs before), and a tenth of the
// others at the previous Reset (or 1 µs before), so that calls land on the
// instants where an exact limiter changes its answer, which is where a
// library's float rounding shows. The same seed, limit and decisions
// always give the same times.
type CallSequence struct {
	rng      *record.Stream
	l        algos.Limit
	boundary bool
	now      int64
}

// NewCallSequence is the sequence seed draws for l, starting at 0. It is an
// error for l to be invalid.
func NewCallSequence(seed uint64, l algos.Limit, boundary bool) (*CallSequence, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("traffic: call sequence: %w", err)
	}
	return &CallSequence{rng: newRand(seed, purposeCallSequence), l: l, boundary: boundary}, nil
}

// Next is the time of the next call, given the decision of the one before
// it (first for the first call, which has none).
func (q *CallSequence) Next(prev algos.Decision, first bool) int64 {
	T := max(1, q.l.Window/q.l.Rate)
	if q.boundary && !first {
		switch {
		case prev.RetryAfter > 0 && q.below(2) == 0:
			q.now += prev.RetryAfter - q.below(2) // at it, or 1 µs before
			return q.now
		case q.below(10) == 0:
			q.now += max(0, prev.Reset-q.below(2))
			return q.now
		}
	}
	switch n := q.below(100); {
	case n < 25:
	case n < 50:
		q.now += q.below(T/4 + 1)
	case n < 75:
		q.now += q.below(T/2 + 1)
	case n < 98:
		q.now += q.below(2*T + 1)
	default:
		q.now += q.below(q.l.Burst*T + 1)
	}
	return q.now
}

// below is uniform in [0, n), drawn as math/rand/v2's Int64N drew the
// adapters' calls before they moved here.
func (q *CallSequence) below(n int64) int64 { return uniformBelow(q.rng, n) }
