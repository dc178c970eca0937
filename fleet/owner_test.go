package fleet_test

import (
	"context"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/fleet"
	"github.com/overshoot-go/overshoot/limiter"
)

func newOwner(t *rapid.T, c fleet.OwnerConfig, l algos.Limit) *fleet.Owner {
	o, err := fleet.NewOwner(c, l)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sizedWeighed is a fleet of either shape, as the properties use it.
type sizedWeighed interface {
	limiter.Weighed
	limiter.Sized
}

// Synchronous, any number of nodes, batched or not, any order of times,
// any costs: every peer asks the owner, and the owner fleet is
// algos.FixedWindow, cells included.
func TestOwnerSynchronousIsTheFixedWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.OwnerConfig{Nodes: rapid.IntRange(1, 8).Draw(t, "nodes"), Batched: rapid.Bool().Draw(t, "batched")}
		sameAsFixedWindow(t, newOwner(t, c, l), l, drawTrace(t, -200, 400, false), true)
	})
}

// One node, any broadcast interval, batched or not, any order of times:
// the one node owns every key and decides on its record, so the fleet is
// the fixed window, cells included.
func TestOwnerOneNodeIsTheFixedWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.OwnerConfig{Nodes: 1, Sync: rapid.Int64Range(0, 200).Draw(t, "sync"), Batched: rapid.Bool().Draw(t, "batched")}
		sameAsFixedWindow(t, newOwner(t, c, l), l, drawTrace(t, -200, 400, false), true)
	})
}

// ownerReference is the owner fleet written the plain way: every broadcast
// instant, µs by µs, for the key asked about. It shares no code with the
// package.
type ownerReference struct {
	refKeys
	c     fleet.OwnerConfig
	l     algos.Limit
	calls int
}

func newOwnerReference(c fleet.OwnerConfig, l algos.Limit) *ownerReference {
	return &ownerReference{refKeys: refKeys{nodes: c.Nodes}, c: c, l: l}
}

func (r *ownerReference) broadcast(k *refKey, owner int, at int64) {
	for j, v := range k.views {
		if j != owner && r.c.Batched && v.set && v.d > 0 {
			k.rec.add(v.win, v.d)
		}
	}
	win := algos.FloorDiv(at, r.l.Window)
	count := k.rec.countIn(win)
	for j := range k.views {
		if j != owner {
			k.views[j] = refView{set: true, win: win, g: count}
		}
	}
}

func (r *ownerReference) decide(key int, now, cost int64) (algos.Decision, int) {
	k := r.key(key)
	node := r.calls % r.c.Nodes
	r.calls++
	owner := key % r.c.Nodes
	s := r.c.Sync
	if s > 0 {
		off := int64(owner) * s / int64(r.c.Nodes)
		if k.seen {
			for at := k.upto + 1; at <= now; at++ {
				if ((at-off)%s+s)%s == 0 {
					r.broadcast(k, owner, at)
				}
			}
		}
		if !k.seen || now > k.upto {
			k.seen, k.upto = true, now
		}
	}
	win := algos.FloorDiv(now, r.l.Window)
	end := (win+1)*r.l.Window - now
	if s == 0 || node == owner {
		return k.rec.decide(win, end, cost, r.l.Rate), node
	}
	d := k.views[node].decide(win, end, cost, r.l.Rate)
	if d.Allowed && !r.c.Batched {
		k.rec.add(win, cost)
	}
	return d, node
}

// drawOwnerConfig draws a small owner fleet: 1 to 6 nodes, broadcasting
// every 0 to 90 µs (shorter than the window or longer), batched or not.
func drawOwnerConfig(t *rapid.T) fleet.OwnerConfig {
	return fleet.OwnerConfig{
		Nodes:   rapid.IntRange(1, 6).Draw(t, "nodes"),
		Sync:    rapid.Int64Range(0, 90).Draw(t, "sync"),
		Batched: rapid.Bool().Draw(t, "batched"),
	}
}

