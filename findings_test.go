package overshoot_test

// The published findings, one test per claim. Each test measures its
// number on the table's conditions (scenarios.DefaultOptions: 100 requests
// per second per client, 20 s per run, seeds 1-10, 4 nodes, a 1 ms round
// trip with ±25% on each leg), logs it, and fails if it moves past the
// bound the claim states. The golden files golden/table.txt, skew.txt and
// skew.svg are checked here too, from the same runs.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/adapters/redisrate"
	"github.com/overshoot-go/overshoot/adapters/xtimerate"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
	"github.com/overshoot-go/overshoot/traffic"
)

// The table and the sweep are computed once per test binary and shared,
// or merged from their shards (shard_test.go).
var (
	findingsTable = shardedMatrix("table", limiter.FromAlgorithms(append(algos.All(), algos.FirstHitWindow)...), scenarios.DefaultOptions())
	findingsSweep = shardedCurve("skew", limiter.FromAlgorithms(algos.All()...), scenarios.DefaultOptions(), scenarios.SkewCurve(scenarios.DefaultSkews()))
)

func findingsMatrix(t *testing.T) scenarios.Matrix {
	t.Helper()
	return findingsTable.result(t)
}

func findingsCell(t *testing.T, r scenarios.Matrix, algo string, d model.Deployment, clients ...traffic.ClientKind) scenarios.Cell {
	t.Helper()
	c, ok := r.Cell(algo, d, clients...)
	if !ok {
		t.Fatalf("the table has no cell for %s, %s", algo, d)
	}
	return c
}

func findingsSeedRuns(t *testing.T, r scenarios.Matrix, algo string, d model.Deployment) []scenarios.SeedRun {
	t.Helper()
	runs := r.CellSeedRuns(algo, d)
	if len(runs) == 0 {
		t.Fatalf("the table has no runs for %s, %s", algo, d)
	}
	return runs
}

var bucketNames = []string{"token-bucket", "leaky-bucket", "gcra"}
var windowNames = []string{"fixed-window", "sliding-log", "sliding-counter"}

// printed is x as the docs print it, rounded to digits decimals: a
// number the docs state is held at the precision it is stated in.
func printed(x float64, digits int) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	if err != nil {
		panic(err)
	}
	return v
}

// stated fails t unless the values, printed to digits decimals, run from
// exactly lo to exactly hi: the docs say "lo to hi" (or, lo == hi, the
// one number) of them. These runs are deterministic, so a stated range is
// the measured one, and a number that moves past either end, or leaves an
// end unreached, makes the docs' sentence wrong.
func stated(t *testing.T, what string, digits int, lo, hi float64, values ...float64) {
	t.Helper()
	if len(values) == 0 {
		t.Errorf("%s: nothing measured, the docs state %.*f to %.*f", what, digits, lo, digits, hi)
		return
	}
	least, most := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		least, most = min(least, printed(v, digits)), max(most, printed(v, digits))
	}
	if least != lo || most != hi {
		t.Errorf("%s: measured %.*f to %.*f, the docs state %.*f to %.*f", what, digits, least, digits, most, digits, lo, digits, hi)
	}
}

func TestGoldenTable(t *testing.T) {
	m := findingsMatrix(t)
	golden.CheckWriteTo(t, "table.txt", m.WriteTo)
	golden.CheckWrite(t, "table.json", m.WriteJSON)
	golden.CheckWrite(t, "table.csv", m.WriteCSV)
}

func TestGoldenSkew(t *testing.T) {
	t.Parallel() // deterministic; overlaps the live tests' waiting
	s := scenarios.SkewSweep{Curve: findingsSweep.result(t)}
	golden.CheckWriteTo(t, "skew.txt", s.WriteTo)
	golden.CheckWriteTo(t, "skew.svg", s.WriteSVG)
	golden.CheckWrite(t, "skew.json", s.WriteJSON)
	golden.CheckWrite(t, "skew.csv", s.WriteCSV)
}

// At 50 ms of skew the token bucket refuses the flood nothing, on every
// seed, so its flood peak is the flood's own (5.94x, above 5x), while the
// leaky bucket and GCRA peak at 2.02x to 2.03x (every client) and admit
// within 1% of their ideal run on the flood.
//
// Badge: token bucket under skew
func TestFindingTokenBucketCollapsesUnderSkew(t *testing.T) {
	t.Parallel() // deterministic; overlaps the live tests' waiting
	r := findingsMatrix(t)
	tb := findingsCell(t, r, "token-bucket", model.NodeClock, traffic.Flood)
	least := 1.0
	for _, run := range findingsSeedRuns(t, r, "token-bucket", model.NodeClock) {
		f := run.Clients[traffic.Flood]
		least = min(least, float64(f.Admitted)/float64(f.Requests))
		if f.Admitted != f.Requests {
			t.Errorf("seed %d: the token bucket refused the flood %d of %d requests; the claim is that it refuses nothing", run.Seed, f.Requests-f.Admitted, f.Requests)
		}
	}
	t.Logf("token bucket, flood, clocks 50 ms apart: peak %.2fx (seed %d), over the ideal %+.1f%%, admitted at least %.1f%% of the flood on every seed",
		tb.PeakX, tb.PeakSeed, tb.Over, 100*least)
	if tb.PeakX <= 5 {
		t.Errorf("the token bucket's flood peak is %.2fx, not above 5x", tb.PeakX)
	}
	stated(t, "the token bucket's flood peak at 50 ms of skew (x)", 2, 5.94, 5.94, tb.PeakX)
	var bucketPeaks []float64
	if s, err := findingsSweep.get(); err == nil {
		for _, ms := range []int64{0, 10, 20, 50} {
			p, _ := s.At("token-bucket", ms*1000)
			t.Logf("token bucket peak at %d ms: %.2fx", ms, p.PeakX)
		}
	}
	headline := fmt.Sprintf("token bucket %.2fx at 50 ms skew", tb.PeakX)
	defer func() { t.Logf("measured: %s", headline) }()
	for _, name := range []string{"leaky-bucket", "gcra"} {
		all := findingsCell(t, r, name, model.NodeClock)
		flood := findingsCell(t, r, name, model.NodeClock, traffic.Flood)
		boundary := findingsCell(t, r, name, model.NodeClock, traffic.Boundary)
		onoff := findingsCell(t, r, name, model.NodeClock, traffic.OnOff)
		t.Logf("%s, clocks 50 ms apart: peak %.2fx (worst client %s); over the ideal: flood %+.1f%%, boundary %+.1f%%, on-off %+.1f%%",
			name, all.PeakX, all.PeakClient, flood.Over, boundary.Over, onoff.Over)
		headline += fmt.Sprintf(", %s %.2fx", name, all.PeakX)
		bucketPeaks = append(bucketPeaks, all.PeakX)
		if all.PeakX > 2.1 {
			t.Errorf("%s peaks at %.2fx under 50 ms of skew, above 2.1x", name, all.PeakX)
		}
		if flood.Over > 1 || flood.Over < -1 {
			t.Errorf("%s admits %+.1f%% against its ideal on the flood, not within 1%%", name, flood.Over)
		}
	}
	stated(t, "leaky bucket's and GCRA's peaks at 50 ms of skew (x)", 2, 2.02, 2.03, bucketPeaks...)
}

