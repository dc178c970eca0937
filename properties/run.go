package properties

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// call is one decision as a counterexample shows it.
type call struct {
	t int64
	d algos.Decision
}

func (c call) String() string {
	if c.d.Allowed {
		return fmt.Sprintf("%d: admit (remaining %d, reset %d)", c.t, c.d.Remaining, c.d.Reset)
	}
	return fmt.Sprintf("%d: deny (retry-after %d, reset %d)", c.t, c.d.RetryAfter, c.d.Reset)
}

// trace prints the last calls, newest last, for a failure message.
func trace(calls []call) string {
	const keep = 12
	var b strings.Builder
	if len(calls) > keep {
		fmt.Fprintf(&b, "\n  ... %d earlier calls", len(calls)-keep)
		calls = calls[len(calls)-keep:]
	}
	for _, c := range calls {
		b.WriteString("\n  ")
		b.WriteString(c.String())
	}
	return b.String()
}

// run is one case of a property: the spec under test, the limit drawn, and
// the case's rapid.T. Every limiter it opens is closed when the case ends,
// and every failure to open or to answer fails the case: an error is never
// taken for a denial.
type run struct {
	t    *rapid.T
	spec limiter.Spec
	l    algos.Limit
}

// newRun starts a case of spec under l, failing it at once if spec is
// incomplete (no name, clock, promise or New).
func newRun(t *rapid.T, spec limiter.Spec, l algos.Limit) run {
	if err := spec.Validate(); err != nil {
		t.Fatalf("properties: %v", err)
	}
	return run{t: t, spec: spec, l: l}
}

// draw starts a case of spec as most properties do: a limit, arrivals
// under it, and the run of spec under that limit. The draws keep their
// order and labels, "limit" then "arrivals": a seed gives the same case,
// and the same shrunk counterexample (golden/mutants.txt holds some), as
// when each property drew them itself.
func (c config) draw(t *rapid.T, spec limiter.Spec) (run, []int64) {
	l := c.limits.Draw(t, "limit")
	times := Arrivals(l).Draw(t, "arrivals")
	return newRun(t, spec, l), times
}

// drawFlooded is draw with the arrivals ending in a flood of one call more
// at one instant than the promise allows there, so that a case always has
// a denial.
func (c config) drawFlooded(t *rapid.T, spec limiter.Spec) (run, []int64) {
	r, times := c.draw(t, spec)
	return r, withFlood(times, c.instant(t, spec, r.l)+1)
}

// who names the spec and the limit in a failure message.
func (r run) who() string { return fmt.Sprintf("%s under %v", r.spec.Name, r.l) }

// open makes a fresh limiter, with every key absent, and closes it when the
// case ends (a failure to close fails a case that has not failed already).
func (r run) open() limiter.Limiter {
	lim, err := r.spec.Open(r.l)
	if err != nil {
		r.t.Fatalf("%s: opening a fresh limiter failed: %v", r.who(), err)
	}
	r.t.Cleanup(func() {
		if err := limiter.Close(lim); err != nil && !r.t.Failed() {
			r.t.Fatalf("%s: closing the limiter failed: %v", r.who(), err)
		}
	})
	return lim
}

// try calls key of lim at now, turning a panic into an error.
func (r run) try(lim limiter.Limiter, key int, now int64) (algos.Decision, error) {
	return limiter.Allow(context.Background(), lim, key, now)
}

// callFailed fails the case for the call on key at now that answered err,
// showing the calls on that key before it.
func (r run) callFailed(key int, now int64, err error, before []call) {
	r.t.Fatalf("%s: the call on key %d at %d failed: %v%s", r.who(), key, now, err, trace(before))
}

// allow calls key of lim at now and fails the case if the call fails;
// before is the key's calls so far, shown with the error.
func (r run) allow(lim limiter.Limiter, key int, now int64, before []call) algos.Decision {
	d, err := r.try(lim, key, now)
	if err != nil {
		r.callFailed(key, now, err, before)
	}
	return d
}

