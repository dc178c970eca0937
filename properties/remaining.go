package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// RemainingNeverNegative claims that on one node with a true clock every
// decision has remaining, retry-after and reset of at least 0, that an
// admit has retry-after 0, and that a denial has remaining 0 and a positive
// retry-after.
func RemainingNeverNegative(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, times := c.drawFlooded(t, spec)
		l := r.l
		calls := r.replay(r.open(), 0, times, nil)
		for i, c := range calls {
			if msg := badDecision(c.d); msg != "" {
				t.Fatalf("%s under %v: %s%s", spec.Name, l, msg, trace(calls[:i+1]))
			}
		}
	}
}

// ResetNotPastIdle claims that on one node with a true clock no Reset is
// longer than any key of the promise needs to become idle, left alone
// (algos.Promise.LongestIdle): a client told to come back then for a
// fresh burst is not made to wait for nothing. It holds every limiter
// whose promise is one of the four built in and which is not
// Conservative (a limiter that refuses more than its promise asks may be
// idle later); Properties leaves it out for the others.
func ResetNotPastIdle(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, times := c.drawFlooded(t, spec)
		l := r.l
		idle, why, ok := spec.Promise(l).LongestIdle()
		if !ok {
			return // a promise of its own at this limit only: nothing known to hold it to (resetNotPastIdleApplies asked at another)
		}
		calls := r.replay(r.open(), 0, times, nil)
		for i, c := range calls {
			if c.d.Reset > idle {
				t.Fatalf("%s under %v: Reset %s, past the longest any key of its promise needs to become idle, %s (%s)%s",
					spec.Name, l, algos.FormatMicros(c.d.Reset), algos.FormatMicros(idle), why, trace(calls[:i+1]))
			}
		}
	}
}

// resetNotPastIdleApplies reports whether ResetNotPastIdle holds spec to
// anything: a limiter that is not Conservative, with a built-in promise.
func resetNotPastIdleApplies(spec limiter.Spec) bool {
	if spec.Conservative || spec.Promise == nil {
		return false
	}
	_, _, ok := spec.Promise(algos.MustLimit(1, algos.Second, 1)).LongestIdle()
	return ok
}

// badDecision says what is inconsistent in d, or "".
func badDecision(d algos.Decision) string {
	switch {
	case d.Remaining < 0:
		return "negative remaining"
	case d.RetryAfter < 0:
		return "negative retry-after"
	case d.Reset < 0:
		return "negative reset"
	case d.Allowed && d.RetryAfter != 0:
		return "an admit with a retry-after"
	case !d.Allowed && d.RetryAfter == 0:
		return "a denial without a retry-after"
	case !d.Allowed && d.Remaining != 0:
		return "a denial with remaining above 0"
	}
	return ""
}

// RemainingIsExact claims that Remaining means what it says on one node
// with a true clock: right after any decision, exactly Remaining more calls
// at the same instant are admitted, and the next is denied (so Remaining is
// never above what the promise allows at one instant). What follows each
// decision is read from the history itself while it goes on calling at the
// same instant (the same key, at the same time, is what a copy of the key
// would see), and asked of a fresh key that has seen the same calls where
// it moves on (sameInstant): one branch an instant, not one a decision,
// whose replays would cost the square of a long history's length.
func RemainingIsExact(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, n, h := c.drawHistory(t, spec)
		l := r.l
		// Up to the first decision that claims too much.
		end := 0
		for end < len(h.calls) && h.calls[end].d.Remaining <= n {
			end++
		}
		got := sameInstant(r, h, end)
		for i, c := range h.calls {
			if c.d.Remaining > n {
				t.Fatalf("%s under %v: remaining %d, more than the promise allows at one instant (%d)%s", spec.Name, l, c.d.Remaining, n, trace(h.calls[:i+1]))
			}
			if got[i] != c.d.Remaining {
				t.Fatalf("%s under %v: remaining %d, but %d more were admitted at the same instant%s", spec.Name, l, c.d.Remaining, got[i], trace(h.calls[:i+1]))
			}
		}
		h.failed(r)
	}
}

