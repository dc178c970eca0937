package fleet_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/fleet"
	"github.com/overshoot-go/overshoot/limiter"
)

// call is one request of a drawn trace.
type call struct {
	key  int
	t    int64
	cost int64
}

func (c call) String() string { return fmt.Sprintf("{key %d at %d cost %d}", c.key, c.t, c.cost) }

// drawLimit draws a small limit: rate 1..5 per 1..60 µs (Burst unused).
func drawLimit(t *rapid.T) algos.Limit {
	rate := rapid.Int64Range(1, 5).Draw(t, "rate")
	return algos.MustLimit(rate, rapid.Int64Range(1, 60).Draw(t, "window"), rate)
}

// drawTrace draws up to 80 calls on keys 0..2 at times in [lo, hi], of
// cost 1 (mostly) to 3, sorted by time when inOrder.
func drawTrace(t *rapid.T, lo, hi int64, inOrder bool) []call {
	n := rapid.IntRange(0, 80).Draw(t, "calls")
	calls := make([]call, n)
	for i := range calls {
		calls[i] = call{
			key:  rapid.IntRange(0, 2).Draw(t, "key"),
			t:    rapid.Int64Range(lo, hi).Draw(t, "t"),
			cost: rapid.SampledFrom([]int64{1, 1, 1, 2, 3}).Draw(t, "cost"),
		}
	}
	if inOrder {
		slices.SortStableFunc(calls, func(a, b call) int { return cmp.Compare(a.t, b.t) })
	}
	return calls
}

func newFleet(t *rapid.T, c fleet.CachedCounter, l algos.Limit) *fleet.Limiter {
	f, err := fleet.New(c, l)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameAsFixedWindow plays calls on f and on the fixed window in memory,
// and fails at the first call they decide differently: Allowed always, the
// whole decision for a cost of 1 (for more, a refusal's Remaining differs
// by design: limiter.Memory reports its first refused unit's), and, when
// sameCells, Cells (a synchronous fleet holds what the fixed window holds;
// a syncing node holds 3 integers per key, not 2).
func sameAsFixedWindow(t *rapid.T, f sizedWeighed, l algos.Limit, calls []call, sameCells bool) {
	m, err := limiter.NewMemory(algos.FixedWindow, l)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range calls {
		w := limiter.Weight{Cost: c.cost}
		got, err := f.AllowWeighed(ctx, c.key, c.t, w)
		if err != nil {
			t.Fatalf("call %d %v: %v", i, c, err)
		}
		want, err := m.AllowWeighed(ctx, c.key, c.t, w)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed != want.Allowed || c.cost == 1 && got != want {
			t.Fatalf("call %d %v: the fleet says %+v, the fixed window %+v", i, c, got, want)
		}
		if sameCells && f.Cells() != m.Cells() {
			t.Fatalf("call %d %v: the fleet holds %d cells, the fixed window %d", i, c, f.Cells(), m.Cells())
		}
	}
}

// Synchronous, any number of nodes, any order of times (callers behind
// included), any costs: the fleet is algos.FixedWindow, as
// limiter.FromAlgorithm runs it.
func TestSynchronousFleetIsTheFixedWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.CachedCounter{Nodes: rapid.IntRange(1, 8).Draw(t, "nodes")}
		sameAsFixedWindow(t, newFleet(t, c, l), l, drawTrace(t, -200, 400, false), true)
	})
}

// One node, any sync interval: the node knows every unit it admitted, so
// for calls in time order the fleet is again the fixed window.
func TestOneNodeIsTheFixedWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.CachedCounter{Nodes: 1, Sync: rapid.Int64Range(0, 200).Draw(t, "sync")}
		sameAsFixedWindow(t, newFleet(t, c, l), l, drawTrace(t, -200, 400, true), false)
	})
}

// reference is the fleet's model written the plain way: every sync instant
// of every node, µs by µs, for the key asked about. It shares no code with
// the package.
type reference struct {
	refKeys
	sync  int64
	l     algos.Limit
	calls int
}

func newReference(c fleet.CachedCounter, l algos.Limit) *reference {
	return &reference{refKeys: refKeys{nodes: c.Nodes}, sync: c.Sync, l: l}
}