// replayAll plays times on key 0 of a fresh limiter, and returns it, the
// calls, and the last time (0 for no arrivals), for a property that goes
// on from there.
func (r run) replayAll(times []int64) (lim limiter.Limiter, calls []call, last int64) {
	lim = r.open()
	calls = r.replay(lim, 0, times, nil)
	if len(times) > 0 {
		last = times[len(times)-1]
	}
	return lim, calls, last
}

// replay calls key of lim at each time, in order, calling visit (if not
// nil) after every decision, and returns the calls. A failed call fails the
// case.
func (r run) replay(lim limiter.Limiter, key int, times []int64, visit func(i int, d algos.Decision)) []call {
	calls := make([]call, 0, len(times))
	for i, now := range times {
		d := r.allow(lim, key, now, calls)
		calls = append(calls, call{now, d})
		if visit != nil {
			visit(i, d)
		}
	}
	return calls
}

// history is a case's calls on key 0 of a fresh limiter, up to the first
// call that failed, if one did: its error is kept, for failed to report once
// the decisions before it have been judged.
type history struct {
	calls []call
	err   error // the error of the call at time at, after the calls
	at    int64
}

// replayHistory calls key 0 of a fresh limiter at each time, in order, and
// stops at the first call that fails.
func (r run) replayHistory(times []int64) history {
	lim := r.open()
	h := history{calls: make([]call, 0, len(times))}
	for _, now := range times {
		d, err := r.try(lim, 0, now)
		if err != nil {
			h.err, h.at = err, now
			break
		}
		h.calls = append(h.calls, call{now, d})
	}
	return h
}

// failed fails the case if the history stopped at a failed call.
func (h history) failed(r run) {
	if h.err != nil {
		r.callFailed(0, h.at, h.err, h.calls)
	}
}

// admitsAt is how many calls at the one instant now key of lim admits
// before the first denial, counting to at most limit.
func (r run) admitsAt(lim limiter.Limiter, key int, now, limit int64, before []call) int64 {
	var n int64
	for n < limit && r.allow(lim, key, now, before).Allowed {
		n++
	}
	return n
}

// branch asks what a key would do from some point of a history: how many
// calls at the instant at it admits before the first denial, counting to
// at most limit, once it has seen the history's first upto+1 calls (what
// admitsAt would say of a copy of the key after call upto).
type branch struct {
	upto  int
	at    int64 // at or after the time of call upto
	limit int64
}

// branches answers each branch (how many it admits) without cloning a
// limiter, which cannot be done: it opens one fresh limiter and replays the
// history on a key of its own per branch (branch j on key j), all in the
// order of time, each branch's instant coming once the calls before it are
// made. The calls on that limiter never go back in time, so a store-clock
// limiter can answer them; a fresh key of the same limiter is a fresh state.
// Every replayed call must decide as the history did, or the case fails:
// the properties need a limiter whose keys are independent and whose
// decisions follow from the calls alone. bs must be in order of upto.
func (r run) branches(h history, bs []branch) []int64 {
	got := make([]int64, len(bs))
	if len(bs) == 0 {
		return got
	}
	for j, b := range bs {
		if b.upto < 0 || b.upto >= len(h.calls) || b.at < h.calls[b.upto].t || j > 0 && b.upto < bs[j-1].upto {
			panic(fmt.Sprintf("properties: branch %d (%+v) is not after its history", j, b))
		}
	}
	lim := r.open()
	order := make([]int, len(bs)) // the branches in order of their instants
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(bs[i].at, bs[j].at) })
	probe := func(j int) {
		b := bs[j]
		got[j] = r.admitsAt(lim, j, b.at, b.limit, h.calls[:b.upto+1])
	}
	next, live := 0, 0 // the next branch to probe; the first still replaying
	for k, c := range h.calls {
		for next < len(order) && bs[order[next]].at < c.t {
			probe(order[next])
			next++
		}
		for live < len(bs) && bs[live].upto < k {
			live++
		}
		if live == len(bs) {
			break
		}
		for j := live; j < len(bs); j++ {
			d := r.allow(lim, j, c.t, h.calls[:k])
			if d != c.d {
				r.t.Fatalf("%s: key %d of a fresh limiter, given the same calls as key 0 of another, decided %v where key 0 decided %v; the properties replay a history on fresh keys, so they need a limiter whose decisions follow from a key's own calls%s",
					r.who(), j, call{c.t, d}, c, trace(h.calls[:k+1]))
			}
		}
	}
	for ; next < len(order); next++ {
		probe(order[next])
	}
	return got
}