// With the store's clock every algorithm peaks where it peaks on one node
// (the table's cell: worst seed, worst client). Measured: equal for every
// algorithm but the fixed window, whose boundary bursts peak slightly lower,
// because half a round trip carries the last few requests of the burst
// "just before" an edge past it in true time: at most one leg (625 µs) of a
// burst that sends a request every 100 µs, 7 requests (the docs state
// the 3 measured). Client by client,
// the store clock can be one admit above the ideal, no more: each leg's
// ±125 µs of jitter can squeeze one more of a client's own requests into a
// window (the honest client's 91st in one second). The claim is about the
// same requests in both columns, so it is made on the five open-loop
// clients; a closed-loop client sends what its answers direct, and those
// arrive half a round trip later behind a store.
//
// Badge: store clock
func TestFindingStoreClockRestoresOneNodePeaks(t *testing.T) {
	r := findingsMatrix(t)
	equal := 0
	defer func() {
		t.Logf("measured: store-clock peak equals the ideal for %d of %d algorithms", equal, len(r.Algorithms))
	}()
	for _, name := range r.Algorithms {
		store := findingsCell(t, r, name, model.StoreClock, traffic.OpenLoopClients()...)
		ideal := findingsCell(t, r, name, model.Ideal, traffic.OpenLoopClients()...)
		t.Logf("%s: store clock %.2fx (%s), ideal %.2fx (%s), %d store-clock runs broke the promise",
			name, store.PeakX, store.PeakClient, ideal.PeakX, ideal.PeakClient, store.Violations)
		if store.Peak == ideal.Peak {
			equal++
		}
		if name == "fixed-window" {
			d := ideal.Peak - store.Peak
			if d < 0 || d > 7 {
				t.Errorf("fixed window: the store clock peaks %d admits below the ideal, outside 0-7", d)
			}
			stated(t, "fixed window: admits the store clock's peak is below the ideal's", 0, 3, 3, float64(d))
		} else if store.Peak != ideal.Peak {
			t.Errorf("%s: the store clock peaks at %.2fx, the ideal at %.2fx", name, store.PeakX, ideal.PeakX)
		}
		if store.Violations != 0 {
			t.Errorf("%s: %d store-clock runs broke the promise", name, store.Violations)
		}
		for _, c := range traffic.OpenLoopClients() {
			sc := findingsCell(t, r, name, model.StoreClock, c)
			ic := findingsCell(t, r, name, model.Ideal, c)
			if sc.Peak != ic.Peak {
				t.Logf("  %s, %s: store clock %.2fx, ideal %.2fx", name, c, sc.PeakX, ic.PeakX)
			}
			if sc.Peak > ic.Peak+1 {
				t.Errorf("%s, %s: the store clock peaks %d admits above the ideal", name, c, sc.Peak-ic.Peak)
			}
		}
	}
}

// Splitting the limit across nodes (each enforcing L/N on its own clock,
// restarting every 5 s on average) lets more through than the ideal on
// every seed, by at most 40% on the worst attack client; the window
// algorithms turn the honest client away 1-10% of the time. Measured: the
// buckets' share of the burst absorbs the honest client's unevenness, and
// they turn it away less than 1% of the time. The docs state the
// measured ranges: 21.6 to 31.0% over (the worst client of each limiter),
// the honest client turned away up to 7.9%.
//
// Badge: local split
func TestFindingLocalSplitOvershootsAndRejectsHonest(t *testing.T) {
	r := findingsMatrix(t)
	worstOver, worstHonest := 0.0, 0.0
	var overs []float64
	defer func() {
		t.Logf("measured: up to %+.1f%% over the ideal, honest turned away up to %.1f%%", worstOver, worstHonest)
	}()
	for _, name := range r.Algorithms {
		cell := findingsCell(t, r, name, model.LocalSplit)
		ideal := findingsSeedRuns(t, r, name, model.Ideal)
		least := 1 << 30
		for s, run := range findingsSeedRuns(t, r, name, model.LocalSplit) {
			least = min(least, run.Clients[traffic.Flood].Admitted-ideal[s].Clients[traffic.Flood].Admitted)
		}
		t.Logf("%s, local split: worst over %+.1f%% (%s, seed %d), flood at least %+d admits on every seed, honest turned away %.1f%%",
			name, cell.Over, cell.OverClient, cell.OverSeed, least, cell.HonestRejected)
		worstOver, worstHonest = max(worstOver, cell.Over), max(worstHonest, cell.HonestRejected)
		overs = append(overs, cell.Over)
		if least <= 0 {
			t.Errorf("%s: on some seed the split admitted %+d against the ideal on the flood", name, least)
		}
		if cell.Over > 40 {
			t.Errorf("%s: the split lets %+.1f%% through, beyond 40%%", name, cell.Over)
		}
		if slices.Contains(windowNames, name) && (cell.HonestRejected < 1 || cell.HonestRejected > 10) {
			t.Errorf("%s: the honest client is turned away %.1f%% of the time, outside 1-10%%", name, cell.HonestRejected)
		}
		if slices.Contains(bucketNames, name) && cell.HonestRejected >= 1 {
			t.Errorf("%s: the honest client is turned away %.1f%% of the time, 1%% or more", name, cell.HonestRejected)
		}
	}
	stated(t, "local split: over the ideal, each limiter's worst client (%)", 1, 21.6, 31.0, overs...)
	stated(t, "local split: the most the honest client is turned away (%)", 1, 7.9, 7.9, worstHonest)
}