// refKey is one key of a plain model (reference, ownerReference): its
// record (the cached counter's store, or the owner's count), every node's
// view of it, and the last instant played for it (upto, once seen).
type refKey struct {
	seen  bool
	upto  int64
	rec   refRecord
	views []refView // one per node; an owner's own is never used
}

// refKeys is a plain model's keys, each made with a view per node on its
// first use.
type refKeys struct {
	nodes int
	keys  []*refKey
}

func (r *refKeys) key(key int) *refKey {
	for len(r.keys) <= key {
		r.keys = append(r.keys, &refKey{views: make([]refView, r.nodes)})
	}
	return r.keys[key]
}

func (r *refKeys) record(key int) refRecord { return r.key(key).rec }

// cells is the cells the keys hold: 2 for a record, if set, and 3 for
// every view set.
func (r *refKeys) cells() int64 {
	var n int64
	for _, k := range r.keys {
		if k.rec.set {
			n += 2
		}
		for _, v := range k.views {
			if v.set {
				n += 3
			}
		}
	}
	return n
}

// syncsAt is whether node syncs at the instant at: at ≡ node·Sync/Nodes
// (mod Sync).
func (r *reference) syncsAt(node int, at int64) bool {
	off := int64(node) * r.sync / int64(r.nodes)
	return ((at-off)%r.sync+r.sync)%r.sync == 0
}

func (r *reference) syncNode(k *refKey, j int, at int64) {
	v := &k.views[j]
	if !v.set {
		return
	}
	if v.d > 0 {
		k.rec.add(v.win, v.d)
		v.d = 0
	}
	if w := algos.FloorDiv(at, r.l.Window); w > v.win {
		v.win = w
	}
	v.g = k.rec.countIn(v.win)
}

func (r *reference) decide(key int, now, cost int64) (algos.Decision, int) {
	k := r.key(key)
	node := r.calls % r.nodes
	r.calls++
	win := algos.FloorDiv(now, r.l.Window)
	end := (win+1)*r.l.Window - now
	if r.sync == 0 {
		return k.rec.decide(win, end, cost, r.l.Rate), node
	}
	if k.seen {
		for at := k.upto + 1; at <= now; at++ {
			for j := range r.nodes {
				if r.syncsAt(j, at) {
					r.syncNode(k, j, at)
				}
			}
		}
	}
	if !k.seen || now > k.upto {
		k.seen, k.upto = true, now
	}
	return k.views[node].decide(win, end, cost, r.l.Rate), node
}

// refRecord is a plain model's record of one key: the cached counter's
// store, or the owner's count.
type refRecord struct {
	set        bool
	win, count int64
}

// add is n units of window win reaching r: a later window (or none held)
// starts r over, an earlier one is dropped.
func (r *refRecord) add(win, n int64) {
	switch {
	case !r.set || r.win < win:
		r.set, r.win, r.count = true, win, n
	case r.win == win:
		r.count += n
	}
}

// countIn is r's count of window win: 0 when it holds another, or none.
func (r refRecord) countIn(win int64) int64 {
	if r.set && r.win == win {
		return r.count
	}
	return 0
}

// decide is the fixed window of rate on r for a cost in window win, end µs
// before it ends: an admitted cost is counted in r.
func (r *refRecord) decide(win, end, cost, rate int64) algos.Decision {
	count := r.countIn(win)
	d := refAdmit(count, rate, end, cost)
	if d.Allowed {
		r.set, r.win, r.count = true, win, count+cost
	}
	return d
}

// refView is a plain model's node's view of one key: the window it is of,
// the count it read for it (g) and the units it admitted since (d).
type refView struct {
	set       bool
	win, g, d int64
}

// decide is the node's decision on v for a cost in window win, end µs
// before it ends: a view of another window (or none) starts over at 0,
// and an admitted cost is counted in d.
func (v *refView) decide(win, end, cost, rate int64) algos.Decision {
	if !v.set || v.win != win {
		*v = refView{set: true, win: win}
	}
	d := refAdmit(v.g+v.d, rate, end, cost)
	if d.Allowed {
		v.d += cost
	}
	return d
}

