package fleet_test

// THE LIVE CHECK. Each fleet shape is built here for real: three nodes in
// this process, each with its own state and lock, their timers real
// timers on goroutines, talking by direct calls under each other's locks,
// each behind the reference middleware (httplimit) on loopback HTTP. One
// key is driven open loop through them (live.Drive), and every node
// records what it did, when, by the clock it read under its lock: each
// decision (node, time, verdict) and each tick (a sync, a broadcast) as it
// really fired, late or not. The deterministic model is then fed those
// records (CachedCounter.Replay, OwnerConfig.Replay) and must come within
// 10% of the live run's admitted total and busiest aligned window.
// Everything is judged from the recorded times, so a starved machine
// changes what is offered and when the timers fire, not whether the model
// predicts it.
//
// The live nodes are written apart from the model, from the rules in
// doc.go, and they are in one process: a peer's hit reaches the owner, and
// a broadcast reaches every peer, under the nodes' locks (taken in node
// order, so that no two nodes' timers deadlock). An earlier version sent
// them one lock at a time, as a network would; with both cores loaded a
// hit or a broadcast then lagged by tens of ms, which the model (at once)
// does not know of, and 2 runs in 10 missed by 13% to 40%. What the check
// leaves to chance is what the model is fed: real timers firing late,
// requests arriving when the loaded machine lets them.

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/ceiling"
	"github.com/overshoot-go/overshoot/fleet"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/live"
)

// runClock is µs on the Unix epoch read off one monotonic clock: windows
// align to the epoch as the model's do, and the clock never steps.
type runClock struct {
	start time.Time
	base  int64
}

func newRunClock() runClock {
	now := time.Now()
	return runClock{start: now, base: now.UnixMicro()}
}

func (c runClock) now() int64 { return c.base + time.Since(c.start).Microseconds() }

// journal is what the nodes record, in the order they recorded it.
type journal struct {
	mu      sync.Mutex
	events  []fleet.Occurrence
	allowed []bool // per event; false for a tick
}

func (j *journal) add(e fleet.Occurrence, allowed bool) {
	j.mu.Lock()
	j.events = append(j.events, e)
	j.allowed = append(j.allowed, allowed)
	j.mu.Unlock()
}

// liveView is a node's copy of one key: the window, the count it was
// told, the units it admitted since (d), and, batched, the units not yet
// handed to the owner (q).
type liveView struct{ win, g, d, q int64 }

type liveRecord struct{ win, count int64 }

// add is n units of window win on r: a later window starts r over, an
// earlier one is dropped.
func (r *liveRecord) add(win, n int64) {
	switch {
	case r.win < win:
		r.win, r.count = win, n
	case r.win == win:
		r.count += n
	}
}

func (r *liveRecord) countOf(win int64) int64 {
	if r.win == win {
		return r.count
	}
	return 0
}

type liveNode struct {
	mu    sync.Mutex
	views map[string]*liveView
	recs  map[string]*liveRecord // the owner shape: the keys this node owns
}

// lock locks the nodes ids (ascending, no repeats) in that order; unlock
// unlocks them. Every holder of two nodes' locks takes them in node order.
func (f *liveFleet) lock(ids ...int) {
	for _, i := range ids {
		f.nodes[i].mu.Lock()
	}
}

func (f *liveFleet) unlock(ids ...int) {
	for _, i := range ids {
		f.nodes[i].mu.Unlock()
	}
}

// shape is a fleet shape as the live check builds it.
type shape struct {
	name    string
	owner   bool // the owner shape; otherwise the cached counter
	batched bool
}

// liveFleet is one shape on n nodes ticking every sync.
type liveFleet struct {
	shape shape
	n     int
	sync  int64 // µs
	l     algos.Limit
	clock runClock
	nodes []*liveNode
	store struct {
		mu   sync.Mutex
		recs map[string]*liveRecord
	}
	keys struct {
		mu  sync.Mutex
		idx map[string]int
	}
	j    journal
	stop chan struct{}
	wg   sync.WaitGroup
}