// After the store is wiped (at 10.5 s, mid-window), the flood gets more
// admits in the next second than the ideal run gives it there, on every
// seed, for each of the six. Measured: not the sliding log, which by construction admits at most
// L in any window after the wipe; its fresh burst shows instead as a peak
// twice its ideal in the window across the wipe. How many more follows
// from what the wipe forgets, with the flood (5L a second) spending
// whatever it is given: a bucket is handed a fresh burst of B (at most B
// more, and at least B − 1: the ideal's bucket holds under one token when
// the flood finds it), the fixed window a fresh count of L for the rest of
// its window (the flood sends 2.5L there), the sliding counter the weight
// of the previous window it forgets, L·p at phase p, ±1 for the estimate's
// rounding; and the sliding log, which holds L in any window on either side
// of the wipe, at most 2L in the window across it, and exactly that.
//
// Badge: wiped store
func TestFindingWipedStoreHandsOutFreshBurst(t *testing.T) {
	r := findingsMatrix(t)
	l := r.Options.Limit
	phase := float64(r.Options.WipeAt%l.Window) / float64(l.Window)
	fewest := 1 << 30
	defer func() {
		t.Logf("measured: at least %+d flood admits beyond the ideal in the second after the wipe", fewest)
	}()
	for _, name := range algos.Names() {
		wiped, ideal := findingsSeedRuns(t, r, name, model.StoreWiped), findingsSeedRuns(t, r, name, model.Ideal)
		least, most := 1<<30, -1<<30
		for s := range wiped {
			excess := wiped[s].Clients[traffic.Flood].AfterWipe - ideal[s].Clients[traffic.Flood].AfterWipe
			least, most = min(least, excess), max(most, excess)
		}
		t.Logf("%s: admits in the second after the wipe beyond the ideal, flood: %+d to %+d over the seeds", name, least, most)
		if name == "sliding-log" {
			w := findingsCell(t, r, name, model.StoreWiped, traffic.Flood)
			i := findingsCell(t, r, name, model.Ideal, traffic.Flood)
			t.Logf("sliding log, flood: peak %.2fx with the wipe, %.2fx ideal", w.PeakX, i.PeakX)
			if w.PeakX < 1.5 || i.PeakX > 1 {
				t.Errorf("sliding log: the wipe's peak %.2fx (ideal %.2fx) is not a fresh burst", w.PeakX, i.PeakX)
			}
			if int64(w.Peak) != 2*l.Rate {
				t.Errorf("sliding log: the wipe's peak is %d admits in one window, want 2L = %d: L on each side of the wipe", w.Peak, 2*l.Rate)
			}
			continue
		}
		fewest = min(fewest, least)
		if least <= 0 {
			t.Errorf("%s: on some seed the wipe gave %+d admits in the next second", name, least)
		}
		var lo, hi float64 // the fresh burst's bounds
		switch {
		case slices.Contains(bucketNames, name):
			lo, hi = float64(l.Burst-1), float64(l.Burst)
		case name == "fixed-window":
			lo, hi = float64(l.Rate-1), float64(l.Rate)
		case name == "sliding-counter":
			lo, hi = float64(l.Rate)*phase-1, float64(l.Rate)*phase+1
		default:
			t.Fatalf("%s: no bound on its fresh burst", name)
		}
		if float64(least) < lo || float64(most) > hi {
			t.Errorf("%s: the wipe gave %+d to %+d admits in the next second, outside its fresh burst's [%+.0f, %+.0f]", name, least, most, lo, hi)
		}
	}
}

// A client that honours every Retry-After, closed-loop, gets more from the
// token bucket under skew than the flood does: with node clocks 50 ms
// apart it peaks at 9x the limit or more in one second (the flood: under
// 6x). Under that skew the token bucket admits nearly all it is offered,
// and this client, which sends again as soon as an admit arrives (at the
// boundary client's pace, a request per 100 µs), offers more than the
// flood's 5x. Leaky bucket and GCRA, whose state never moves back, hold
// the same client to 2.1x. The docs state the measured 10.11x, and
// 2.02x for the leaky bucket and GCRA; and that the skew sweep (the worst
// of every client) reads 10.04x to 10.14x for the token bucket from 40 ms
// of skew on.
//
// Badge: Retry-After client under skew
func TestFindingRetryAfterClientTakesMoreThanTheFloodUnderSkew(t *testing.T) {
	r := findingsMatrix(t)
	tb := findingsCell(t, r, "token-bucket", model.NodeClock, traffic.RetryAfter)
	flood := findingsCell(t, r, "token-bucket", model.NodeClock, traffic.Flood)
	t.Logf("token bucket, node clocks 50 ms apart: the Retry-After client peaks at %.2fx (seed %d), the flood at %.2fx", tb.PeakX, tb.PeakSeed, flood.PeakX)
	if tb.PeakX < 9 || tb.PeakX <= flood.PeakX {
		t.Errorf("the Retry-After client peaks at %.2fx from the token bucket, want 9x or more and above the flood's %.2fx", tb.PeakX, flood.PeakX)
	}
	stated(t, "the Retry-After client's peak from the token bucket at 50 ms (x)", 2, 10.11, 10.11, tb.PeakX)
	var held []float64
	for _, name := range []string{"leaky-bucket", "gcra"} {
		c := findingsCell(t, r, name, model.NodeClock, traffic.RetryAfter)
		t.Logf("%s: the Retry-After client peaks at %.2fx", name, c.PeakX)
		if c.PeakX > 2.1 {
			t.Errorf("%s: the Retry-After client peaks at %.2fx, want at most 2.1x", name, c.PeakX)
		}
		held = append(held, c.PeakX)
	}
	if most := slices.Max(held); printed(most, 2) != 2.02 {
		t.Errorf("leaky bucket and GCRA hold the Retry-After client to %.2fx, the docs state 2.02x", most)
	}
	swept, sweep := []float64(nil), findingsSweep.result(t) // once: under -overshoot.merge it logs where it came from
	for _, skew := range scenarios.DefaultSkews() {
		if p, ok := sweep.At("token-bucket", skew); ok && skew >= 40_000 {
			swept = append(swept, p.PeakX)
		}
	}
	stated(t, "the skew sweep's token bucket from 40 ms on (x)", 2, 10.04, 10.14, swept...)
}