// refAdmit is the fixed window's decision on a cost with used of rate
// taken, end µs before the window ends.
func refAdmit(used, rate, end, cost int64) algos.Decision {
	d := algos.Decision{Reset: end}
	if used+cost <= rate {
		used += cost
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	d.Remaining = max(0, rate-used)
	return d
}

// plainModel is a fleet written the plain way (reference,
// ownerReference), as sameAsPlainModel checks the package's against it.
type plainModel interface {
	// decide is the decision of a call and the node it went to.
	decide(key int, now, cost int64) (algos.Decision, int)
	// record is what the store (the owner) holds for key.
	record(key int) refRecord
	cells() int64
}

// fleetUnderTest is either fleet, as sameAsPlainModel reads it.
type fleetUnderTest interface {
	sizedWeighed
	Handled() []int64
	Stored(key int) (window, count int64, ok bool)
}

// sameAsPlainModel plays calls on f and on ref, and fails at the first
// call f decides otherwise or on another node, or after which its record
// of the key (Stored) or its Cells differ from the model's.
func sameAsPlainModel(t *rapid.T, f fleetUnderTest, ref plainModel, calls []call) {
	ctx := context.Background()
	for i, cl := range calls {
		before := f.Handled()
		got, err := f.AllowWeighed(ctx, cl.key, cl.t, limiter.Weight{Cost: cl.cost})
		if err != nil {
			t.Fatalf("call %d %v: %v", i, cl, err)
		}
		want, node := ref.decide(cl.key, cl.t, cl.cost)
		if got != want {
			t.Fatalf("call %d %v (node %d): got %+v, the plain model says %+v", i, cl, node, got, want)
		}
		if after := f.Handled(); after[node] != before[node]+1 {
			t.Fatalf("call %d: handled %v then %v, want node %d", i, before, after, node)
		}
		k := ref.record(cl.key)
		if w, n, ok := f.Stored(cl.key); ok != k.set || ok && (w != k.win || n != k.count) {
			t.Fatalf("call %d %v: the fleet holds (%d, %d, %v), the plain model (%d, %d, %v)", i, cl, w, n, ok, k.win, k.count, k.set)
		}
		if f.Cells() != ref.cells() {
			t.Fatalf("call %d %v: %d cells, the plain model %d", i, cl, f.Cells(), ref.cells())
		}
	}
}

// The package's lazy, skipping sync schedule is exact: it decides every
// call as the plain model that applies every sync instant, µs by µs, and
// its store and Cells agree after every call, with any fleet, any sync
// interval (shorter than the window or longer, fewer µs than nodes or
// more), any costs, and times in any order.
func TestLazySyncsAreExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.CachedCounter{
			Nodes: rapid.IntRange(1, 6).Draw(t, "nodes"),
			Sync:  rapid.Int64Range(0, 90).Draw(t, "sync"),
		}
		sameAsPlainModel(t, newFleet(t, c, l), newReference(c, l), drawTrace(t, -300, 300, rapid.Bool().Draw(t, "in order")))
	})
}

// windowAdmits is what a fleet admitted in one aligned window of one key:
// the units, and m[j], the most units node j admitted in it within one
// period of the schedule.
type windowAdmits struct {
	key   int
	win   int64
	total int64
	m     []int64
}

// admitsByWindow plays calls (in time order, the i-th on node i mod
// nodes) on f and returns what it admitted in each window of each key, in
// the order of their first admit. A unit node j admits for key at t falls
// in its period FloorDiv(t − phase(key, j), sync), as the overshoot bounds
// of doc.go count them; all in one period when sync is 0.
func admitsByWindow(t *rapid.T, f limiter.Weighed, l algos.Limit, calls []call, nodes int, sync int64, phase func(key, node int) int64) []windowAdmits {
	type kw struct {
		key int
		win int64
	}
	type admit struct {
		node    int
		t, cost int64
	}
	admits := map[kw][]admit{}
	var order []kw
	ctx := context.Background()
	for i, cl := range calls {
		d, err := f.AllowWeighed(ctx, cl.key, cl.t, limiter.Weight{Cost: cl.cost})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			k := kw{cl.key, algos.FloorDiv(cl.t, l.Window)}
			if admits[k] == nil {
				order = append(order, k)
			}
			admits[k] = append(admits[k], admit{i % nodes, cl.t, cl.cost})
		}
	}
	out := make([]windowAdmits, len(order))
	for i, k := range order {
		w := windowAdmits{key: k.key, win: k.win, m: make([]int64, nodes)}
		runs := map[[2]int64]int64{} // (node, period) → units
		for _, a := range admits[k] {
			w.total += a.cost
			period := int64(0)
			if sync > 0 {
				period = algos.FloorDiv(a.t-phase(k.key, a.node), sync)
			}
			runs[[2]int64{int64(a.node), period}] += a.cost
		}
		for r, u := range runs {
			w.m[r[0]] = max(w.m[r[0]], u)
		}
		out[i] = w
	}
	return out
}

