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
	nodes int
	sync  int64
	l     algos.Limit
	keys  []*refKey
	calls int
}

type refKey struct {
	seen         bool
	upto         int64
	stored       bool
	swin, scount int64
	touched      []bool
	win, g, d    []int64
}

func newReference(c fleet.CachedCounter, l algos.Limit) *reference {
	return &reference{nodes: c.Nodes, sync: c.Sync, l: l}
}

func (r *reference) key(key int) *refKey {
	for len(r.keys) <= key {
		r.keys = append(r.keys, &refKey{
			touched: make([]bool, r.nodes),
			win:     make([]int64, r.nodes), g: make([]int64, r.nodes), d: make([]int64, r.nodes),
		})
	}
	return r.keys[key]
}

// syncsAt is whether node syncs at the instant at: at ≡ node·Sync/Nodes
// (mod Sync).
func (r *reference) syncsAt(node int, at int64) bool {
	off := int64(node) * r.sync / int64(r.nodes)
	return ((at-off)%r.sync+r.sync)%r.sync == 0
}

func (r *reference) syncNode(k *refKey, j int, at int64) {
	if !k.touched[j] {
		return
	}
	if k.d[j] > 0 {
		switch {
		case !k.stored || k.swin < k.win[j]:
			k.stored, k.swin, k.scount = true, k.win[j], k.d[j]
		case k.swin == k.win[j]:
			k.scount += k.d[j]
		}
		k.d[j] = 0
	}
	if w := algos.FloorDiv(at, r.l.Window); w > k.win[j] {
		k.win[j] = w
	}
	k.g[j] = 0
	if k.stored && k.swin == k.win[j] {
		k.g[j] = k.scount
	}
}

func (r *reference) decide(key int, now, cost int64) (algos.Decision, int) {
	k := r.key(key)
	node := r.calls % r.nodes
	r.calls++
	win := algos.FloorDiv(now, r.l.Window)
	end := (win+1)*r.l.Window - now
	d := algos.Decision{Reset: end}
	if r.sync == 0 {
		count := int64(0)
		if k.stored && k.swin == win {
			count = k.scount
		}
		if count+cost <= r.l.Rate {
			count += cost
			d.Allowed = true
			k.stored, k.swin, k.scount = true, win, count
		} else {
			d.RetryAfter = end
		}
		d.Remaining = max(0, r.l.Rate-count)
		return d, node
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
	if !k.touched[node] || k.win[node] != win {
		k.touched[node], k.win[node], k.g[node], k.d[node] = true, win, 0, 0
	}
	if k.g[node]+k.d[node]+cost <= r.l.Rate {
		k.d[node] += cost
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	d.Remaining = max(0, r.l.Rate-k.g[node]-k.d[node])
	return d, node
}

func (r *reference) cells() int64 {
	var n int64
	for _, k := range r.keys {
		for _, touched := range k.touched {
			if touched {
				n += 3
			}
		}
		if k.stored {
			n += 2
		}
	}
	return n
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
		f, ref := newFleet(t, c, l), newReference(c, l)
		ctx := context.Background()
		for i, cl := range drawTrace(t, -300, 300, rapid.Bool().Draw(t, "in order")) {
			before := f.Handled()
			got, err := f.AllowWeighed(ctx, cl.key, cl.t, limiter.Weight{Cost: cl.cost})
			if err != nil {
				t.Fatalf("call %d %v: %v", i, cl, err)
			}
			want, node := ref.decide(cl.key, cl.t, cl.cost)
			if got != want {
				t.Fatalf("call %d %v (node %d): got %+v, the model says %+v", i, cl, node, got, want)
			}
			if after := f.Handled(); after[node] != before[node]+1 {
				t.Fatalf("call %d: handled %v then %v, want node %d", i, before, after, node)
			}
			k := ref.key(cl.key)
			if w, n, ok := f.Stored(cl.key); ok != k.stored || ok && (w != k.swin || n != k.scount) {
				t.Fatalf("call %d %v: the store holds (%d, %d, %v), the model (%d, %d, %v)", i, cl, w, n, ok, k.swin, k.scount, k.stored)
			}
			if f.Cells() != ref.cells() {
				t.Fatalf("call %d %v: %d cells, the model %d", i, cl, f.Cells(), ref.cells())
			}
		}
	})
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
		f := newFleet(t, c, l)
		calls := drawTrace(t, 0, 400, true)
		n := int64(c.Nodes)

		type kw struct {
			key int
			win int64
		}
		type admit struct {
			node    int
			t, cost int64
		}
		admits := map[kw][]admit{}
		var order []kw                 // the windows, in the order of their first admit
		firstCall := map[int][]int64{} // key → node → time of its first call (−1: none)
		ctx := context.Background()
		for i, cl := range calls {
			node := i % c.Nodes
			if firstCall[cl.key] == nil {
				firstCall[cl.key] = slices.Repeat([]int64{-1}, c.Nodes)
			}
			if firstCall[cl.key][node] < 0 {
				firstCall[cl.key][node] = cl.t
			}
			d, err := f.AllowWeighed(ctx, cl.key, cl.t, limiter.Weight{Cost: cl.cost})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				k := kw{cl.key, algos.FloorDiv(cl.t, l.Window)}
				if admits[k] == nil {
					order = append(order, k)
				}
				admits[k] = append(admits[k], admit{node, cl.t, cl.cost})
			}
		}
		for _, k := range order {
			var total int64
			runs := map[[2]int64]int64{} // (node, sync period) → units
			for _, a := range admits[k] {
				total += a.cost
				period := int64(0)
				if c.Sync > 0 {
					period = algos.FloorDiv(a.t-int64(a.node)*c.Sync/n, c.Sync)
				}
				runs[[2]int64{int64(a.node), period}] += a.cost
			}
			if c.Sync == 0 || c.Nodes == 1 {
				if total > l.Rate {
					t.Fatalf("window %d of key %d: %d admitted, more than the rate %d (sync %d, %d nodes)", k.win, k.key, total, l.Rate, c.Sync, c.Nodes)
				}
				continue
			}
			m := make([]int64, c.Nodes)
			for r, u := range runs {
				m[r[0]] = max(m[r[0]], u)
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