// The package's lazy broadcasts (only the first and the last instant since
// the key was last asked about) are exact: every call is decided as the
// plain model that applies every broadcast µs by µs decides it, on the
// same node, with the same owner record and Cells after every call, for
// any fleet, any costs and times in any order.
func TestOwnerLazyBroadcastsAreExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		c := drawOwnerConfig(t)
		sameAsPlainModel(t, newOwner(t, c, l), newOwnerReference(c, l), drawTrace(t, -300, 300, rapid.Bool().Draw(t, "in order")))
	})
}

// scheduled is calls (in time order, the i-th on node i mod nodes) with
// every tick of the schedule before them: node j at every k·sync + off(j)
// after the first call and up to the last, before the calls of the same
// µs, in node order. It is what a fleet whose timers keep time records.
func scheduled(calls []call, nodes int, sync int64, off func(int) int64) []fleet.Occurrence {
	var events []fleet.Occurrence
	if len(calls) == 0 {
		return nil
	}
	prev := calls[0].t
	for i, c := range calls {
		if sync > 0 && c.t > prev {
			var ticks []fleet.Occurrence
			for j := range nodes {
				for at := (algos.FloorDiv(prev-off(j), sync)+1)*sync + off(j); at <= c.t; at += sync {
					ticks = append(ticks, fleet.Occurrence{At: at, Node: j, Tick: true})
				}
			}
			slices.SortStableFunc(ticks, func(a, b fleet.Occurrence) int { return int(min(max(a.At-b.At, -1), 1)) })
			events = append(events, ticks...)
			prev = c.t
		}
		events = append(events, fleet.Occurrence{At: c.t, Node: i % nodes, Key: c.key, Cost: c.cost})
	}
	return events
}

// decisionsOf plays calls on lim and returns its decisions.
func decisionsOf(t *rapid.T, lim limiter.Weighed, calls []call) []algos.Decision {
	out := make([]algos.Decision, len(calls))
	for i, c := range calls {
		d, err := lim.AllowWeighed(context.Background(), c.key, c.t, limiter.Weight{Cost: c.cost})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = d
	}
	return out
}

// requestsOf is the decisions of the requests among events.
func requestsOf(events []fleet.Occurrence, ds []algos.Decision) []algos.Decision {
	var out []algos.Decision
	for i, e := range events {
		if !e.Tick {
			out = append(out, ds[i])
		}
	}
	return out
}

// Replay fed the schedule's ticks is the model: for calls in time order it
// decides every request as the Spec's limiter does, for both shapes. So a
// replay of a recorded run is the model, told when the run's timers really
// fired.
func TestReplayOfTheScheduleIsTheModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLimit(t)
		oc := drawOwnerConfig(t)
		calls := drawTrace(t, 0, 400, true)
		ctx := context.Background()
		_ = ctx

		cc := fleet.CachedCounter{Nodes: oc.Nodes, Sync: oc.Sync}
		events := scheduled(calls, cc.Nodes, cc.Sync, cc.Offset)
		got, err := cc.Replay(l, events)
		if err != nil {
			t.Fatal(err)
		}
		want := decisionsOf(t, newFleet(t, cc, l), calls)
		if g := requestsOf(events, got); !slices.Equal(g, want) {
			t.Fatalf("cached counter %s: the replay decides\n%v\nthe model\n%v", cc.Name(), g, want)
		}

		events = scheduled(calls, oc.Nodes, oc.Sync, oc.Offset)
		got, err = oc.Replay(l, events)
		if err != nil {
			t.Fatal(err)
		}
		want = decisionsOf(t, newOwner(t, oc, l), calls)
		if g := requestsOf(events, got); !slices.Equal(g, want) {
			t.Fatalf("%s: the replay decides\n%v\nthe model\n%v", oc.Name(), g, want)
		}
	})
}