// allBranches is the longest history a property branches after every
// decision of (RetryAfterHonest, ResetReachesIdle). A branch replays the
// history up to its decision on a key of its own, so one after every
// decision of a long history costs the square of its length: a case at 100
// a second, with its floods of max(L, B)+2 calls, would take seconds. After
// a longer history they branch at the edges of each instant (edges).
const allBranches = 64

// edges reports which of calls a property that branches after decisions
// asks about: all of them in a history of at most allBranches calls; in a
// longer one, at each instant, the first and the last call, and each call
// next to one at the same instant that was decided the other way (the last
// admit and the first denial of a flood). The calls between them are the
// middle of a run of admits, or of denials, at one instant.
func edges(calls []call) []bool {
	keep := make([]bool, len(calls))
	for i, c := range calls {
		switch {
		case len(calls) <= allBranches,
			i == 0 || calls[i-1].t != c.t || calls[i-1].d.Allowed != c.d.Allowed,
			i == len(calls)-1 || calls[i+1].t != c.t || calls[i+1].d.Allowed != c.d.Allowed:
			keep[i] = true
		}
	}
	return keep
}

// instants remembers atOneInstant for each limit a property has drawn: a
// case asks it once, and searching the promise's checker for it every time
// was a tenth of what the properties cost. The limits drawn are few (a few
// thousand at most from SmallLimits), and spec.Promise is a function of the
// limit, so the answer for a limit never changes. It is safe for use by
// concurrent cases.
type instants struct {
	mu   sync.Mutex
	seen map[algos.Limit]int64
}

// instant is atOneInstant for spec.Promise(l), searched once per limit.
func (c config) instant(t *rapid.T, spec limiter.Spec, l algos.Limit) int64 {
	m := c.instants
	m.mu.Lock()
	n, ok := m.seen[l]
	m.mu.Unlock()
	if ok {
		return n
	}
	n = atOneInstant(t, spec.Promise(l), l.Burst, l.Rate)
	m.mu.Lock()
	if m.seen == nil {
		m.seen = map[algos.Limit]int64{}
	}
	m.seen[l] = n
	m.mu.Unlock()
	return n
}

// atOneInstant is the most admits the promise allows at one instant: Burst
// for the bucket promise, Rate for the window promises, found by asking the
// promise's own checker, so it holds for any Promise a user builds. The
// checker allows n admits at one instant for every n up to the answer and
// for none above it, so the answer is the one n it allows with n+1 denied:
// each guess (Burst and Rate, the answers of the built-in promises) is
// tried that way first, in two calls of the checker, and the search over
// all n is made only when no guess is it.
func atOneInstant(t *rapid.T, p algos.Promise, guesses ...int64) int64 {
	const most = 1 << 20
	ok := func(n int64) bool {
		times := make([]int64, n)
		return p.CheckAdmits(times) == nil
	}
	for _, g := range guesses {
		if g >= 1 && g <= most && ok(g) && !ok(g+1) {
			return g
		}
	}
	hi := int64(1)
	for ok(hi) {
		if hi >= most {
			t.Fatalf("promise %q allows more than %d admits at one instant; draw smaller limits", p.Text, most)
		}
		hi *= 2
	}
	lo := hi / 2 // ok(lo) unless hi is 1
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
