package fleet

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// MaxNodes is the largest fleet a CachedCounter (or an OwnerConfig) may
// describe. It keeps every count and every sync instant exact in int64
// arithmetic (a window's count is at most Nodes·Rate for calls in time
// order), and a key's views (one per node) small.
const MaxNodes = 1024

// maxCount is where the store's count stops growing. Calls in time order
// never get near it (a window's count is at most Nodes·Rate < 2^62); a
// caller whose clock jumps back and forth could otherwise add Rate per
// round without end.
const maxCount int64 = 1 << 62

// CachedCounter is the cached shared counter's shape of a fleet: Nodes
// gateway nodes behind a round-robin load balancer, each syncing with the
// shared store every Sync µs (0 is synchronous: every request reads and
// writes the store).
type CachedCounter struct {
	Nodes int
	Sync  int64
}

// Validate reports a fleet of no nodes or more than MaxNodes, or a sync
// interval that is negative or longer than algos.MaxTime.
func (c CachedCounter) Validate() error {
	switch {
	case c.Nodes < 1:
		return fmt.Errorf("fleet: a fleet needs at least 1 node, got %d", c.Nodes)
	case c.Nodes > MaxNodes:
		return fmt.Errorf("fleet: a fleet has at most %d nodes, got %d", MaxNodes, c.Nodes)
	case c.Sync < 0:
		return fmt.Errorf("fleet: the sync interval must not be negative, got %d µs", c.Sync)
	case c.Sync > algos.MaxTime:
		return fmt.Errorf("fleet: a sync interval of %d µs is longer than algos.MaxTime", c.Sync)
	}
	return nil
}

// Name is the fleet as reports print it: "cached-counter(5 nodes, sync
// 200ms)", or "cached-counter(1 node, synchronous)" for a Sync of 0. It
// does not validate c.
func (c CachedCounter) Name() string {
	nodes := fmt.Sprintf("%d nodes", c.Nodes)
	if c.Nodes == 1 {
		nodes = "1 node"
	}
	sync := "synchronous"
	if c.Sync != 0 {
		sync = "sync " + algos.FormatMicros(c.Sync)
	}
	return fmt.Sprintf("cached-counter(%s, %s)", nodes, sync)
}

// Offset is node's sync phase, node·Sync/Nodes µs (integer division): node
// syncs at k·Sync + Offset(node) for every integer k. It is 0 for a Sync
// of 0 and for a node outside the fleet.
func (c CachedCounter) Offset(node int) int64 {
	if c.Validate() != nil || node < 0 || node >= c.Nodes {
		return 0
	}
	return int64(node) * c.Sync / int64(c.Nodes) // < MaxNodes·MaxTime < 2^63
}

// Spec is the fleet as a limiter under test, or c's validation error: named
// by Name, on the caller's clock, promising algos.AlignedWindowPromise (what
// the fleet is meant to enforce, and breaks whenever Nodes > 1 and Sync >
// 0), making a fresh *Limiter per limit. ExactRetry is false: a denied node
// names the end of the window, but a retry goes to the next node of the
// round robin, whose cached count may well admit it sooner. Conservative is
// false: for calls in time order a node's G + D never exceeds what the
// fleet truly admitted in the window, so it refuses nothing the promise
// would allow.
func (c CachedCounter) Spec() (limiter.Spec, error) {
	return spec(c.Name(), c.Validate(), func(l algos.Limit) (limiter.Limiter, error) { return New(c, l) })
}

// spec is both fleets' Spec: the fleet named name, on the caller's clock,
// promising algos.AlignedWindowPromise, made by open for each limit; or
// invalid, the fleet's validation error, when it is not nil.
func spec(name string, invalid error, open func(algos.Limit) (limiter.Limiter, error)) (limiter.Spec, error) {
	if invalid != nil {
		return limiter.Spec{}, invalid
	}
	return limiter.Spec{Name: name, Clock: limiter.CallerClock, Promise: algos.AlignedWindowPromise, New: open}, nil
}

// view is one node's knowledge of one key.
type view struct {
	touched bool  // the node has handled the key
	win     int64 // the cached window
	g       int64 // the cached global count of win
	d       int64 // units admitted in win, not flushed
}

// record is what the store holds for one key (or an owner for one key).
type record struct {
	set        bool
	win, count int64
}

// countIn is r's count of window win: 0 when it holds another window, or
// none.
func (r record) countIn(win int64) int64 {
	if r.set && r.win == win {
		return r.count
	}
	return 0
}