func startLiveFleet(sh shape, n int, sync time.Duration, l algos.Limit) *liveFleet {
	f := &liveFleet{shape: sh, n: n, sync: sync.Microseconds(), l: l, clock: newRunClock(), stop: make(chan struct{})}
	f.store.recs = map[string]*liveRecord{}
	f.keys.idx = map[string]int{}
	for range n {
		f.nodes = append(f.nodes, &liveNode{views: map[string]*liveView{}, recs: map[string]*liveRecord{}})
	}
	for i := range n {
		f.wg.Go(func() { f.ticker(i) })
	}
	return f
}

// halt stops every timer and waits for them.
func (f *liveFleet) halt() {
	close(f.stop)
	f.wg.Wait()
}

// owner is the node that owns key: FNV-1a of the key mod n.
func (f *liveFleet) owner(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(f.n))
}

// modelKey numbers key for the model, so that the number mod n is its
// owner (fleet.OwnerConfig.Owner): keys in the order first seen, each
// given the next free number of its owner's class.
func (f *liveFleet) modelKey(key string) int {
	f.keys.mu.Lock()
	defer f.keys.mu.Unlock()
	k, ok := f.keys.idx[key]
	if !ok {
		k = len(f.keys.idx)*f.n + f.owner(key)
		f.keys.idx[key] = k
	}
	return k
}

