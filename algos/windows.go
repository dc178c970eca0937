package algos

import "github.com/overshoot-go/overshoot/internal/arith"

// FixedWindow counts admits in the aligned window floor(now/W) and admits
// while the count is below L. It keeps one window per key and starts a new
// count whenever the window index differs from the stored one, so a node
// whose clock is behind at a window edge restarts the previous window.
//
// Stored: WindowState, its Index the window's, Count the admits in it
// (Prev is 0).
var FixedWindow = Algorithm{
	Name:       "fixed-window",
	Decide:     decideFixedWindow,
	Promise:    AlignedWindowPromise,
	StateDoc:   "window index, count",
	StateInts:  two,
	ExactRetry: true,
}

func decideFixedWindow(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset := fixedWindowFields(s, now, &l)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset}
}

func fixedWindowFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	idx := FloorDiv(now, l.Window)
	win := s.Window()
	if !s.Set || win.Index != idx {
		win = WindowState{Index: idx}
		*s = win.State()
	}
	end := (idx+1)*l.Window - now
	count, allowed, retry := countInWindow(win.Count, end, l)
	s.SetWindow(WindowState{Index: idx, Count: count})
	return allowed, l.Rate - count, retry, end
}

// countInWindow admits one more to a window holding count admits that ends
// in end µs, while the count is below L, and returns the new count, whether
// it admitted, and the Retry-After: both fixed windows, aligned and
// anchored, decide this way (Remaining L - count, Reset end).
func countInWindow(count, end int64, l *Limit) (int64, bool, int64) {
	if count < l.Rate {
		return count + 1, true, 0
	}
	return count, false, end
}

// SlidingCounter keeps the current and previous aligned counts and admits
// while the estimate prev·(W-elapsed)/W + cur is below L. The comparison is
// kept in integers (prev·(W-elapsed) + cur·W < L·W), so Go and Lua agree.
//
// Stored: WindowState, its Index the current window's, Count the admits
// in it, Prev the admits in the window before.
var SlidingCounter = Algorithm{
	Name:       "sliding-counter",
	Decide:     decideSlidingCounter,
	Promise:    AlignedWindowPromise,
	StateDoc:   "window index, current count, previous count",
	StateInts:  func(Limit) int64 { return 3 },
	ExactRetry: true,
	// Its estimate counts part of the previous window, which the aligned
	// promise does not: it refuses what that promise would allow.
	Conservative: true,
}

func decideSlidingCounter(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset := slidingCounterFields(s, now, &l)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset}
}

func slidingCounterFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	w, limit := l.Window, l.Rate
	idx := FloorDiv(now, w)
	win := s.Window()
	if !s.Set || win.Index != idx {
		prev := int64(0)
		if s.Set && win.Index == idx-1 { // the stored window is the previous one now
			prev = win.Count
		}
		win = WindowState{Index: idx, Prev: prev}
		*s = win.State()
	}
	cur, prev := win.Count, win.Prev
	elapsed := now - idx*w
	weighted := prev * (w - elapsed) // the previous window's share, times W
	allowed, retry := false, int64(0)
	if weighted+cur*w < limit*w {
		cur++
		allowed = true
	} else {
		retry = slidingCounterRetry(cur, prev, elapsed, l)
	}
	s.SetWindow(WindowState{Index: idx, Count: cur, Prev: prev})
	reset := int64(0)
	switch {
	case cur > 0:
		reset = 2*w - elapsed
	case prev > 0:
		reset = w - elapsed
	}
	return allowed, max(0, ceilDiv(limit*w-weighted, w)-cur), retry, reset
}