// A fixed window anchored at the key's first hit (INCR, then EXPIRE on the
// first hit) doubles at its own edge: the first-hit client, which starts
// the window with one request and bursts just before and just after its
// end, gets 2L-1 admits within one window on one node with a true clock, on
// every seed, and behind a store at least 1.95x and at most 2L-1 (all it
// sends within one window: L-1 before the edge and L after), while the
// limiter's own promise (at most L in each window from the first admit
// after the previous one ends) is never broken there. Measured behind a
// store: 2L-2 on seed 1, where a leg's jitter carries one request of the
// burst before the edge past it, 2L-1 on the others. The aligned fixed
// window, whose edges the first-hit client misses, admits it at most 1.01x
// (measured, and stated: 1.00x).
//
// Badge: first-hit window at its edge
func TestFindingFirstHitWindowDoublesAtItsOwnEdge(t *testing.T) {
	r := findingsMatrix(t)
	name := algos.FirstHitWindow.Name
	want := 2*int(r.Options.Limit.Rate) - 1
	for _, run := range findingsSeedRuns(t, r, name, model.Ideal) {
		if got := run.Clients[traffic.FirstHit].Peak; got != want {
			t.Errorf("seed %d: the first-hit client's peak is %d admits in one window, want 2L-1 = %d", run.Seed, got, want)
		}
	}
	var storePeaks []float64
	for _, run := range findingsSeedRuns(t, r, name, model.StoreClock) {
		got := run.Clients[traffic.FirstHit].Peak
		if got > want {
			t.Errorf("seed %d: behind a store the first-hit client's peak is %d admits in one window, above the 2L-1 = %d it sends there", run.Seed, got, want)
		}
		storePeaks = append(storePeaks, float64(got))
	}
	stated(t, "behind a store, the first-hit client's peak on each seed (admits)", 0, 198, 199, storePeaks...)
	ideal := findingsCell(t, r, name, model.Ideal, traffic.FirstHit)
	store := findingsCell(t, r, name, model.StoreClock, traffic.FirstHit)
	aligned := findingsCell(t, r, "fixed-window", model.Ideal, traffic.FirstHit)
	t.Logf("first-hit window, first-hit client: ideal %.2fx, store clock %.2fx; aligned fixed window %.2fx", ideal.PeakX, store.PeakX, aligned.PeakX)
	if store.PeakX < 1.95 {
		t.Errorf("behind a store the first-hit client peaks at %.2fx, want at least 1.95x", store.PeakX)
	}
	if aligned.PeakX > 1.01 {
		t.Errorf("the aligned fixed window admits the first-hit client %.2fx, want at most 1.01x", aligned.PeakX)
	}
	stated(t, "the aligned fixed window's peak for the first-hit client (x)", 2, 1.00, 1.00, aligned.PeakX)
	for _, d := range []model.Deployment{model.Ideal, model.StoreClock} {
		if c := findingsCell(t, r, name, d); c.Violations != 0 {
			t.Errorf("%s: %d runs broke the anchored window's promise", d, c.Violations)
		}
	}
}

// Boundary bursts peak at exactly 2× the limit for the fixed window, on one
// node with a true clock, on every seed.
//
// Badge: fixed window at an edge
func TestFindingFixedWindowDoublesAtBoundary(t *testing.T) {
	r := findingsMatrix(t)
	l := r.Options.Limit.Rate
	for _, run := range findingsSeedRuns(t, r, "fixed-window", model.Ideal) {
		p := run.Clients[traffic.Boundary].Peak
		if int64(p) != 2*l {
			t.Errorf("seed %d: the fixed window's boundary peak is %d, not 2 × %d", run.Seed, p, l)
		}
	}
	c := findingsCell(t, r, "fixed-window", model.Ideal, traffic.Boundary)
	t.Logf("fixed window, boundary bursts, ideal: peak %.2fx (every seed checked), promise violations %d", c.PeakX, c.Violations)
	t.Logf("measured: boundary peak %.2fx", c.PeakX)
}

// The sliding log never admits more than the limit in any window on one
// node: not with a true clock, not with the store's.
//
// Badge: sliding log
func TestFindingSlidingLogHoldsItsWindow(t *testing.T) {
	r := findingsMatrix(t)
	for _, d := range []model.Deployment{model.Ideal, model.StoreClock} {
		c := findingsCell(t, r, "sliding-log", d)
		t.Logf("sliding log, %s: peak %.2fx over %d runs, %d promise violations", d, c.PeakX, c.Runs, c.Violations)
		t.Logf("measured: peak %.2fx, %d violations", c.PeakX, c.Violations)
		if c.PeakX > 1 || c.Violations != 0 {
			t.Errorf("sliding log, %s: peak %.2fx, %d violations", d, c.PeakX, c.Violations)
		}
	}
}