// add adds n units of window win to r: it starts over in win if it holds
// an earlier window (or none), and drops them if it holds a later one. It
// reports whether it wrote a record that was not there (2 cells more).
func (r *record) add(win, n int64) (added bool) {
	switch {
	case !r.set:
		*r = record{set: true, win: win, count: n}
		return true
	case r.win < win:
		r.win, r.count = win, n
	case r.win == win:
		r.count = min(r.count+n, maxCount) // r.count ≤ 2^62, n ≤ Rate < 2^52
	}
	return false
}

// stored is r as Stored reports it: its window and count, and whether it
// holds one.
func (r record) stored() (window, count int64, ok bool) {
	if !r.set {
		return 0, 0, false
	}
	return r.win, r.count, true
}

// keyState is one key: the store's record, every node's view, and how far
// the sync schedule has been applied.
type keyState struct {
	seen    bool   // a request has been decided
	upto    int64  // every sync instant ≤ upto has been applied (Sync > 0)
	store   record // what the store holds
	views   []view // one per node (Sync > 0), made at the key's first request
	touched []int  // the nodes holding a view, in the order they first did
	dirty   int    // how many views hold a delta that is not 0
}

// Limiter is a fleet enforcing one limit: the store and every node, for
// every key. It implements limiter.Limiter, limiter.Weighed and
// limiter.Sized. It is not safe for concurrent use (limiters are not
// called concurrently).
type Limiter struct {
	cfg     CachedCounter
	limit   algos.Limit
	offs    []int64 // node j's phase, ascending in j
	keys    []keyState
	calls   int64   // decided calls so far: the next goes to calls mod Nodes
	handled []int64 // decided calls per node
	cells   int64
}

var (
	_ limiter.Weighed = (*Limiter)(nil)
	_ limiter.Sized   = (*Limiter)(nil)
)

// New returns a fleet c with every key absent, enforcing l, or an error if
// c or l is invalid.
func New(c CachedCounter, l algos.Limit) (*Limiter, error) {
	if err := validate(c, l); err != nil {
		return nil, err
	}
	f := &Limiter{cfg: c, limit: l, handled: make([]int64, c.Nodes)}
	if c.Sync > 0 {
		f.offs = make([]int64, c.Nodes)
		for j := range f.offs {
			f.offs[j] = c.Offset(j)
		}
	}
	return f, nil
}

// validate is why New or NewOwner refuses the fleet c under l: c's own
// validation error first, else the limit's.
func validate(c interface{ Validate() error }, l algos.Limit) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("fleet: invalid limit: %w", err)
	}
	return nil
}

// Config is the fleet f models.
func (f *Limiter) Config() CachedCounter { return f.cfg }

// Allow is AllowWeighed with limiter.Unit: one unit, no service time.
func (f *Limiter) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	return f.AllowWeighed(ctx, key, now, limiter.Unit)
}

// AllowWeighed decides a request of w.Cost units for key at now µs on the
// next node of the round robin, as the package documentation describes:
// after applying every sync up to now, that node admits when its cached
// count plus its delta plus the cost is at most Rate. w.Service is ignored.
// It fails, reaching no node, for an invalid Weight, a negative key or a
// time outside ±algos.MaxTime.
func (f *Limiter) AllowWeighed(_ context.Context, key int, now int64, w limiter.Weight) (algos.Decision, error) {
	if err := checkCall(w, key, now); err != nil {
		return algos.Decision{}, err
	}
	for key >= len(f.keys) {
		f.keys = append(f.keys, keyState{})
	}
	k := &f.keys[key]
	node := int(f.calls % int64(f.cfg.Nodes))
	f.calls++
	f.handled[node]++

	idx := algos.FloorDiv(now, f.limit.Window)
	end := (idx+1)*f.limit.Window - now
	if f.cfg.Sync == 0 {
		return f.decideSynchronous(k, idx, end, w.Cost), nil
	}
	if !k.seen {
		k.seen, k.upto = true, now
		k.views = make([]view, f.cfg.Nodes)
	} else {
		f.syncUpTo(k, now)
	}

	return f.decideOnView(k, node, idx, end, w.Cost), nil
}

// decideOnView is node's decision on its view of k, for a cost in window
// idx, end µs before the window ends: the view starts over in a window
// other than its own, then admits when its cached count plus its delta
// plus the cost is at most Rate. Syncs are the caller's (AllowWeighed
// applies the schedule's, Replay the recorded ticks).
func (f *Limiter) decideOnView(k *keyState, node int, idx, end, cost int64) algos.Decision {
	v := &k.views[node]
	switch {
	case !v.touched:
		*v = view{touched: true, win: idx}
		k.touched = append(k.touched, node)
		f.cells += 3
	case v.win != idx:
		if v.d != 0 {
			k.dirty--
		}
		*v = view{touched: true, win: idx}
	}
	d := admit(v.g+v.d, f.limit.Rate, end, cost)
	if d.Allowed {
		if v.d == 0 {
			k.dirty++
		}
		v.d += cost
	}
	return d
}

