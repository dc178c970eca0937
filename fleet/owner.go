package fleet

import (
	"context"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// OwnerConfig is the owner fleet (doc.go, "The owner shape"): Nodes peers
// behind a round-robin load balancer, key k owned by node k mod Nodes,
// whose owner broadcasts its authoritative count to every peer every Sync
// µs (0 is synchronous: every peer asks the owner on every request).
type OwnerConfig struct {
	Nodes int
	Sync  int64
	// Batched: peers queue their hits and hand them to the owner at its
	// next broadcast, just before it (as gubernator's GLOBAL behavior
	// batches them). False: each hit reaches the owner the µs its peer
	// admits it.
	Batched bool
}

// Validate reports what CachedCounter.Validate reports for the same Nodes
// and Sync: a fleet of no nodes or more than MaxNodes, or a broadcast
// interval that is negative or longer than algos.MaxTime.
func (c OwnerConfig) Validate() error {
	return CachedCounter{Nodes: c.Nodes, Sync: c.Sync}.Validate()
}

// Name is the fleet as reports print it: "owner(3 nodes, broadcast
// 100ms)", "owner(3 nodes, batched, broadcast 100ms)", or "owner(1 node,
// synchronous)" for a Sync of 0 (batching means nothing then). It does not
// validate c.
func (c OwnerConfig) Name() string {
	nodes := fmt.Sprintf("%d nodes", c.Nodes)
	if c.Nodes == 1 {
		nodes = "1 node"
	}
	if c.Sync == 0 {
		return fmt.Sprintf("owner(%s, synchronous)", nodes)
	}
	batched := ""
	if c.Batched {
		batched = "batched, "
	}
	return fmt.Sprintf("owner(%s, %sbroadcast %s)", nodes, batched, algos.FormatMicros(c.Sync))
}

// Owner is the node that owns key: key mod Nodes (keys are small indices,
// so the identity is the hash; a caller with string keys numbers them so
// that the number mod Nodes is the node its hash picks). It is 0 for a
// negative key or an invalid c.
func (c OwnerConfig) Owner(key int) int {
	if c.Validate() != nil || key < 0 {
		return 0
	}
	return key % c.Nodes
}

// Offset is node's broadcast phase, as CachedCounter.Offset:
// node·Sync/Nodes µs. A key owned by node is broadcast at k·Sync +
// Offset(node) for every integer k, so owners are staggered as the cached
// counter's syncs are.
func (c OwnerConfig) Offset(node int) int64 {
	return CachedCounter{Nodes: c.Nodes, Sync: c.Sync}.Offset(node)
}

// Spec is the owner fleet as a limiter under test, or c's validation
// error: named by Name, on the caller's clock, promising
// algos.AlignedWindowPromise (what it is meant to enforce, and breaks
// whenever Nodes > 1 and Sync > 0), making a fresh *Owner per limit.
// ExactRetry is false: a denied node names the end of the window, but the
// retry goes to the next node, whose copy may admit it sooner.
// Conservative is false: for calls in time order every node's count is at
// most what the fleet truly admitted in the window.
func (c OwnerConfig) Spec() (limiter.Spec, error) {
	return spec(c.Name(), c.Validate(), func(l algos.Limit) (limiter.Limiter, error) { return NewOwner(c, l) })
}

// ownerKey is one key: the owner's authoritative record, every peer's
// copy, and how far the broadcast schedule has been applied.
type ownerKey struct {
	seen  bool
	upto  int64  // every broadcast instant ≤ upto has been applied
	rec   record // the owner's count (the store of the cached counter)
	views []view // one per node; the owner's is never used
}

// Owner is an owner fleet enforcing one limit: every key's owner record
// and every peer's copy. It implements limiter.Limiter, limiter.Weighed
// and limiter.Sized. It is not safe for concurrent use.
type Owner struct {
	cfg     OwnerConfig
	limit   algos.Limit
	keys    []ownerKey
	manual  bool // Replay: broadcasts come as events, not on the schedule
	calls   int64
	handled []int64
	cells   int64
}

var (
	_ limiter.Weighed = (*Owner)(nil)
	_ limiter.Sized   = (*Owner)(nil)
)

// NewOwner returns an owner fleet c with every key absent, enforcing l,
// or an error if c or l is invalid.
func NewOwner(c OwnerConfig, l algos.Limit) (*Owner, error) {
	if err := validate(c, l); err != nil {
		return nil, err
	}
	return &Owner{cfg: c, limit: l, handled: make([]int64, c.Nodes)}, nil
}

// Config is the fleet o models.
func (o *Owner) Config() OwnerConfig { return o.cfg }

// Allow is AllowWeighed with limiter.Unit.
func (o *Owner) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	return o.AllowWeighed(ctx, key, now, limiter.Unit)
}

// AllowWeighed decides a request of w.Cost units for key at now µs on the
// next node of the round robin, after applying every broadcast of key up
// to now, as doc.go describes. w.Service is ignored. It fails, reaching no
// node, for an invalid Weight, a negative key or a time outside
// ±algos.MaxTime.
func (o *Owner) AllowWeighed(_ context.Context, key int, now int64, w limiter.Weight) (algos.Decision, error) {
	if err := checkCall(w, key, now); err != nil {
		return algos.Decision{}, err
	}
	node := int(o.calls % int64(o.cfg.Nodes))
	o.calls++
	return o.decide(node, key, now, w.Cost), nil
}