// The owner fleet's overshoot bound (doc.go), for calls in time order: in
// each aligned window w of each key, with m_j the most units node j
// admitted in w within one period of the key's broadcasts,
//
//	at once:  admitted ≤ Rate + Σ_{j ≠ owner} m_j
//	batched:  admitted ≤ Rate + Σ_j m_j − max_j m_j
//
// both ≤ Rate + (Nodes−1)·max_j m_j ≤ Nodes·Rate, and admitted ≤ Rate
// when Sync is 0 or there is one node. The draws are checked to overshoot
// often and to reach the bound above the rate in both modes, so the bound
// is neither held vacuously nor loose (Nodes·Rate itself is rare in a
// draw with hits at once: the owner must admit Rate before any peer's hit
// lands; TestOwnerReachesNodesTimesRate shows it).
func TestOwnerOvershootBound(t *testing.T) {
	type tally struct{ windows, over, atBound, atNodesRate int }
	var modes [2]tally // at once, batched
	property := func(t *rapid.T) {
		l := drawLimit(t)
		c := fleet.OwnerConfig{
			Nodes:   rapid.IntRange(1, 5).Draw(t, "nodes"),
			Sync:    rapid.Int64Range(0, 3*l.Window).Draw(t, "sync"),
			Batched: rapid.Bool().Draw(t, "batched"),
		}
		calls := drawTrace(t, 0, 150, true) // dense: most windows see several calls
		n := int64(c.Nodes)
		ownerSync := func(key, _ int) int64 { return c.Offset(c.Owner(key)) } // every node's copy moves at its owner's broadcast
		for _, k := range admitsByWindow(t, newOwner(t, c, l), l, calls, c.Nodes, c.Sync, ownerSync) {
			owner, total, m := c.Owner(k.key), k.total, k.m
			if c.Sync == 0 || c.Nodes == 1 {
				if total > l.Rate {
					t.Fatalf("window %d of key %d: %d admitted, more than the rate %d (%s)", k.win, k.key, total, l.Rate, c.Name())
				}
				continue
			}
			var sum int64
			for _, u := range m {
				sum += u
			}
			most := slices.Max(m)
			bound, mode := l.Rate+sum-m[owner], 0
			if c.Batched {
				bound, mode = l.Rate+sum-most, 1
			}
			modes[mode].windows++
			if total > l.Rate {
				modes[mode].over++
			}
			if total > l.Rate && total == bound {
				modes[mode].atBound++
			}
			if total == n*l.Rate {
				modes[mode].atNodesRate++
			}
			switch {
			case total > bound:
				t.Fatalf("%s, window %d of key %d (owner %d): %d admitted > %d (rate %d, m = %v)", c.Name(), k.win, k.key, owner, total, bound, l.Rate, m)
			case total > l.Rate+(n-1)*most:
				t.Fatalf("%s, window %d of key %d: %d admitted > rate %d + (nodes−1)·%d", c.Name(), k.win, k.key, total, l.Rate, most)
			case total > n*l.Rate:
				t.Fatalf("%s, window %d of key %d: %d admitted > nodes·rate %d", c.Name(), k.win, k.key, total, n*l.Rate)
			}
		}
	}
	covered := func() bool {
		for _, m := range modes {
			if m.over < m.windows/50 || m.atBound == 0 {
				return false
			}
		}
		return true
	}
	// With hits at once the bound is reached in few windows: 3 to 25 in a
	// hundred cases (sixty runs), and once in another run none. So cases
	// are drawn again, up to five times as many, until both modes have
	// reached it: the claim is about what the draws can reach, and must
	// not hang on one run's luck. Every case drawn is held to the bound.
	for round := 0; round < 5 && (round == 0 || !covered()); round++ {
		rapid.Check(t, property)
	}
	for i, name := range []string{"at once", "batched"} {
		m := modes[i]
		t.Logf("hits %s: %d windows with Sync > 0 and Nodes > 1, %d over the rate, %d of them at the bound, %d at Nodes·Rate", name, m.windows, m.over, m.atBound, m.atNodesRate)
		if m.over < m.windows/50 || m.atBound == 0 {
			t.Errorf("hits %s: only %d of %d windows over the rate, %d over it at the bound: the draws do not test the bound", name, m.over, m.windows, m.atBound)
		}
	}
}

// runOwner plays the steps, every one for key, on a fresh owner fleet c
// under l and returns the fleet.
func runOwner(t *testing.T, c fleet.OwnerConfig, l algos.Limit, key int, steps []step) *fleet.Owner {
	t.Helper()
	o, err := fleet.NewOwner(c, l)
	if err != nil {
		t.Fatal(err)
	}
	for i := range steps {
		steps[i].key = key
	}
	play(t, o, steps)
	return o
}