// decideSynchronous is a decision of a fleet whose every request reads and
// writes the store: the fixed window's, on the store's record.
func (f *Limiter) decideSynchronous(k *keyState, idx, end, cost int64) algos.Decision {
	d, added := decideOnRecord(&k.store, f.limit.Rate, idx, end, cost)
	if added {
		f.cells += 2
	}
	return d
}

// decideOnRecord is the fixed window of rate units on rec, for a cost in
// window idx, end µs before the window ends, and whether it wrote a record
// that was not there (2 cells more). A denial writes nothing (for a cost
// of 1 the record already holds that window and count; for more, as
// limiter.Memory, a refused request leaves the key as it was). The record
// may hold more than rate (an owner's, with its peers' hits beyond it); it
// then admits nothing.
func decideOnRecord(rec *record, rate, idx, end, cost int64) (d algos.Decision, added bool) {
	count := rec.countIn(idx)
	d = admit(count, rate, end, cost)
	if d.Allowed {
		added = !rec.set
		*rec = record{set: true, win: idx, count: count + cost}
	}
	return d, added
}

// admit is the fixed window's decision on a cost, with used of its rate
// units taken, end µs before the window ends: admitted when the cost fits
// in what is left. Every node's decision and the store's is this one, on
// the count it knows; the caller counts an admitted cost.
func admit(used, rate, end, cost int64) algos.Decision {
	d := algos.Decision{Reset: end}
	if cost <= rate-used {
		d.Allowed = true
		used += cost
	} else {
		d.RetryAfter = end
	}
	d.Remaining = max(0, rate-used)
	return d
}

// syncUpTo applies every sync instant in (k.upto, t], in time order, ties
// in node order. Instants are walked one by one while some node holds a
// delta: every node syncs within Nodes instants, so that is at most Nodes
// of them. After that the store cannot change before t, and each node
// holding the key needs only its latest instant ≤ t, if not yet applied.
func (f *Limiter) syncUpTo(k *keyState, t int64) {
	if t <= k.upto {
		return
	}
	s, n := f.cfg.Sync, f.cfg.Nodes
	// The first instant after k.upto is node j's in period p.
	p := algos.FloorDiv(k.upto, s)
	j := sort.Search(n, func(i int) bool { return p*s+f.offs[i] > k.upto })
	if j == n {
		p, j = p+1, 0
	}
	for k.dirty > 0 {
		at := p*s + f.offs[j]
		if at > t {
			k.upto = t
			return
		}
		f.sync(k, j, at)
		if j++; j == n {
			p, j = p+1, 0
		}
	}
	for _, node := range k.touched {
		q := algos.FloorDiv(t-f.offs[node], s)
		if q > p || q == p && node >= j { // (q, node) is not yet applied
			f.sync(k, node, q*s+f.offs[node])
		}
	}
	k.upto = t
}

// sync is node's sync at the instant at, for key k.
func (f *Limiter) sync(k *keyState, node int, at int64) {
	v := &k.views[node]
	if !v.touched {
		return
	}
	if v.d != 0 {
		// The flush: the store starts over in v.win if it holds an earlier
		// window (or none), and drops the units if it holds a later one.
		if k.store.add(v.win, v.d) {
			f.cells += 2
		}
		v.d = 0
		k.dirty--
	}
	v.win = max(v.win, algos.FloorDiv(at, f.limit.Window))
	v.g = k.store.countIn(v.win)
}

// Cells is the size of the fleet's state over all keys: 3 integers (cached
// window, cached count, delta) for every node and key that node has
// handled, and 2 (window, count) for every key the store holds. With Sync
// 0 the nodes hold nothing and the store holds a key from its first admit:
// 2 per key, as limiter.Memory counts algos.FixedWindow's state.
func (f *Limiter) Cells() int64 { return f.cells }

// Handled is how many decided calls each node has handled, by node index:
// a copy, which the caller may keep.
func (f *Limiter) Handled() []int64 { return slices.Clone(f.handled) }

// Stored is what the store holds for key: the window and its count, and
// whether it holds anything. The count does not include units the nodes
// have admitted and not yet flushed, and it is as of the last sync applied
// for the key (syncs are applied when a request for the key arrives).
func (f *Limiter) Stored(key int) (window, count int64, ok bool) {
	if key < 0 || key >= len(f.keys) {
		return 0, 0, false
	}
	return f.keys[key].store.stored()
}