// checkCall is why a call of w for key at now reaches no node of either
// fleet: an invalid Weight, a negative key, a time outside ±algos.MaxTime;
// nil when it may.
func checkCall(w limiter.Weight, key int, now int64) error {
	if err := w.Validate(); err != nil {
		return err
	}
	if key < 0 {
		return fmt.Errorf("fleet: negative key %d", key)
	}
	if now < -algos.MaxTime || now > algos.MaxTime {
		return fmt.Errorf("fleet: time %d µs is outside ±algos.MaxTime", now)
	}
	return nil
}

func (o *Owner) key(key int) *ownerKey {
	for key >= len(o.keys) {
		o.keys = append(o.keys, ownerKey{})
	}
	k := &o.keys[key]
	if k.views == nil && o.cfg.Sync > 0 {
		k.views = make([]view, o.cfg.Nodes)
	}
	return k
}

// decide is node's decision on a request of cost for key at now.
func (o *Owner) decide(node, key int, now, cost int64) algos.Decision {
	o.handled[node]++
	k := o.key(key)
	if !o.manual && o.cfg.Sync > 0 {
		if !k.seen {
			k.seen, k.upto = true, now
		} else {
			o.broadcastUpTo(key, k, now)
		}
	}
	idx := algos.FloorDiv(now, o.limit.Window)
	end := (idx+1)*o.limit.Window - now
	if o.cfg.Sync == 0 || node == o.cfg.Owner(key) {
		// The owner decides on its own record; with Sync 0 every peer
		// forwards the request to it and relays its answer.
		return o.decideOwn(k, idx, end, cost)
	}
	v := &k.views[node]
	if !v.touched || v.win != idx {
		// A copy of another window says nothing of this one: the peer
		// starts over at 0, as the cached counter's node does. A batched
		// queue of that window is dropped (its window is over for calls
		// in time order).
		o.touch(v)
		v.win, v.g, v.d = idx, 0, 0
	}
	d := admit(v.g+v.d, o.limit.Rate, end, cost)
	if d.Allowed {
		v.d += cost
		if !o.cfg.Batched {
			o.addHits(k, idx, cost)
		}
	}
	return d
}

// decideOwn is the owner's decision: the fixed window on its record
// (decideOnRecord).
func (o *Owner) decideOwn(k *ownerKey, idx, end, cost int64) algos.Decision {
	d, added := decideOnRecord(&k.rec, o.limit.Rate, idx, end, cost)
	if added {
		o.cells += 2
	}
	return d
}

func (o *Owner) touch(v *view) {
	if !v.touched {
		v.touched = true
		o.cells += 3
	}
}

// addHits adds n units of window win to the owner's record: it starts
// over in win if it holds an earlier window (or none) and drops them if it
// holds a later one.
func (o *Owner) addHits(k *ownerKey, win, n int64) {
	if k.rec.add(win, n) {
		o.cells += 2
	}
}

// broadcastUpTo applies every broadcast instant of key in (k.upto, t]. Only
// the last needs applying: with no request between them, the first one
// takes every batched queue (each into its own window, whichever instant
// takes it) and the record cannot change after it, so each broadcast only
// overwrites the copies the one before set.
func (o *Owner) broadcastUpTo(key int, k *ownerKey, t int64) {
	if t <= k.upto {
		return
	}
	s, off := o.cfg.Sync, o.cfg.Offset(o.cfg.Owner(key))
	if last := algos.FloorDiv(t-off, s)*s + off; last > k.upto {
		o.broadcast(key, k, last)
	}
	k.upto = t
}

// broadcast is the owner's broadcast of key at the instant at: batched
// queues are added to its record first; then every peer's copy becomes the
// record's count for at's window (0 if the record holds another), with
// nothing admitted since.
func (o *Owner) broadcast(key int, k *ownerKey, at int64) {
	owner := o.cfg.Owner(key)
	if o.cfg.Batched {
		for n := range k.views {
			if v := &k.views[n]; n != owner && v.d != 0 {
				o.addHits(k, v.win, v.d)
			}
		}
	}
	win := algos.FloorDiv(at, o.limit.Window)
	count := k.rec.countIn(win)
	for n := range k.views {
		if n != owner {
			v := &k.views[n]
			o.touch(v)
			v.win, v.g, v.d = win, count, 0
		}
	}
}

// Cells is the size of the fleet's state over all keys: 2 integers
// (window, count) for every key the owner holds, and 3 (window, copied
// count, units admitted since) for every peer's copy of a key. With Sync
// 0 the peers hold nothing: 2 per key from its first admit, as
// limiter.Memory counts algos.FixedWindow's state.
func (o *Owner) Cells() int64 { return o.cells }

// Handled is how many decided calls each node has handled, by node index:
// a copy.
func (o *Owner) Handled() []int64 { return slices.Clone(o.handled) }

// Stored is the owner's record of key: the window and its count, and
// whether it holds one, as of the last request for key (broadcasts are
// applied when a request for the key arrives).
func (o *Owner) Stored(key int) (window, count int64, ok bool) {
	if key < 0 || key >= len(o.keys) {
		return 0, 0, false
	}
	return o.keys[key].rec.stored()
}