// slidingCounterRetry is the exact wait until prev·(W-e) + cur·W < L·W,
// first later in this window, else in the next one (where cur becomes prev).
func slidingCounterRetry(cur, prev, elapsed int64, l *Limit) int64 {
	w, limit := l.Window, l.Rate
	if cur < limit && prev > 0 {
		// the largest x with prev·x < (L-cur)·W; admitted once W-e <= x
		x := ((limit-cur)*w - 1) / prev
		if e := w - x; e < w {
			return e - elapsed
		}
	}
	e := int64(0)
	if cur > 0 {
		e = max(0, w-(limit*w-1)/cur)
	}
	return w - elapsed + e
}

// SlidingLog stores every admitted time within the last W and admits while
// there are fewer than L. Like a Redis sorted set, it drops times at or
// before now-W, counts the rest (even those a clock ahead wrote in the
// future), and inserts now in order.
//
// Stored: Log, the admitted times, sorted; live from Head.
var SlidingLog = Algorithm{
	Name:       "sliding-log",
	Decide:     decideSlidingLog,
	Promise:    SlidingWindowPromise,
	StateDoc:   "every admitted time within the window",
	StateInts:  func(l Limit) int64 { return l.Rate },
	ExactRetry: true,
}

func decideSlidingLog(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset := slidingLogFields(s, now, &l)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset}
}

func slidingLogFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	if !s.Set || s.Log == nil {
		*s = State{Set: true, Log: make([]int64, 0, 16)}
	}
	for s.Head < len(s.Log) && s.Log[s.Head] <= now-l.Window {
		s.Head++
	}
	if s.Head == len(s.Log) {
		s.Log, s.Head = s.Log[:0], 0
	}
	live := int64(len(s.Log) - s.Head)
	allowed, retry := false, int64(0)
	if live < l.Rate {
		insertSorted(s, now)
		live++
		allowed = true
	} else {
		retry = s.Log[len(s.Log)-int(l.Rate)] + l.Window - now
	}
	reset := int64(0)
	if live > 0 {
		reset = max(0, s.Log[len(s.Log)-1]+l.Window-now)
	}
	return allowed, max(0, l.Rate-live), retry, reset
}

// insertSorted adds t after every entry <= t. Entries almost always arrive
// in order, so the search starts at the end; a full buffer whose front half
// is dead is compacted instead of grown, so the log does not allocate once
// it has reached its working size.
func insertSorted(s *State, t int64) { s.Log, s.Head = arith.InsertSorted(s.Log, s.Head, t) }

// FirstHitWindow is the fixed window many Redis limiters ship: INCR the
// key, and EXPIRE it on the first hit, so that each window starts at the
// key's first request after the previous window ended instead of at a
// multiple of W. It admits while the count is below L, which keeps
// AnchoredWindowPromise; a client that starts the window itself and bursts
// just before and just after its end gets 2L-1 admits within a few ms. It
// is not one of the six (All): it stands for what is shipped, beside them.
//
// Stored: FirstHitState, its Start the window's (its first hit), Count the
// admits in it. The key expires when its window ends (KeyTTL = Reset), as
// the EXPIRE does. A node whose clock is behind the window's start counts
// in that window.
var FirstHitWindow = Algorithm{
	Name:       "first-hit-window",
	Decide:     decideFirstHitWindow,
	Promise:    AnchoredWindowPromise,
	StateDoc:   "window start (the first hit), count",
	StateInts:  two,
	ExactRetry: true,
	KeyTTL:     func(d Decision, _ Limit) int64 { return d.Reset },
}

func decideFirstHitWindow(s *State, now int64, l Limit) Decision {
	allowed, remaining, retry, reset := firstHitWindowFields(s, now, &l)
	return Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retry, Reset: reset}
}

func firstHitWindowFields(s *State, now int64, l *Limit) (bool, int64, int64, int64) {
	win := s.FirstHit()
	if !s.Set || now-win.Start >= l.Window {
		win = FirstHitState{Start: now}
		*s = win.State()
	}
	end := win.Start + l.Window - now
	count, allowed, retry := countInWindow(win.Count, end, l)
	s.SetFirstHit(FirstHitState{Start: win.Start, Count: count})
	return allowed, l.Rate - count, retry, end
}