// The overshoot bound (doc.go), for calls in time order: in each aligned
// window w of each key, with m_j the most units node j admitted in w within
// one of its sync periods, M the largest m_j and T the nodes that handled
// the key before w ended,
//
//	admitted ≤ Rate + Σ_j m_j − min_{j∈T} m_j ≤ Rate + (Nodes−1)·M ≤ Nodes·Rate
//
// and admitted ≤ Rate when Sync is 0 or there is one node. The draws are
// checked to overshoot often, and to reach Nodes·Rate, so the bound is
// neither held vacuously nor loose.
func TestOvershootBound(t *testing.T) {
	var windows, over, atNodesRate int
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.CachedCounter{
			Nodes: rapid.IntRange(1, 5).Draw(t, "nodes"),
			Sync:  rapid.Int64Range(0, 3*l.Window).Draw(t, "sync"),
		}
		calls := drawTrace(t, 0, 400, true)
		n := int64(c.Nodes)
		firstCall := map[int][]int64{} // key → node → time of its first call (−1: none)
		for i, cl := range calls {
			node := i % c.Nodes
			if firstCall[cl.key] == nil {
				firstCall[cl.key] = slices.Repeat([]int64{-1}, c.Nodes)
			}
			if firstCall[cl.key][node] < 0 {
				firstCall[cl.key][node] = cl.t
			}
		}
		nodeSync := func(_, node int) int64 { return int64(node) * c.Sync / n } // doc.go's phase, not the package's Offset
		for _, k := range admitsByWindow(t, newFleet(t, c, l), l, calls, c.Nodes, c.Sync, nodeSync) {
			total, m := k.total, k.m
			if c.Sync == 0 || c.Nodes == 1 {
				if total > l.Rate {
					t.Fatalf("window %d of key %d: %d admitted, more than the rate %d (sync %d, %d nodes)", k.win, k.key, total, l.Rate, c.Sync, c.Nodes)
				}
				continue
			}
			var sum, most int64
			minT := int64(-1)
			for j := range c.Nodes {
				sum += m[j]
				most = max(most, m[j])
				if fc := firstCall[k.key][j]; fc >= 0 && fc < (k.win+1)*l.Window && (minT < 0 || m[j] < minT) {
					minT = m[j]
				}
			}
			windows++
			if total > l.Rate {
				over++
			}
			if total == n*l.Rate {
				atNodesRate++
			}
			switch {
			case total > l.Rate+sum-minT:
				t.Fatalf("window %d of key %d: %d admitted > rate %d + Σm_j %d − min m_j %d (m = %v)", k.win, k.key, total, l.Rate, sum, minT, m)
			case total > l.Rate+(n-1)*most:
				t.Fatalf("window %d of key %d: %d admitted > rate %d + (nodes−1)·%d", k.win, k.key, total, l.Rate, most)
			case total > n*l.Rate:
				t.Fatalf("window %d of key %d: %d admitted > nodes·rate %d", k.win, k.key, total, n*l.Rate)
			}
		}
	})
	t.Logf("%d windows of fleets with Sync > 0 and Nodes > 1: %d over the rate, %d at Nodes·Rate", windows, over, atNodesRate)
	if over < windows/20 || atNodesRate == 0 {
		t.Errorf("only %d of %d windows over the rate, %d at Nodes·Rate: the draws do not test the bound", over, windows, atNodesRate)
	}
}