// The non-atomic GET, decide, SET lets at least a quarter more of the flood
// through than the ideal, for every algorithm, with clocks in agreement and
// a 1 ms round trip, and breaks every algorithm's promise. The docs state
// the measured range, 51.5 to 53.7% (the worst seed of each limiter).
//
// Badge: GET, decide, SET
func TestFindingGetSetOverAdmits(t *testing.T) {
	r := findingsMatrix(t)
	lowest := math.Inf(1)
	var overs []float64
	defer func() { t.Logf("measured: at least %+.1f%% of the flood over the ideal", lowest) }()
	for _, name := range r.Algorithms {
		flood := findingsCell(t, r, name, model.GetSet, traffic.Flood)
		overs = append(overs, flood.Over)
		all := findingsCell(t, r, name, model.GetSet)
		t.Logf("%s, GET/SET: flood %+.1f%% over the ideal, peak %.2fx; worst client %+.1f%% (%s); %d of %d runs broke the promise",
			name, flood.Over, all.PeakX, all.Over, all.OverClient, all.Violations, all.Runs)
		lowest = min(lowest, flood.Over)
		if flood.Over < 25 {
			t.Errorf("%s: GET/SET lets %+.1f%% of the flood through, less than a quarter", name, flood.Over)
		}
		if all.Violations == 0 {
			t.Errorf("%s: GET/SET broke no promise", name)
		}
	}
	stated(t, "GET, decide, SET: the flood over the ideal, each limiter (%)", 1, 51.5, 53.7, overs...)
}

// Local limiters each given the full limit multiply what the flood gets
// through by about the number of nodes: between 0.875·N and N times the
// ideal's admits on every seed. N is the most: each node admits at most
// what one limiter with the whole limit admits of the whole flood. The
// docs state the measured range, 3.88 to 4.00 on 4 nodes.
//
// Badge: full limit per node
func TestFindingLocalFullMultipliesByNodes(t *testing.T) {
	r := findingsMatrix(t)
	n := float64(r.Options.Nodes)
	low, high := math.Inf(1), 0.0
	defer func() { t.Logf("measured: %.2f to %.2f times the ideal on %.0f nodes", low, high, n) }()
	for _, name := range r.Algorithms {
		ideal := findingsSeedRuns(t, r, name, model.Ideal)
		lo, hi := 1e9, 0.0
		for s, run := range findingsSeedRuns(t, r, name, model.LocalFull) {
			got, one := run.Clients[traffic.Flood].Admitted, ideal[s].Clients[traffic.Flood].Admitted
			x := float64(got) / float64(one)
			lo, hi = min(lo, x), max(hi, x)
			if got > r.Options.Nodes*one {
				t.Errorf("%s, seed %d: %d nodes admitted %d of the flood, more than %d times the ideal's %d", name, run.Seed, r.Options.Nodes, got, r.Options.Nodes, one)
			}
		}
		t.Logf("%s, local limiters with the full limit on %.0f nodes: the flood gets %.3f to %.3f times the ideal's admits", name, n, lo, hi)
		low, high = min(low, lo), max(high, hi)
		if lo < 0.875*n || hi > 1.0125*n {
			t.Errorf("%s: %.3f to %.3f times the ideal, outside [%.2f, %.2f]", name, lo, hi, 0.875*n, 1.0125*n)
		}
	}
	stated(t, "local limiters with the full limit: times the ideal's admits", 2, 3.88, 4.00, low, high)
}

// Clocks in perfect agreement are not enough: with the node's clock read
// half a round trip (±25%) before the script runs, every algorithm breaks
// its promise on some seed, each time by a single admit, and the sliding
// counter, whose window restarts when a request told an earlier time runs
// after one told a later time, peaks at about twice its one-node peak
// (the docs state the measured 2.00x).
//
// Badge: node clock, no skew
func TestFindingNodeClockBreaksPromisesWithoutSkew(t *testing.T) {
	o := scenarios.DefaultOptions()
	r := findingsMatrix(t)
	total := 0
	defer func() {
		t.Logf("measured: %d of %d runs broke a promise with clocks in agreement", total, len(algos.All())*len(o.Seeds)*len(o.Clients()))
	}()
	for _, a := range algos.All() {
		broken, worst := 0, int64(0)
		for _, seed := range o.Seeds {
			reqs, err := traffic.OpenLoop(seed, o.Limit, o.Duration)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Run(model.Config{Limiter: limiter.FromAlgorithm(a), Limit: o.Limit, Deployment: model.NodeClock, Nodes: o.Nodes,
				RTT: o.RTT, Jitter: o.Jitter, Seed: seed, Requests: reqs})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range res.Keys {
				if v := k.Violation; v != nil {
					broken++
					worst = max(worst, v.Admits-v.Allowed)
				}
			}
		}
		t.Logf("%s, node clock, no skew: %d of %d runs broke the promise, by at most %d admit(s)", a.Name, broken, len(o.Seeds)*len(o.Clients()), worst)
		total += broken
		if broken == 0 || worst > 1 {
			t.Errorf("%s: %d broken runs, worst by %d admits; want some, each by one admit", a.Name, broken, worst)
		}
	}
	p, _ := findingsSweep.result(t).At("sliding-counter", 0)
	ideal := findingsCell(t, r, "sliding-counter", model.Ideal)
	t.Logf("sliding counter, node clock, no skew: peak %.2fx (%s, seed %d); ideal %.2fx", p.PeakX, p.PeakClient, p.PeakSeed, ideal.PeakX)
	if p.PeakX < 1.5*ideal.PeakX {
		t.Errorf("sliding counter at no skew peaks at %.2fx, less than 1.5 × its ideal %.2fx", p.PeakX, ideal.PeakX)
	}
	stated(t, "the sliding counter's peak, node clock, no skew (x)", 2, 2.00, 2.00, p.PeakX)
}