// ticker is node i's timer: its syncs (cached counter) or its broadcasts
// of the keys it owns (owner shape), at k·sync + i·sync/n on the run's
// clock, as the model schedules them; a late timer fires late, and a tick
// missed altogether is skipped, as time.Ticker skips.
func (f *liveFleet) ticker(i int) {
	off := int64(i) * f.sync / int64(f.n)
	for {
		now := f.clock.now()
		next := (algos.FloorDiv(now-off, f.sync)+1)*f.sync + off
		timer := time.NewTimer(time.Duration(next-now) * time.Microsecond)
		select {
		case <-f.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		if f.shape.owner {
			f.broadcast(i)
		} else {
			f.syncNode(i)
		}
	}
}

// limiter is node i as the middleware takes it.
func (f *liveFleet) limiter(i int) httplimit.Limiter {
	return httplimit.LimiterFunc(func(_ context.Context, key string) (algos.Decision, error) {
		if f.shape.owner {
			return f.allowOwner(i, key), nil
		}
		return f.allowCounter(i, key), nil
	})
}

func (f *liveFleet) window(now int64) (idx, end int64) {
	idx = algos.FloorDiv(now, f.l.Window)
	return idx, (idx+1)*f.l.Window - now
}

// decideOnView admits one unit on node's copy v of a key in window idx.
func (f *liveFleet) decideOnView(v *liveView, end int64) algos.Decision {
	d := algos.Decision{Reset: end}
	if v.g+v.d+1 <= f.l.Rate {
		v.d++
		v.q++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	d.Remaining = max(0, f.l.Rate-v.g-v.d)
	return d
}

// view is node's copy of key for window idx, started over at 0 when it
// holds another window (or none).
func (nd *liveNode) view(key string, idx int64) *liveView {
	v := nd.views[key]
	if v == nil || v.win != idx {
		v = &liveView{win: idx}
		nd.views[key] = v
	}
	return v
}

// allowCounter is the cached counter's node i: its copy plus its own.
func (f *liveFleet) allowCounter(i int, key string) algos.Decision {
	mk := f.modelKey(key)
	nd := f.nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	now := f.clock.now()
	idx, end := f.window(now)
	d := f.decideOnView(nd.view(key, idx), end)
	f.j.add(fleet.Occurrence{At: now, Node: i, Key: mk, Cost: 1}, d.Allowed)
	return d
}

// syncNode is the cached counter's sync of node i: flush what it admitted
// into the shared store, read the store back.
func (f *liveFleet) syncNode(i int) {
	nd := f.nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	f.store.mu.Lock()
	at := f.clock.now()
	atWin, _ := f.window(at)
	for key, v := range nd.views {
		r := f.store.recs[key]
		if r == nil {
			r = &liveRecord{win: v.win}
			f.store.recs[key] = r
		}
		r.add(v.win, v.d)
		v.d, v.q = 0, 0
		v.win = max(v.win, atWin)
		v.g = r.countOf(v.win)
	}
	f.store.mu.Unlock()
	f.j.add(fleet.Occurrence{At: at, Node: i, Tick: true}, false)
}

// allowOwner is node i of the owner shape: the owner decides on its
// record; a peer on its copy, then sends its hit to the owner (at once:
// under the owner's lock too) or queues it (batched).
func (f *liveFleet) allowOwner(i int, key string) algos.Decision {
	mk := f.modelKey(key)
	o := f.owner(key)
	held := []int{i}
	if i != o && !f.shape.batched {
		held = []int{min(i, o), max(i, o)}
	}
	f.lock(held...)
	defer f.unlock(held...)
	nd := f.nodes[i]
	now := f.clock.now()
	idx, end := f.window(now)
	var d algos.Decision
	if i == o {
		r := nd.recs[key]
		if r == nil {
			r = &liveRecord{win: idx}
			nd.recs[key] = r
		}
		count := r.countOf(idx)
		d = algos.Decision{Reset: end}
		if count+1 <= f.l.Rate {
			count++
			d.Allowed = true
			r.win, r.count = idx, count
		} else {
			d.RetryAfter = end
		}
		d.Remaining = max(0, f.l.Rate-count)
	} else {
		d = f.decideOnView(nd.view(key, idx), end)
		if d.Allowed && !f.shape.batched {
			on := f.nodes[o]
			r := on.recs[key]
			if r == nil {
				r = &liveRecord{win: idx}
				on.recs[key] = r
			}
			r.add(idx, 1)
		}
	}
	f.j.add(fleet.Occurrence{At: now, Node: i, Key: mk, Cost: 1}, d.Allowed)
	return d
}

// broadcast is owner o's broadcast of every key it owns, under every
// node's lock: batched, it takes every peer's queue into its records; it
// reads them; it gives each peer its count, with nothing admitted since.
func (f *liveFleet) broadcast(o int) {
	all := make([]int, f.n)
	for i := range all {
		all[i] = i
	}
	f.lock(all...)
	defer f.unlock(all...)
	on := f.nodes[o]
	if f.shape.batched {
		for p, nd := range f.nodes {
			if p == o {
				continue
			}
			for key, v := range nd.views {
				if f.owner(key) != o || v.q == 0 {
					continue
				}
				r := on.recs[key]
				if r == nil {
					r = &liveRecord{win: v.win}
					on.recs[key] = r
				}
				r.add(v.win, v.q)
			}
		}
	}
	at := f.clock.now()
	atWin, _ := f.window(at)
	for p, nd := range f.nodes {
		if p == o {
			continue
		}
		for key, r := range on.recs {
			nd.views[key] = &liveView{win: atWin, g: r.countOf(atWin)}
		}
	}
	f.j.add(fleet.Occurrence{At: at, Node: o, Tick: true}, false)
}

// outcome is one live run and its model's prediction.
type outcome struct {
	shape                   string
	sync                    time.Duration
	offered, failed         int
	firstErr                error
	firstDiff               string // where the model first decided otherwise
	liveAdmitted, modelAdm  int
	liveBusiest, modelBusy  int
	windows                 int // full windows in the run
	fullAdmitted            int // admitted in them
	schedAdm, schedBusy     int // the model on its own tick schedule
	ticks, lateTicks        int
	maxLate                 int64 // µs
	clientAdmitted, decided int
}

func pct(model, live int) float64 {
	if live == 0 {
		return 0
	}
	return 100 * float64(model-live) / float64(live)
}

// admittedBy counts the admits of events (ticks excluded) by allowed, in
// total and in the busiest aligned window, and in the windows wholly
// inside [first, last] event.
func admittedBy(events []fleet.Occurrence, allowed func(i int) bool, w int64) (total, busiest, full, fullAdmitted int) {
	per := map[int64]int{}
	first, last := int64(0), int64(0)
	seen := false
	for i, e := range events {
		if e.Tick {
			continue
		}
		if !seen {
			first, seen = e.At, true
		}
		last = e.At
		if allowed(i) {
			total++
			per[algos.FloorDiv(e.At, w)]++
		}
	}
	for _, n := range per {
		busiest = max(busiest, n)
	}
	if seen {
		for win := algos.FloorDiv(first, w) + 1; (win+1)*w-1 <= last; win++ {
			full++
			fullAdmitted += per[win]
		}
	}
	return total, busiest, full, fullAdmitted
}

// runLive drives one key through sh on three nodes ticking every sync,
// replays the nodes' records on the model and returns both.
func runLive(sh shape, sync time.Duration, l algos.Limit, rate int, dur time.Duration) (outcome, error) {
	const nodes = 3
	f := startLiveFleet(sh, nodes, sync, l)
	halted := false
	defer func() {
		if !halted {
			f.halt()
		}
	}()
	fl, err := ceiling.Start(nodes, func(i int) (http.Handler, error) {
		m, err := httplimit.New(f.limiter(i), httplimit.Options{Quota: l.Rate, Key: httplimit.ByHeader("X-API-Key")})
		if err != nil {
			return nil, err
		}
		return m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), nil
	})
	if err != nil {
		return outcome{}, err
	}
	defer fl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recs, err := live.Drive(ctx, live.HTTP{Nodes: fl.URLs()}, live.Load{Rate: rate, Duration: dur, Timeout: 30 * time.Second, MaxInFlight: 4 * rate})
	if err != nil {
		return outcome{}, err
	}
	f.halt()
	halted = true

	out := outcome{shape: sh.name, sync: sync, offered: len(recs)}
	for _, r := range recs {
		switch {
		case !r.IsDecided():
			out.failed++
			if out.firstErr == nil {
				out.firstErr = r.Err
			}
		case r.Allowed:
			out.clientAdmitted++
		}
	}
	// The model takes the records in time order; a tick and a request of
	// the same µs in the order the nodes recorded them.
	idx := make([]int, len(f.j.events))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(f.j.events[a].At, f.j.events[b].At) })
	events := make([]fleet.Occurrence, len(idx))
	liveAllowed := make([]bool, len(idx))
	for i, k := range idx {
		events[i], liveAllowed[i] = f.j.events[k], f.j.allowed[k]
		if !events[i].Tick {
			out.decided++
		}
	}
	s := sync.Microseconds()
	replay := func(events []fleet.Occurrence) ([]algos.Decision, error) {
		if sh.owner {
			return fleet.OwnerConfig{Nodes: nodes, Sync: s, Batched: sh.batched}.Replay(l, events)
		}
		return fleet.CachedCounter{Nodes: nodes, Sync: s}.Replay(l, events)
	}
	ds, err := replay(events)
	if err != nil {
		return outcome{}, err
	}
	for i, e := range events {
		if !e.Tick && ds[i].Allowed != liveAllowed[i] {
			var w strings.Builder
			for k := max(0, i-12); k < min(len(events), i+4); k++ {
				fmt.Fprintf(&w, "  %d %+v live %v model %v\n", k, events[k], liveAllowed[k], ds[k].Allowed)
			}
			out.firstDiff = fmt.Sprintf("event %d of %d:\n%s", i, len(events), w.String())
			break
		}
	}
	out.liveAdmitted, out.liveBusiest, out.windows, out.fullAdmitted = admittedBy(events, func(i int) bool { return liveAllowed[i] }, l.Window)
	out.modelAdm, out.modelBusy, _, _ = admittedBy(events, func(i int) bool { return ds[i].Allowed }, l.Window)

	// The model on its own schedule: the same requests on the same nodes,
	// the ticks where the model puts them (k·S + j·S/n, before the
	// requests of the same µs) instead of where the timers fired.
	var onSchedule []fleet.Occurrence
	off := func(j int) int64 { return int64(j) * s / nodes }
	for _, e := range events {
		if e.Tick {
			out.ticks++
			late := e.At - (algos.FloorDiv(e.At-off(e.Node), s)*s + off(e.Node))
			out.maxLate = max(out.maxLate, late)
			if late > 1000 {
				out.lateTicks++
			}
			continue
		}
		if n := len(onSchedule); n > 0 {
			var ticks []fleet.Occurrence
			prev := onSchedule[n-1].At
			for j := range nodes {
				for at := (algos.FloorDiv(prev-off(j), s)+1)*s + off(j); at <= e.At; at += s {
					ticks = append(ticks, fleet.Occurrence{At: at, Node: j, Tick: true})
				}
			}
			slices.SortStableFunc(ticks, func(a, b fleet.Occurrence) int { return cmp.Compare(a.At, b.At) })
			onSchedule = append(onSchedule, ticks...)
		}
		onSchedule = append(onSchedule, e)
	}
	ds, err = replay(onSchedule)
	if err != nil {
		return outcome{}, err
	}
	out.schedAdm, out.schedBusy, _, _ = admittedBy(onSchedule, func(i int) bool { return ds[i].Allowed }, l.Window)
	return out, nil
}