// drawHistory starts a case as the properties that judge what follows each
// decision of one history do: a drawn case (draw), what its promise allows
// at one instant (instant), and key 0's history over its arrivals.
func (c config) drawHistory(t *rapid.T, spec limiter.Spec) (run, int64, history) {
	r, times := c.draw(t, spec)
	return r, c.instant(t, spec, r.l), r.replayHistory(times)
}

// sameInstant is, for each of the history's first end decisions, how many
// calls at its instant the key admits right after it before the first
// denial, counting to at most its Remaining+1: what a branch after each
// decision (limit Remaining+1) would say. Within an instant the history is
// itself such a branch for as long as it calls there: after decision i,
// the admits up to the instant's next denial; if the instant has none after
// i, those admits and then what a branch after the instant's last call
// admits (one branch an instant, asked for as many as any decision before
// it needs).
func sameInstant(r run, h history, end int) []int64 {
	type instant struct{ first, last, branch int } // branch: -1 for none
	var instants []instant
	var bs []branch
	for first := 0; first < end; {
		last := first
		for last+1 < len(h.calls) && h.calls[last+1].t == h.calls[first].t {
			last++
		}
		in := instant{first, last, -1}
		need, denied := int64(1), false // a denial after the decision, at the instant
		for i := last; i >= first; i-- {
			if i < end && !denied {
				need = max(need, h.calls[i].d.Remaining+1-int64(last-i))
				in.branch = len(bs)
			}
			denied = denied || !h.calls[i].d.Allowed
		}
		if in.branch >= 0 {
			bs = append(bs, branch{upto: last, at: h.calls[last].t, limit: need})
		}
		instants = append(instants, in)
		first = last + 1
	}
	more := r.branches(h, bs)
	got := make([]int64, end)
	for _, in := range instants {
		next := -1 // the next denial at the instant after i
		for i := in.last; i >= in.first; i-- {
			if i < end {
				if next < 0 {
					got[i] = int64(in.last-i) + more[in.branch]
				} else {
					got[i] = int64(next - i - 1)
				}
				got[i] = min(got[i], h.calls[i].d.Remaining+1)
			}
			if !h.calls[i].d.Allowed {
				next = i
			}
		}
	}
	return got
}

// ResetReachesIdle claims that Reset is honest: at now+Reset, with no other
// traffic, the key grants a full burst from idle again (as many admits at
// one instant as the promise allows). A negative Reset, which points into
// the past, breaks it. What follows a decision is asked of a fresh key that
// has seen the same calls: after every decision of a history of up to 64
// calls, and after those at the edges of each instant of a longer one (see
// edges), whose branches would otherwise cost the square of its length.
func ResetReachesIdle(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, n, h := c.drawHistory(t, spec)
		l := r.l
		keep := edges(h.calls)
		var bs []branch
		for i, c := range h.calls {
			if c.d.Reset < 0 {
				break
			}
			if keep[i] {
				bs = append(bs, branch{upto: i, at: c.t + c.d.Reset, limit: n + 1})
			}
		}
		got := r.branches(h, bs)
		for i, c := range h.calls {
			if c.d.Reset < 0 {
				t.Fatalf("%s under %v: negative reset %d, a time before the call%s", spec.Name, l, c.d.Reset, trace(h.calls[:i+1]))
			}
			if !keep[i] {
				continue
			}
			if at := c.t + c.d.Reset; got[0] != n {
				t.Fatalf("%s under %v: at %d, reset %d later, %d admits at one instant, want the full %d%s", spec.Name, l, at, c.d.Reset, got[0], n, trace(h.calls[:i+1]))
			}
			got = got[1:]
		}
		h.failed(r)
	}
}