// libraryOptions are the conditions redis_rate runs under in the findings:
// the table's, at 10 requests per second (burst 10) and on seeds 1 and 2,
// because each of its calls is a real Redis command to simredis (about
// 0.3 ms for a script) where a built-in algorithm's is a few ns.
func libraryOptions() scenarios.Options {
	o := scenarios.DefaultOptions()
	o.Limit = algos.MustLimit(10, algos.Second, 10)
	o.Seeds = []uint64{1, 2}
	return o
}

var (
	// The same requests for both: the open-loop clients alone.
	findingsXRateSweep = sync.OnceValues(func() (scenarios.Curve, error) {
		o := scenarios.DefaultOptions()
		o.Loop = false
		return scenarios.RunCurve([]limiter.Spec{limiter.FromAlgorithm(algos.TokenBucket), xtimerate.Spec()}, o, scenarios.SkewCurve(scenarios.DefaultSkews()))
	})
	// Each library's matrix is computed once, by the first test that needs
	// it, and the two apart: redis_rate's runs its script on simredis and
	// takes longest, and x/time/rate's findings need not wait for it.
	findingsXRate = sync.OnceValues(func() (scenarios.Matrix, error) {
		return scenarios.RunMatrix(append(limiter.FromAlgorithms(algos.TokenBucket), xtimerate.Spec()), scenarios.DefaultOptions())
	})
	findingsRedisRate = sync.OnceValues(func() (scenarios.Matrix, error) {
		return scenarios.RunMatrix(append(limiter.FromAlgorithms(algos.GCRA), redisrate.Spec()), libraryOptions())
	})
)