// The reference middleware on three nodes in each shape, at S = 50, 100
// and 500 ms, one key offered 4 times the limit of 100 a second for 3 s:
// the model fed the nodes' records predicts the live run's admitted total
// and busiest window within 10%. The nine runs share the machine at once
// (each is judged from its own records, so sharing changes what is
// offered, not whether it is predicted); the table they print is the
// measured overshoot of each shape, and, unchecked, what the model says on
// its own tick schedule (the timers keeping perfect time).
func TestLiveShapesArePredictedByTheirModels(t *testing.T) {
	if testing.Short() {
		t.Skip("drives nine live fleets for 3 s")
	}
	l := algos.MustLimit(100, algos.Second, 100)
	const rate, dur = 400, 3 * time.Second
	type run struct {
		sh  shape
		s   time.Duration
		out outcome
		err error
	}
	var runs []*run
	for _, sh := range []shape{
		{name: "cached counter"},
		{name: "owner, hits at once", owner: true},
		{name: "owner, batched hits", owner: true, batched: true},
	} {
		for _, s := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond} {
			runs = append(runs, &run{sh: sh, s: s})
		}
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() { r.out, r.err = runLive(r.sh, r.s, l, rate, dur) })
	}
	wg.Wait()

	var b strings.Builder
	fmt.Fprintf(&b, "limit %v, one key offered %d a second for %v through 3 nodes\n", l, rate, dur)
	fmt.Fprintf(&b, "%-20s %6s %7s %8s %7s %7s %7s %7s %7s %8s %8s %7s %6s %10s\n",
		"shape", "S", "offered", "admitted", "model", "err", "busiest", "model", "err", "sched", "busiest", "per win", "over", "late>1ms")
	for _, r := range runs {
		o := r.out
		t.Run(fmt.Sprintf("%s/%v", strings.ReplaceAll(r.sh.name, " ", "_"), r.s), func(t *testing.T) {
			if r.err != nil {
				t.Fatal(r.err)
			}
			// A request the client gave up on may still have been decided:
			// the nodes' records are what the model is fed, and the
			// client's must agree with them where it has answers.
			if o.failed > 0 {
				t.Logf("%d of %d requests failed at the client (first: %v)", o.failed, o.offered, o.firstErr)
			}
			if o.clientAdmitted > o.liveAdmitted || o.offered-o.failed > o.decided ||
				o.failed == 0 && (o.clientAdmitted != o.liveAdmitted || o.decided != o.offered) {
				t.Errorf("the client saw %d admits of %d decided, the nodes recorded %d of %d", o.clientAdmitted, o.offered-o.failed, o.liveAdmitted, o.decided)
			}
			if o.firstDiff != "" {
				t.Logf("the model first decided otherwise at %s", o.firstDiff)
			}
			if e := pct(o.modelAdm, o.liveAdmitted); e > 10 || e < -10 {
				t.Errorf("admitted: live %d, model %d (%+.1f%%)", o.liveAdmitted, o.modelAdm, e)
			}
			if e := pct(o.modelBusy, o.liveBusiest); e > 10 || e < -10 {
				t.Errorf("busiest window: live %d, model %d (%+.1f%%)", o.liveBusiest, o.modelBusy, e)
			}
		})
		perWin := 0.0
		if o.windows > 0 {
			perWin = float64(o.fullAdmitted) / float64(o.windows)
		}
		fmt.Fprintf(&b, "%-20s %6v %7d %8d %7d %+6.1f%% %7d %7d %+6.1f%% %8d %8d %7.1f %+5.0f%% %4d/%-3d %3dms\n",
			r.sh.name, r.s, o.offered, o.liveAdmitted, o.modelAdm, pct(o.modelAdm, o.liveAdmitted),
			o.liveBusiest, o.modelBusy, pct(o.modelBusy, o.liveBusiest), o.schedAdm, o.schedBusy,
			perWin, 100*(perWin/float64(l.Rate)-1), o.lateTicks, o.ticks, o.maxLate/1000)
	}
	t.Logf("\n%s", b.String())
}