// admittedAt1ms is a step of the three-node traces by hand: a request at
// 1 ms that node admits, leaving it rem.
func admittedAt1ms(node int, rem int64) step {
	return step{t: 1 * ms, node: node, allowed: true, remaining: rem, reset: 999 * ms}
}

// Three nodes, key 0 owned by node 0 (broadcasting at 0, 200, 400 ms,
// ...), 10 per second, hits reaching the owner at once, by hand: the owner
// stops at 10, each peer admits on its copy until the next broadcast.
func TestOwnerThreeNodesAtOnceByHand(t *testing.T) {
	c := fleet.OwnerConfig{Nodes: 3, Sync: 200 * ms}
	l := algos.MustLimit(10, algos.Second, 10)
	ok := admittedAt1ms
	o := runOwner(t, c, l, 0, []step{
		// The owner counts every hit as it lands; each peer sees its own.
		ok(0, 9), ok(1, 9), ok(2, 9), // owner 1, peers' hits: 3
		ok(0, 6), ok(1, 8), ok(2, 8), // owner reads 3, makes 4; 6
		ok(0, 3), ok(1, 7), ok(2, 7), // 7; 9
		ok(0, 0), ok(1, 6), ok(2, 6), // the owner's 10th; peers' 11th and 12th
		{t: 1 * ms, node: 0, retryAfter: 999 * ms, reset: 999 * ms}, // 12 ≥ 10
		// The broadcast at 200 ms gives every peer 12.
		{t: 210 * ms, node: 1, retryAfter: 790 * ms, reset: 790 * ms},
		{t: 210 * ms, node: 2, retryAfter: 790 * ms, reset: 790 * ms},
		// In window 1, the broadcast at 1 s gives the peers 0.
		{t: algos.Second, node: 0, allowed: true, remaining: 9, reset: algos.Second},
		{t: algos.Second, node: 1, allowed: true, remaining: 9, reset: algos.Second},
	})
	wantStored(t, o, 0, 1, 2)
	if got := o.Cells(); got != 2*3+2 {
		t.Errorf("Cells = %d, want 8 (2 peers' copies × 3 + the owner's 2)", got)
	}
}

// The same with batched hits: the owner sees only its own until the
// broadcast takes the peers' queues, so every node admits on its own
// count: 5 + 4 + 4.
func TestOwnerThreeNodesBatchedByHand(t *testing.T) {
	c := fleet.OwnerConfig{Nodes: 3, Sync: 200 * ms, Batched: true}
	l := algos.MustLimit(10, algos.Second, 10)
	ok := admittedAt1ms
	o := runOwner(t, c, l, 0, []step{
		ok(0, 9), ok(1, 9), ok(2, 9),
		ok(0, 8), ok(1, 8), ok(2, 8),
		ok(0, 7), ok(1, 7), ok(2, 7),
		ok(0, 6), ok(1, 6), ok(2, 6),
		ok(0, 5),
		// The broadcast at 200 ms adds the peers' 8 queued hits (13) and
		// gives every peer 13.
		{t: 210 * ms, node: 1, retryAfter: 790 * ms, reset: 790 * ms},
		{t: 210 * ms, node: 2, retryAfter: 790 * ms, reset: 790 * ms},
		{t: 210 * ms, node: 0, retryAfter: 790 * ms, reset: 790 * ms},
	})
	wantStored(t, o, 0, 0, 13)
}

// A key owned by node 1 is broadcast 66.666 ms after node 0's keys, and
// its owner decides on its record wherever the round robin stands.
func TestOwnerOfAKeyAndItsPhase(t *testing.T) {
	c := fleet.OwnerConfig{Nodes: 3, Sync: 200 * ms}
	if got := []int{c.Owner(0), c.Owner(1), c.Owner(5), c.Owner(-1)}; !slices.Equal(got, []int{0, 1, 2, 0}) {
		t.Errorf("owners %v, want [0 1 2 0]", got)
	}
	if got := []int64{c.Offset(0), c.Offset(1), c.Offset(2)}; !slices.Equal(got, []int64{0, 66_666, 133_333}) {
		t.Errorf("offsets %v, want [0 66666 133333]", got)
	}
	l := algos.MustLimit(2, algos.Second, 2)
	runOwner(t, c, l, 1, []step{
		{t: 10 * ms, node: 0, allowed: true, remaining: 1, reset: 990 * ms}, // a peer: its hit reaches node 1
		{t: 10 * ms, node: 1, allowed: true, remaining: 0, reset: 990 * ms}, // the owner: 2
		{t: 10 * ms, node: 2, allowed: true, remaining: 1, reset: 990 * ms}, // a peer, blind: 3
		// Node 0 has not been told yet at 66 ms; at 66.666 ms it is.
		{t: 66 * ms, node: 0, allowed: true, remaining: 0, reset: 934 * ms},
		{t: 67 * ms, node: 1, retryAfter: 933 * ms, reset: 933 * ms},
		{t: 67 * ms, node: 2, retryAfter: 933 * ms, reset: 933 * ms},
	})
}

func TestOwnerConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  fleet.OwnerConfig
		name string
		ok   bool
	}{
		{fleet.OwnerConfig{Nodes: 3, Sync: 100 * ms}, "owner(3 nodes, broadcast 100ms)", true},
		{fleet.OwnerConfig{Nodes: 3, Sync: 100 * ms, Batched: true}, "owner(3 nodes, batched, broadcast 100ms)", true},
		{fleet.OwnerConfig{Nodes: 1}, "owner(1 node, synchronous)", true},
		{fleet.OwnerConfig{Nodes: 0}, "owner(0 nodes, synchronous)", false},
		{fleet.OwnerConfig{Nodes: 2, Sync: -1}, "owner(2 nodes, broadcast -1µs)", false},
	} {
		if got := c.cfg.Name(); got != c.name {
			t.Errorf("Name = %q, want %q", got, c.name)
		}
		spec, err := c.cfg.Spec()
		if (err == nil) != c.ok {
			t.Errorf("%s: Spec error %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if c.ok {
			if err := spec.Validate(); err != nil || spec.Name != c.name || spec.Clock != limiter.CallerClock {
				t.Errorf("%s: spec %q, %v, %v", c.name, spec.Name, spec.Clock, err)
			}
			if _, err := spec.Open(algos.MustLimit(1, 1, 1)); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
	o, _ := fleet.NewOwner(fleet.OwnerConfig{Nodes: 2}, algos.MustLimit(1, 1, 1))
	for _, bad := range []struct {
		key  int
		now  int64
		cost int64
	}{{-1, 0, 1}, {0, algos.MaxTime + 1, 1}, {0, 0, 0}} {
		if _, err := o.AllowWeighed(context.Background(), bad.key, bad.now, limiter.Weight{Cost: bad.cost}); err == nil {
			t.Errorf("key %d at %d cost %d: no error", bad.key, bad.now, bad.cost)
		}
	}
	if got := o.Handled(); !slices.Equal(got, []int64{0, 0}) {
		t.Errorf("failed calls reached nodes: %v", got)
	}
	if _, err := (fleet.OwnerConfig{Nodes: 2, Sync: 5}).Replay(algos.MustLimit(1, 1, 1), []fleet.Occurrence{{Node: 2, Cost: 1}}); err == nil {
		t.Error("Replay took node 2 of a fleet of 2")
	}
}

// Nodes·Rate is reached in both modes: the owner admits Rate, then every
// peer admits Rate on its copy of 0 before the next broadcast (at once,
// the owner must go first: a peer's hit it has seen stops it).
func TestOwnerReachesNodesTimesRate(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	for _, batched := range []bool{false, true} {
		c := fleet.OwnerConfig{Nodes: 3, Sync: 100 * ms, Batched: batched}
		events := []fleet.Occurrence{}
		for _, node := range []int{0, 0, 0, 1, 1, 1, 2, 2, 2} {
			events = append(events, fleet.Occurrence{At: 10 * ms, Node: node, Key: 0, Cost: 1})
		}
		ds, err := c.Replay(l, events)
		if err != nil {
			t.Fatal(err)
		}
		admitted := 0
		for _, d := range ds {
			if d.Allowed {
				admitted++
			}
		}
		if admitted != 9 {
			t.Errorf("%s: %d admitted, want Nodes·Rate = 9", c.Name(), admitted)
		}
	}
}