// findingsLibraryMatrix is the matrix run (x/time/rate's or redis_rate's).
func findingsLibraryMatrix(t *testing.T, run func() (scenarios.Matrix, error)) scenarios.Matrix {
	t.Helper()
	m, err := run()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The two libraries' rows, beside the built-in algorithm each implements:
// x/time/rate beside the token bucket on the table's conditions, redis_rate
// beside GCRA at 10 per second, and x/time/rate's skew sweep.
func TestGoldenLibraries(t *testing.T) {
	t.Parallel() // deterministic; overlaps the live tests' waiting
	xrate, redisRate := findingsLibraryMatrix(t, findingsXRate), findingsLibraryMatrix(t, findingsRedisRate)
	sw, err := findingsXRateSweep()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, w := range []interface {
		WriteTo(io.Writer) (int64, error)
	}{xrate, scenarios.SkewSweep{Curve: sw}, redisRate} {
		if _, err := w.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
	}
	golden.Check(t, "libraries.txt", b.Bytes())
}

// golang.org/x/time/rate, a float token bucket told the time by its
// caller, collapses under skew as the built-in token bucket does. On the
// same requests (the five open-loop clients): with no skew its peak is the
// token bucket's (2.00x), and at the table's 50 ms of skew and beyond it
// is the token bucket's too, above 5.5x (the flood nearly all admitted).
// It never peaks above the token bucket, and in between it peaks lower,
// because a request it denies does not move its last time back (the
// token bucket's does), so a skewed node must be admitted to rewind it. On
// the table's conditions (50 ms, all eight clients) its row equals the
// token bucket's in every column that applies. The docs state the
// measured peaks: 2.00x with no skew, 5.94x from 50 ms, and in between
// 2.31x against the token bucket's 2.81x at 10 ms, 5.67x against 5.69x at
// 40 ms.
//
// Badge: x/time/rate under skew
func TestFindingXTimeRateCollapsesUnderSkewLikeTheTokenBucket(t *testing.T) {
	t.Parallel() // deterministic; overlaps the live tests' waiting
	sweep, err := findingsXRateSweep()
	if err != nil {
		t.Fatal(err)
	}
	lower := 0
	var collapsed []float64 // x/time/rate's peaks from 50 ms on
	for _, skew := range scenarios.DefaultSkews() {
		tb, _ := sweep.At("token-bucket", skew)
		xr, ok := sweep.At(xtimerate.Name, skew)
		if !ok {
			t.Fatalf("the sweep has no x/time/rate point at %d µs", skew)
		}
		t.Logf("skew %s: x/time/rate %.2fx, token bucket %.2fx", algos.FormatMicros(skew), xr.PeakX, tb.PeakX)
		switch {
		case skew == 0 && (xr.Peak != tb.Peak || xr.PeakX > 2):
			t.Errorf("with no skew x/time/rate peaks at %.2fx, the token bucket at %.2fx; want the same, at most 2x", xr.PeakX, tb.PeakX)
		case skew >= 50_000 && (xr.Peak != tb.Peak || xr.PeakX < 5.5):
			t.Errorf("at %s x/time/rate peaks at %.2fx, the token bucket at %.2fx; want the same, above 5.5x", algos.FormatMicros(skew), xr.PeakX, tb.PeakX)
		case xr.Peak > tb.Peak:
			t.Errorf("at %s x/time/rate peaks above the token bucket: %.2fx > %.2fx", algos.FormatMicros(skew), xr.PeakX, tb.PeakX)
		case xr.Peak < tb.Peak:
			lower++
		}
		if xr.Errors != 0 {
			t.Errorf("x/time/rate answered %d errors: %v", xr.Errors, xr.FirstError)
		}
		switch skew {
		case 0:
			stated(t, "x/time/rate with no skew (x)", 2, 2.00, 2.00, xr.PeakX)
		case 10_000, 40_000:
			want := map[int64][2]float64{10_000: {2.31, 2.81}, 40_000: {5.67, 5.69}}[skew]
			stated(t, fmt.Sprintf("x/time/rate at %s (x)", algos.FormatMicros(skew)), 2, want[0], want[0], xr.PeakX)
			stated(t, fmt.Sprintf("the token bucket at %s (x)", algos.FormatMicros(skew)), 2, want[1], want[1], tb.PeakX)
		}
		if skew >= 50_000 {
			collapsed = append(collapsed, xr.PeakX)
		}
	}
	stated(t, "x/time/rate from 50 ms of skew on (x)", 2, 5.94, 5.94, collapsed...)
	if lower == 0 {
		t.Error("x/time/rate never peaked below the token bucket between 0 and 50 ms of skew")
	}
	m := findingsLibraryMatrix(t, findingsXRate)
	for _, c := range m.Columns {
		tb, xr := findingsCell(t, m, "token-bucket", c.Deployment), findingsCell(t, m, xtimerate.Name, c.Deployment)
		if c.Deployment == model.GetSet {
			if xr.NotApplicable == "" {
				t.Errorf("GET, decide, SET ran x/time/rate, whose state is not a value")
			}
			continue
		}
		if xr.Peak != tb.Peak || xr.Violations != tb.Violations || xr.Over != tb.Over {
			t.Errorf("%s: x/time/rate peak %.2fx, over %.1f%%, %d violations; the token bucket %.2fx, %.1f%%, %d",
				c.Name, xr.PeakX, xr.Over, xr.Violations, tb.PeakX, tb.Over, tb.Violations)
		}
	}
}

// github.com/go-redis/redis_rate/v10, run unchanged on simredis (its GCRA
// script reads the store's TIME), does what the built-in GCRA does in every
// deployment that applies to it, at 10 per second: the same peak and
// overshoot in the ideal, store-clock and store-wiped columns, and no
// errors; the node-clock, local and GET/SET columns print n/a, each with
// its reason. Where GCRA keeps its promise (one node, and behind a store)
// redis_rate breaks it only by float rounding: each break is one admit
// more than promised, and the same admits one µs later would be within the
// promise (measured: the client retrying at every Retry-After, 167 admits
// in 15.699999 s where 166 are promised, on one node). Behind a store it
// breaks no promise at all on these runs, and its peaks are GCRA's: 1.90x
// on one node and behind a store, 2.90x after a wipe, as the docs state.
//
// Badge: redis_rate deployed
func TestFindingRedisRateMatchesGCRAWhereItApplies(t *testing.T) {
	t.Parallel() // deterministic; overlaps the live tests' waiting
	m := findingsLibraryMatrix(t, findingsRedisRate)
	applies := map[model.Deployment]bool{model.Ideal: true, model.StoreClock: true, model.StoreWiped: true}
	// The peaks the docs state, and how many promises were broken by
	// rounding (on one node, each the one it states).
	peaks := map[model.Deployment]float64{model.Ideal: 1.90, model.StoreClock: 1.90, model.StoreWiped: 2.90}
	rounding := 0
	for _, c := range m.Columns {
		g, rr := findingsCell(t, m, "gcra", c.Deployment), findingsCell(t, m, redisrate.Name, c.Deployment)
		if !applies[c.Deployment] {
			if rr.NotApplicable == "" {
				t.Errorf("%s ran redis_rate, which reads the store's clock and has no state to copy", c.Name)
			}
			continue
		}
		t.Logf("%s: redis_rate peak %.2fx over %.1f%%, %d violations; gcra %.2fx over %.1f%%, %d violations",
			c.Name, rr.PeakX, rr.Over, rr.Violations, g.PeakX, g.Over, g.Violations)
		switch {
		case rr.NotApplicable != "" || rr.Errors != 0:
			t.Errorf("%s: redis_rate not applicable (%q) or answered %d errors: %v", c.Name, rr.NotApplicable, rr.Errors, rr.FirstError)
		case rr.Peak != g.Peak || rr.Over != g.Over:
			t.Errorf("%s: redis_rate peak %.2fx over %.1f%%, gcra %.2fx over %.1f%%", c.Name, rr.PeakX, rr.Over, g.PeakX, g.Over)
		case c.Deployment != model.StoreWiped && g.Violations != 0:
			t.Errorf("%s: gcra broke its promise in %d runs", c.Name, g.Violations)
		case c.Deployment == model.StoreClock && rr.Violations != 0:
			t.Errorf("%s: redis_rate broke its promise in %d of %d runs behind a store; the claim is none", c.Name, rr.Violations, rr.Runs)
		}
		stated(t, fmt.Sprintf("%s: redis_rate's peak (x)", c.Name), 2, peaks[c.Deployment], peaks[c.Deployment], rr.PeakX)
		if c.Deployment == model.StoreWiped {
			continue
		}
		for _, run := range findingsSeedRuns(t, m, redisrate.Name, c.Deployment) {
			for client, cr := range run.Clients {
				v := cr.Violation
				if v == nil {
					continue
				}
				t.Logf("%s, seed %d, %s client: %s", c.Name, run.Seed, traffic.ClientKind(client), v.Reason)
				l := m.Options.Limit
				laterAllowed := l.Burst + l.Rate*(v.To-v.From+1)/l.Window // the promise for the span one µs longer
				if v.Admits != v.Allowed+1 || laterAllowed < v.Admits {
					t.Errorf("%s, seed %d: redis_rate broke its promise by more than one µs of rounding: %s", c.Name, run.Seed, v.Reason)
				}
				rounding++
				if traffic.ClientKind(client) != traffic.RetryAfter || v.Admits != 167 || v.Allowed != 166 || v.To-v.From != 15_699_999 {
					t.Errorf("%s, seed %d, %s client: %s; the docs state the Retry-After client's 167 admits in 15.699999 s where 166 are promised",
						c.Name, run.Seed, traffic.ClientKind(client), v.Reason)
				}
			}
		}
	}
	if rounding == 0 {
		t.Error("redis_rate broke no promise on one node; the docs state the Retry-After client's 167 admits in 15.699999 s where 166 are promised")
	}
}

// A queue in front of a smoothing limiter turns refusals into latency, and
// on bursty traffic that latency is the queue's whole depth. Four tenants
// send bursts (burstyTenants: 200 a second for 2.5 s of every 10 s, 2 a
// second between them; 60 s) into a GCRA of 20 a second per tenant with a
// burst of 1, a pacer, then into the same GCRA holding an early request up
// to 100 ms and up to 500 ms instead of refusing it. The queue admits more,
// exactly what a GCRA with a burst of 1 + D·L/W admits, request for
// request; what it lets through, each request counted when it is let
// through, keeps the burst of 1 (counted when decided, it does not); and
// the p99 wait is the max delay itself, because the queue is full through
// every burst. The reference simulator's advice to check the p99 wait
// before shipping a queueing GCRA reads, on this traffic: it is the max
// delay you set (golden/queueing.txt). In a rolling second the promise of
// a burst of b allows b + ⌊L·(W−1µs)/W⌋: let through, 20 for the busiest
// tenant, which it reaches; as decided, the wider bucket the queue states,
// b + ⌈D·L/W⌉: 22 and 30, reached too. The docs state the measured
// admits (30.6%, 42.2%, 48.4%) and p99 waits (99.752 ms, 499.63 ms).
//
// Badge: queueing GCRA's wait
func TestFindingQueueingGCRAAddsLatencyOnBursts(t *testing.T) {
	tr := burstyTenants(t)
	l := algos.MustLimit(20, algos.Second, 1)
	delays := []int64{100_000, 500_000} // 2 and 10 emission intervals
	algs := []algos.Algorithm{algos.GCRA}
	for _, d := range delays {
		q, err := algos.QueueingGCRA(d)
		if err != nil {
			t.Fatal(err)
		}
		algs = append(algs, q)
	}
	got, report := compare(t, tr, l, algs...)
	promise := algos.BucketPromise(l)
	inASecond := func(burst int64) int64 { return burst + l.Rate*(l.Window-1)/l.Window } // a burst's promise over W − 1 µs
	counts := make([]twoCounts, len(algs))
	for i, a := range algs {
		counts[i] = countTwice(t, tr, got[a.Name], promise)
	}
	var b bytes.Buffer
	b.Write(report)
	if err := writeTwoCounts(&b, promise, algs, counts); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "queueing.txt", b.Bytes())

	gcra := got["gcra"]
	if c := counts[0]; gcra.Delay != nil || gcra.Run.Wait.N != 0 || c.breaking != [2]int{} {
		t.Errorf("gcra held %d requests (wait %+v), and %v keys broke its promise (decided, let through); it holds none and keeps it", gcra.Run.Held, gcra.Run.Wait, c.breaking)
	}
	for i, d := range delays {
		a, c := algs[i+1], counts[i+1]
		r, w := got[a.Name], got[a.Name].Run.Wait
		wider := gcraWithBurst(t, tr, l, l.Burst+d*l.Rate/l.Window)
		switch {
		case r.Run.Accepted <= gcra.Run.Accepted:
			t.Errorf("%s admitted %d, the GCRA %d: the queue admits more", a.Name, r.Run.Accepted, gcra.Run.Accepted)
		case !slices.Equal(r.Allowed, wider.Allowed):
			t.Errorf("%s admits %d, not request for request what a GCRA with a burst of %d admits (%d)", a.Name, r.Run.Accepted, wider.Limit.Burst, wider.Run.Accepted)
		case w.Max > d || w.N != r.Run.Accepted || r.Run.Held == 0:
			t.Errorf("%s: wait %+v, %d held of %d admits; no wait may pass %s", a.Name, w, r.Run.Held, r.Run.Accepted, fmtWait(d))
		case c.breaking[whenLetThrough] != 0 || c.busiest[whenLetThrough] != inASecond(l.Burst):
			t.Errorf("%s: let through, %d keys break the GCRA's promise and the busiest has %d in a second (the promise's most, %d, is stated)",
				a.Name, c.breaking[whenLetThrough], c.busiest[whenLetThrough], inASecond(l.Burst))
		case c.breaking[whenDecided] != len(tr.Keys):
			t.Errorf("%s: counted when decided, %d of %d keys break the GCRA's promise; the claim is that all do, and only counting when let through keeps it", a.Name, c.breaking[whenDecided], len(tr.Keys))
		case c.busiest[whenDecided] != inASecond(l.Burst+(d*l.Rate+l.Window-1)/l.Window):
			t.Errorf("%s: as decided, the busiest tenant has %d in a second; the queue's wider bucket allows %d, the docs' number", a.Name, c.busiest[whenDecided], inASecond(l.Burst+(d*l.Rate+l.Window-1)/l.Window))
		case w.P99 < d*95/100 || w.P50 < d*3/4:
			t.Errorf("%s: wait p50 %s, p99 %s; the claim is a queue full through every burst: p99 within 5%% of the max delay %s, p50 above 3/4 of it",
				a.Name, fmtWait(w.P50), fmtWait(w.P99), fmtWait(d))
		}
	}
	q1, q2 := got[algs[1].Name].Run, got[algs[2].Name].Run
	stated(t, "admitted by the GCRA (%)", 1, 30.6, 30.6, 100*gcra.Run.AcceptRatio)
	stated(t, "admitted by the queue of 100 ms (%)", 1, 42.2, 42.2, 100*q1.AcceptRatio)
	stated(t, "admitted by the queue of 500 ms (%)", 1, 48.4, 48.4, 100*q2.AcceptRatio)
	stated(t, "p99 wait, queue of 100 ms (ms)", 3, 99.752, 99.752, float64(q1.Wait.P99)/1000)
	stated(t, "p99 wait, queue of 500 ms (ms)", 2, 499.63, 499.63, float64(q2.Wait.P99)/1000)
	t.Logf("measured: p99 wait %s of %s, %s of %s; admitted %s, %s, %s",
		fmtWait(q1.Wait.P99), fmtWait(delays[0]), fmtWait(q2.Wait.P99), fmtWait(delays[1]),
		fmtShare(gcra.Run.AcceptRatio), fmtShare(q1.AcceptRatio), fmtShare(q2.AcceptRatio))
}
