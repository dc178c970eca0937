package overshoot_test

// The findings as curves: each headline number of the docs swept over the
// parameter it depends on most, on the table's conditions but for that
// parameter and the seeds (1-3 here, 1-10 in the table, so that the
// sweeps together take under 5 s on two cores). Each curve is a golden
// text and an SVG chart (golden/sweep-*.txt, .svg), and each finding below
// holds the curve's shape: its direction, its bound at each end, and,
// where a simple model explains it, the measurement against the model.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
	"github.com/overshoot-go/overshoot/traffic"
)

// floodMultiple is the flood's rate as a multiple of the limit
// (traffic.OpenLoop's, and the models').
const floodMultiple = 5

// sweepNote heads every sweep's golden text.
const sweepNote = "The table's conditions but for the parameter and the seeds: 1-3 here (1-10 in the table), so that all the\n" +
	"sweeps together take under 5 s on two cores; each point is the worst of those three seeds, the model's the mean."

func sweepOptions() scenarios.Options {
	o := scenarios.DefaultOptions()
	o.Seeds = []uint64{1, 2, 3}
	return o
}

var rtts = []int64{0, 250, 500, 1000, 2000}

// sweepCurve is one curve of the findings: its golden name, its options
// and what it sweeps, computed once per test binary or merged from its
// shards (shard_test.go).
type sweepCurve = sharded[scenarios.Curve]

func newSweep(name string, o scenarios.Options, c scenarios.CurveOf) sweepCurve {
	c.Note = sweepNote
	return shardedCurve(name, limiter.FromAlgorithms(algos.All()...), o, c)
}

var (
	restartSweep = newSweep("sweep-restart", sweepOptions(), scenarios.CurveOf{Deployment: model.LocalSplit, Param: scenarios.ParamRestartEvery,
		Values: []int64{0, 3 * algos.Second, 5 * algos.Second, 10 * algos.Second, 20 * algos.Second, 40 * algos.Second},
		Model:  scenarios.RestartModel(), Plot: scenarios.PlotModel})
	nodesSweep = newSweep("sweep-nodes", sweepOptions(), scenarios.CurveOf{Deployment: model.LocalSplit, Param: scenarios.ParamNodes,
		Values: []int64{1, 2, 4, 5, 10, 20}, Model: scenarios.RestartModel(), Plot: scenarios.PlotOver})
	wipeSweep = newSweep("sweep-wipe", sweepOptions(), scenarios.CurveOf{Deployment: model.StoreWiped, Param: scenarios.ParamWipePhase,
		Values: []int64{0, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000},
		Model:  scenarios.WipeModel(), Plot: scenarios.PlotModel})
	getSetSweep = newSweep("sweep-getset-rtt", sweepOptions(), scenarios.CurveOf{Deployment: model.GetSet, Param: scenarios.ParamRTT,
		Values: rtts, Model: scenarios.GetSetModel(), Plot: scenarios.PlotModel})
	// The store clock's finding is about the same requests in both columns:
	// the five open-loop clients.
	storeClockSweep = newSweep("sweep-storeclock-rtt", sweepOptions(), scenarios.CurveOf{Deployment: model.StoreClock, Param: scenarios.ParamRTT,
		Values: rtts, Clients: traffic.OpenLoopClients(), Model: scenarios.StoreClockEdgeModel(), Plot: scenarios.PlotPeak})
	// The node clock's finding is with clocks in agreement.
	nodeClockSweep = newSweep("sweep-nodeclock-rtt", func() scenarios.Options { o := sweepOptions(); o.Skew = 0; return o }(),
		scenarios.CurveOf{Deployment: model.NodeClock, Param: scenarios.ParamRTT, Values: rtts, Plot: scenarios.PlotOver})
	localFullSweep = newSweep("sweep-localfull-nodes", sweepOptions(), scenarios.CurveOf{Deployment: model.LocalFull, Param: scenarios.ParamNodes,
		Values: []int64{1, 2, 3, 4, 5, 8}, Model: scenarios.LocalFullModel(), Plot: scenarios.PlotModel})
	allSweeps = []sweepCurve{restartSweep, nodesSweep, wipeSweep, getSetSweep, storeClockSweep, nodeClockSweep, localFullSweep}
)

func sweepCell(t *testing.T, c scenarios.Curve, algo string, k int, clients ...traffic.ClientKind) scenarios.Cell {
	t.Helper()
	cell, ok := c.Cell(algo, k, clients...)
	if !ok {
		t.Fatalf("the %s curve has no cell for %s at point %d", c.Title(), algo, k)
	}
	return cell
}

// measured and predicted are the curve's model at one algorithm and point.
func modelAt(t *testing.T, c scenarios.Curve, algo string, k int) (measured, predicted float64) {
	t.Helper()
	p, ok := c.Model.Predict(c, algo, k)
	if !ok {
		t.Fatalf("%s: the model predicts nothing for %s", c.Title(), algo)
	}
	return c.Model.Measure(c, algo, k), p
}

func TestGoldenSweeps(t *testing.T) {
	for _, s := range allSweeps {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel() // the curves run side by side, each on every core
			c := s.result(t)
			golden.CheckWriteTo(t, s.name+".txt", c.WriteTo)
			golden.CheckWriteTo(t, s.name+".svg", c.WriteSVG)
			golden.CheckWrite(t, s.name+".json", c.WriteJSON)
			golden.CheckWrite(t, s.name+".csv", c.WriteCSV)
		})
	}
}

// The local split's overshoot is mostly its restarts. The flood (5× the
// limit, so every node's share is always spent) gets nothing from the split
// alone: within 1% of the ideal when nothing restarts. Each restart hands
// it at most one fresh local burst of B/N, so the flood's over falls as
// the interval R grows, strictly, and never exceeds the model's N·m(D)·B/N
// (m(D) the mean restarts of a node in the run) by more than 1 point. The
// buckets take at least 80% of it: a restart loses them only the refill in
// progress, under one token of B/N = 25. The window algorithms at least 30%:
// a restart of the fixed window in the first fifth of a window (before the
// flood spends the node's count) gives less, and the sliding log's and
// counter's fresh admits are paid back when the forgotten ones would have
// left the window. Where the model is under 5% (R of 20 s and more in a
// run of 20 s: under one restart per node), which of the three seeds draw a
// restart decides, and the flood is held within 2 points of the model
// either way. Measured: the buckets 88-92% of the model, the fixed window
// 75-81%, the sliding log and counter 38-50%. The docs state those
// shares (where the model is 5% or more), the flood's −0.1 to +0.5% with no
// restarts, the buckets' model (+17.5% at 5 s, +8.2% at 10 s), the table's
// over at 5 s (13.8 to 22.2%), and the sliding counter's +25.1% with no
// restarts, all as measured.
//
// Badge: local split against restarts
func TestFindingLocalSplitOvershootFollowsRestarts(t *testing.T) {
	c := restartSweep.result(t)
	if c.Values[0] != 0 {
		t.Fatal("the restart sweep must start at never")
	}
	at5 := slices.Index(c.Values, 5*algos.Second)
	lo, hi := math.Inf(1), math.Inf(-1)
	defer func() {
		t.Logf("measured: flood over with no restarts %+.1f%% to %+.1f%%; restarting every 5 s, the table's over %s",
			lo, hi, overRange(t, c, at5))
	}()
	var never, tableAt5 []float64
	shares := map[string][]float64{} // the flood's over, in % of the model's, by group
	group := func(name string) string {
		switch {
		case slices.Contains(bucketNames, name):
			return "the buckets"
		case name == "fixed-window":
			return "the fixed window"
		}
		return "the sliding log and counter"
	}
	for _, name := range c.Algorithms {
		prev := math.Inf(1)
		for k := range c.Values {
			m, p := modelAt(t, c, name, k)
			cell := sweepCell(t, c, name, k)
			t.Logf("%s, restarts every %s: flood %+.1f%% over (model %+.1f%%), the table's over %+.1f%%",
				name, algos.FormatMicros(c.Values[k]), m, p, cell.Over)
			if k == at5 {
				tableAt5 = append(tableAt5, cell.Over)
			}
			if slices.Contains(bucketNames, name) {
				switch c.Values[k] {
				case 5 * algos.Second:
					stated(t, name+": the model at 5 s (%)", 1, 17.5, 17.5, p)
				case 10 * algos.Second:
					stated(t, name+": the model at 10 s (%)", 1, 8.2, 8.2, p)
				}
			}
			if k == 0 {
				lo, hi = min(lo, m), max(hi, m)
				never = append(never, m)
				if math.Abs(m) > 1 {
					t.Errorf("%s: with no restarts the flood is %+.1f%% over the ideal, beyond 1%%", name, m)
				}
				if name == "sliding-counter" {
					stated(t, "sliding counter: the table's over with no restarts (%)", 1, 25.1, 25.1, cell.Over)
				}
				continue
			}
			if p >= 5 {
				shares[group(name)] = append(shares[group(name)], 100*m/p)
			}
			if m >= prev {
				t.Errorf("%s: restarting every %s the flood is %+.1f%% over, not less than at the shorter interval before (%+.1f%%)",
					name, algos.FormatMicros(c.Values[k]), m, prev)
			}
			if first, _ := modelAt(t, c, name, 0); m <= first {
				t.Errorf("%s: restarting every %s the flood is %+.1f%% over, not above never's %+.1f%%", name, algos.FormatMicros(c.Values[k]), m, first)
			}
			prev = m
			share := 0.3
			if slices.Contains(bucketNames, name) {
				share = 0.8
			}
			switch {
			case p < 5 && math.Abs(m-p) > 2:
				t.Errorf("%s, restarts every %s: the flood is %+.1f%% over, beyond 2 points of the model's %+.1f%%",
					name, algos.FormatMicros(c.Values[k]), m, p)
			case p >= 5 && (m > p+1 || m < share*p):
				t.Errorf("%s, restarts every %s: the flood is %+.1f%% over, outside [%.0f%% of, 1 point above] the model's %+.1f%%",
					name, algos.FormatMicros(c.Values[k]), m, 100*share, p)
			}
		}
	}
	stated(t, "with no restarts, the flood over the ideal (%)", 1, -0.1, 0.5, never...)
	stated(t, "restarting every 5 s, the table's over (%)", 1, 13.8, 22.2, tableAt5...)
	for g, want := range map[string][2]float64{"the buckets": {88, 92}, "the fixed window": {75, 81}, "the sliding log and counter": {38, 50}} {
		stated(t, g+": the flood's over in % of the model's, where it is 5% or more", 0, want[0], want[1], shares[g]...)
	}
}

// overRange prints the table's over at point k, lowest to highest.
func overRange(t *testing.T, c scenarios.Curve, k int) string {
	t.Helper()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, name := range c.Algorithms {
		o := sweepCell(t, c, name, k).Over
		lo, hi = min(lo, o), max(hi, o)
	}
	return fmt.Sprintf("%+.1f%% to %+.1f%%", lo, hi)
}

// Splitting the limit over more nodes turns the honest client away more:
// it sends evenly at 90% of the limit, and a random balancer gives each
// node a share that varies around 90% of L/N, by more of L/N the smaller
// L/N is. On one node nobody is turned away (0.0%); the window algorithms
// turn it away more with every node added (allowing 0.5 points of seed
// noise between neighbours), at least 10% on 20 nodes; the buckets, whose
// share of the burst absorbs the unevenness, under 1% up to 5 nodes. The
// flood's over stays below the restart model's bound at every N (its fresh
// bursts do not depend on N: N nodes × m(D) restarts × B/N) and above
// half of it for the buckets. The docs state, as measured: 12.5 to 22.1%
// for the window algorithms on 20 nodes and 4.4% for the buckets, the
// fixed window's dip from 3.8% on 4 nodes to 3.5% on 5, and the buckets'
// flood over at 13.0 to 16.4% whatever N.
//
// Badge: local split against nodes
func TestFindingLocalSplitTurnsHonestAwayMoreOnMoreNodes(t *testing.T) {
	c := nodesSweep.result(t)
	last := len(c.Values) - 1
	if c.Values[0] != 1 || c.Values[last] < 20 {
		t.Fatal("the node sweep must run from 1 node to 20 or more")
	}
	worst := 0.0
	defer func() {
		t.Logf("measured: the honest client turned away 0.0%% on one node, up to %.1f%% on %d", worst, c.Values[last])
	}()
	var windowsLast, bucketsLast, bucketsOver []float64
	for _, name := range c.Algorithms {
		prev := 0.0
		for k, n := range c.Values {
			cell := sweepCell(t, c, name, k)
			m, p := modelAt(t, c, name, k)
			t.Logf("%s, %d nodes: honest turned away %.1f%%; flood %+.1f%% over (restart model %+.1f%%); the table's over %+.1f%%",
				name, n, cell.HonestRejected, m, p, cell.Over)
			if k == 0 && cell.HonestRejected != 0 {
				t.Errorf("%s: on one node the honest client is turned away %.1f%% of the time", name, cell.HonestRejected)
			}
			if m > p+1 || (slices.Contains(bucketNames, name) && m < p/2) {
				t.Errorf("%s, %d nodes: the flood is %+.1f%% over, outside the restart model's bound %+.1f%%", name, n, m, p)
			}
			if slices.Contains(windowNames, name) {
				if cell.HonestRejected < prev-0.5 {
					t.Errorf("%s: %d nodes turn the honest client away %.1f%%, fewer than the fewer nodes before (%.1f%%)", name, n, cell.HonestRejected, prev)
				}
				prev = max(prev, cell.HonestRejected)
				if k == last && cell.HonestRejected < 10 {
					t.Errorf("%s: %d nodes turn the honest client away %.1f%%, under 10%%", name, n, cell.HonestRejected)
				}
			}
			if slices.Contains(bucketNames, name) && n <= 5 && cell.HonestRejected >= 1 {
				t.Errorf("%s: %d nodes turn the honest client away %.1f%%, 1%% or more", name, n, cell.HonestRejected)
			}
			worst = max(worst, cell.HonestRejected)
			switch {
			case k == last && slices.Contains(windowNames, name):
				windowsLast = append(windowsLast, cell.HonestRejected)
			case k == last && slices.Contains(bucketNames, name):
				bucketsLast = append(bucketsLast, cell.HonestRejected)
			}
			if slices.Contains(bucketNames, name) {
				bucketsOver = append(bucketsOver, m)
			}
			if name == "fixed-window" && (n == 4 || n == 5) {
				want := map[int64]float64{4: 3.8, 5: 3.5}[n]
				stated(t, fmt.Sprintf("fixed window, %d nodes: honest turned away (%%)", n), 1, want, want, cell.HonestRejected)
			}
		}
	}
	stated(t, fmt.Sprintf("the window algorithms on %d nodes: honest turned away (%%)", c.Values[last]), 1, 12.5, 22.1, windowsLast...)
	stated(t, fmt.Sprintf("the buckets on %d nodes: honest turned away (%%)", c.Values[last]), 1, 4.4, 4.4, bucketsLast...)
	stated(t, "the buckets' flood over the ideal, whatever N (%)", 1, 13.0, 16.4, bucketsOver...)
}

// What a wipe hands out depends on where in its window it falls, and a
// model with the flood at F = 5L per W and the wipe at phase p says how
// much (WipeModel): the buckets B (a fresh full bucket, wherever), the fixed
// window min(L, F·(1−p)) − max(0, L − F·p) (nothing at the window's edge,
// where the ideal's count starts afresh too; L from p = 0.2 to 0.8, then
// less as the window ends), the sliding counter min(L, F·(1−p))·p (the
// previous window it forgets weighs p), the sliding log 0 (at most L in any
// W either way). The flood's admits in the W after the wipe beyond the
// ideal's, the mean of the seeds, are within 5 admits of the model at every
// phase: the flood's Poisson arrivals blur the corners of min and max by a
// few requests (the docs state the measured 4.3). On every seed, the
// buckets get B − 1 to B at every phase (a fresh burst, less the under one
// token the ideal's bucket holds), the fixed window nothing at its edge
// (both runs start the same window afresh there), and the sliding counter
// L·p ± 1 wherever the flood has more than L to send in the rest of the
// window (F·(1−p) > L: p < 0.8); and the sliding counter more with every
// phase up to 0.8.
//
// Badge: wiped store against the wipe's place
func TestFindingWipedStoreBurstFollowsWhereInTheWindowItFalls(t *testing.T) {
	c := wipeSweep.result(t)
	worst := 0.0
	defer func() { t.Logf("measured: within %.1f admits of the model at every phase", worst) }()
	l := c.Options.Limit
	w := l.Window
	var gaps []float64
	for _, name := range c.Algorithms {
		prev := math.Inf(-1)
		for k, phase := range c.Values {
			m, p := modelAt(t, c, name, k)
			gaps = append(gaps, math.Abs(m-p))
			lo, hi, bounded := 0.0, 0.0, true // the fresh burst on each seed
			switch {
			case slices.Contains(bucketNames, name):
				lo, hi = float64(l.Burst-1), float64(l.Burst)
			case name == "fixed-window" && phase == 0:
			case name == "sliding-counter" && floodMultiple*(w-phase) > w:
				lo, hi = float64(l.Rate*phase)/float64(w)-1, float64(l.Rate*phase)/float64(w)+1
			default:
				bounded = false
			}
			runs, ideal := c.SeedRuns(name, k)
			for s := range runs {
				got := float64(runs[s].Clients[traffic.Flood].AfterWipe - ideal[s].Clients[traffic.Flood].AfterWipe)
				if bounded && (got < lo || got > hi) {
					t.Errorf("%s, wiped %s into its window, seed %d: %+.0f admits in the next %s, outside its fresh burst's [%+.0f, %+.0f]",
						name, algos.FormatMicros(phase), runs[s].Seed, got, algos.FormatMicros(w), lo, hi)
				}
			}
			t.Logf("%s, wiped %s into its window: %+.1f admits in the next %s beyond the ideal (model %+.1f); peak %.2fx",
				name, algos.FormatMicros(phase), m, algos.FormatMicros(w), p, sweepCell(t, c, name, k).PeakX)
			worst = max(worst, math.Abs(m-p))
			if math.Abs(m-p) > 5 {
				t.Errorf("%s, wiped %s into its window: %+.1f admits, more than 5 from the model's %+.1f", name, algos.FormatMicros(phase), m, p)
			}
			switch {
			case slices.Contains(bucketNames, name) && m < 98:
				t.Errorf("%s: a wipe %s into its window gives only %+.1f", name, algos.FormatMicros(phase), m)
			case name == "fixed-window" && phase == 0 && m > 1:
				t.Errorf("fixed window: a wipe at the window's edge gives %+.1f, not nothing", m)
			case name == "sliding-counter" && 5*phase <= 4*w:
				if m <= prev && phase > 0 {
					t.Errorf("sliding counter: a wipe %s into its window gives %+.1f, not more than earlier (%+.1f)", algos.FormatMicros(phase), m, prev)
				}
				prev = m
			}
		}
	}
	if most := printed(slices.Max(gaps), 1); most > 4.3 {
		t.Errorf("the flood's admits after the wipe are %.1f from the model at some phase, the docs state within 4.3", most)
	}
}

// GET, decide, SET over-admits in proportion to the round trip: a GET that
// reaches the store within a round trip of an admit (its reply leg, then
// its SET leg) reads the state before that admit, so every admit the ideal
// makes brings F·RTT/W more with the flood at F = 5L per W: +50% at 1 ms.
// At no round trip nothing is over (0.0% for every algorithm, no promise
// broken); from there the flood's over rises with every step of the round
// trip, and its mean over the seeds is within 5% of the model (plus 1
// point) at every one; the docs state the measured: within 3.2% of it.
//
// Badge: GET, decide, SET against the round trip
func TestFindingGetSetOverAdmitsInProportionToTheRoundTrip(t *testing.T) {
	c := getSetSweep.result(t)
	worst := 0.0
	defer func() {
		t.Logf("measured: the flood over the ideal within %.1f%% of 100·F·RTT/W at every round trip", worst)
	}()
	for _, name := range c.Algorithms {
		prev := math.Inf(-1)
		for k, rtt := range c.Values {
			cell := sweepCell(t, c, name, k)
			m, p := modelAt(t, c, name, k)
			t.Logf("%s, round trip %s: flood %+.1f%% over (model %+.1f%%), the table's over %+.1f%%, %d runs broke the promise",
				name, algos.FormatMicros(rtt), m, p, cell.Over, cell.Violations)
			if rtt == 0 && (cell.Over != 0 || cell.Violations != 0) {
				t.Errorf("%s: with no round trip GET/SET is %+.1f%% over with %d broken runs", name, cell.Over, cell.Violations)
			}
			if k > 0 && m <= prev {
				t.Errorf("%s: at %s the flood is %+.1f%% over, not more than at the shorter round trip (%+.1f%%)", name, algos.FormatMicros(rtt), m, prev)
			}
			prev = m
			if p > 0 {
				worst = max(worst, 100*math.Abs(m-p)/p)
			}
			if math.Abs(m-p) > 0.05*p+1 {
				t.Errorf("%s, round trip %s: the flood is %+.1f%% over, beyond 5%% + 1 point of the model's %+.1f%%", name, algos.FormatMicros(rtt), m, p)
			}
		}
	}
	if printed(worst, 1) > 3.2 {
		t.Errorf("the flood over the ideal is %.1f%% from the model at some round trip, the docs state within 3.2%%", worst)
	}
}

// Behind a store that reads its own clock, no algorithm breaks its promise
// at any round trip, and every peak but the fixed window's stays at its
// one-node value (one admit above at most, the legs' jitter). The fixed
// window's falls as the round trip grows, because the requests of the
// boundary client's burst sent within RTT/2 before the edge (one per
// W/100/L = 100 µs) land after it and count in the next window: its
// boundary peak, the mean of the seeds, is 2L − 50·L·RTT/W within the
// legs' jitter (±25% of RTT/2, in requests) plus 2, and its peak never
// rises with the round trip: 2L (2.00x) with none, where the ideal's
// boundary bursts are all admitted, and 1.92x at 2 ms, as the docs
// states it.
//
// Badge: store clock against the round trip
func TestFindingStoreClockPeaksHoldButTheFixedWindowsFallsWithTheRoundTrip(t *testing.T) {
	c := storeClockSweep.result(t)
	l := c.Options.Limit
	spacing := float64(l.Window) / 100 / float64(l.Rate)
	lastFW := 0.0
	defer func() {
		t.Logf("measured: fixed window %.2fx at the longest round trip, every other peak its ideal's", lastFW)
	}()
	for _, name := range c.Algorithms {
		prev := math.Inf(1)
		for k, rtt := range c.Values {
			cell := sweepCell(t, c, name, k)
			ideal := c.Points[k]
			idealCell, _ := ideal.Cell(name, model.Ideal, c.Clients...)
			t.Logf("%s, round trip %s: peak %.2fx (ideal %.2fx), %d runs broke the promise", name, algos.FormatMicros(rtt), cell.PeakX, idealCell.PeakX, cell.Violations)
			if cell.Violations != 0 {
				t.Errorf("%s, round trip %s: %d runs broke the promise behind a store clock", name, algos.FormatMicros(rtt), cell.Violations)
			}
			if name != "fixed-window" {
				if cell.Peak < idealCell.Peak || cell.Peak > idealCell.Peak+1 {
					t.Errorf("%s, round trip %s: peak %d, the ideal's %d", name, algos.FormatMicros(rtt), cell.Peak, idealCell.Peak)
				}
				continue
			}
			m, p := modelAt(t, c, name, k)
			tol := 0.25*float64(rtt)/2/spacing + 2
			t.Logf("fixed window, round trip %s: boundary peak %.1f admits, model %.1f (±%.1f)", algos.FormatMicros(rtt), m, p, tol)
			if math.Abs(m-p) > tol {
				t.Errorf("fixed window, round trip %s: boundary peak %.1f, beyond %.1f of the model's %.1f", algos.FormatMicros(rtt), m, tol, p)
			}
			if cell.PeakX > prev {
				t.Errorf("fixed window, round trip %s: the peak rose to %.2fx", algos.FormatMicros(rtt), cell.PeakX)
			}
			prev, lastFW = cell.PeakX, cell.PeakX
			if rtt == 0 && (cell.Peak != idealCell.Peak || int64(cell.Peak) != 2*l.Rate) {
				t.Errorf("fixed window with no round trip peaks at %d, the ideal at %d; want both 2L = %d", cell.Peak, idealCell.Peak, 2*l.Rate)
			}
			if rtt == 2000 {
				stated(t, "fixed window at a 2 ms round trip (x)", 2, 1.92, 1.92, cell.PeakX)
			}
		}
	}
}

// With clocks in agreement, the node clock is as good as the ideal only
// with no round trip: then every request is decided in the order its
// clock was read, no promise is broken and every over is 0.0%. From the
// shortest round trip swept (250 µs) on, every algorithm breaks its
// promise on some run (the legs' jitter lets a request told an earlier
// time run after one told a later time), and the sliding counter, whose
// window restarts on such a pair across an edge, peaks at 1.5× its
// one-node peak or more and lets more through the longer the round trip.
// The docs state the measured: it peaks at 2.00x at every round trip
// from 250 µs, and lets +9.8% through at 250 µs, +48.9% at 2 ms.
//
// Badge: node clock against the round trip
func TestFindingNodeClockBreaksPromisesFromTheShortestRoundTrip(t *testing.T) {
	c := nodeClockSweep.result(t)
	if c.Options.Skew != 0 || c.Values[0] != 0 {
		t.Fatal("the node-clock sweep must run with clocks in agreement, from no round trip")
	}
	broken := 0
	defer func() { t.Logf("measured: %d (algorithm, round trip) cells with a broken promise, none at 0", broken) }()
	for _, name := range c.Algorithms {
		prev := math.Inf(-1)
		for k, rtt := range c.Values {
			cell := sweepCell(t, c, name, k)
			idealCell, _ := c.Points[k].Cell(name, model.Ideal)
			t.Logf("%s, round trip %s: %d runs broke the promise; peak %.2fx (ideal %.2fx), over %+.1f%%",
				name, algos.FormatMicros(rtt), cell.Violations, cell.PeakX, idealCell.PeakX, cell.Over)
			if rtt == 0 {
				if cell.Violations != 0 || cell.Over != 0 || cell.Peak != idealCell.Peak {
					t.Errorf("%s with no round trip: %d broken runs, %+.1f%% over, peak %.2fx (ideal %.2fx)", name, cell.Violations, cell.Over, cell.PeakX, idealCell.PeakX)
				}
				continue
			}
			if cell.Violations > 0 {
				broken++
			} else {
				t.Errorf("%s, round trip %s: no promise broken", name, algos.FormatMicros(rtt))
			}
			if name == "sliding-counter" {
				if cell.PeakX < 1.5*idealCell.PeakX {
					t.Errorf("sliding counter, round trip %s: peak %.2fx, under 1.5 × the ideal's %.2fx", algos.FormatMicros(rtt), cell.PeakX, idealCell.PeakX)
				}
				if cell.Over <= prev {
					t.Errorf("sliding counter, round trip %s: %+.1f%% over, not more than at the shorter round trip (%+.1f%%)", algos.FormatMicros(rtt), cell.Over, prev)
				}
				prev = cell.Over
				stated(t, "sliding counter, round trip "+algos.FormatMicros(rtt)+": peak (x)", 2, 2.00, 2.00, cell.PeakX)
				switch rtt {
				case 250:
					stated(t, "sliding counter, round trip 250µs: over (%)", 1, 9.8, 9.8, cell.Over)
				case 2000:
					stated(t, "sliding counter, round trip 2ms: over (%)", 1, 48.9, 48.9, cell.Over)
				}
			}
		}
	}
}

// Local limiters each given the whole limit multiply the flood by the node
// count: each node admits, from its share, up to what one limiter admits of
// the whole flood (A), so the flood gets about min(N·A, F) of its F
// requests (LocalFullModel). On one node it is the ideal (within 1%); the
// over rises with every node added while N·A < F, and never passes the
// model by more than 1 point (no node can take more than a limiter takes of
// the whole flood); the balancer deals the shares unevenly, so it may fall
// short of the model, by at most 10% of it (measured: the buckets and the
// fixed window within 1 point up to 4 nodes, the sliding log and counter up
// to 3.5% short; 0-9% short at 5, where N·A ≈ F). The docs state those,
// the sliding log's 9% short at 5, and the token bucket's over as measured
// (+100.0% on 2 nodes, +299.3% on 4, +381.2% on 5, +381.6% on 8, where it
// admits every request of the flood on every seed).
//
// Badge: local, full limit against nodes
func TestFindingLocalFullMultipliesTheFloodByTheNodeCount(t *testing.T) {
	c := localFullSweep.result(t)
	var headline []string
	defer func() {
		t.Logf("measured: the token bucket's flood over the ideal by nodes: %s", strings.Join(headline, ", "))
	}()
	// The token bucket's over the docs state, by nodes; and how far the
	// sliding log and counter fall short of the model up to 4 nodes, in %.
	tokenBucket := map[int64]float64{2: 100.0, 4: 299.3, 5: 381.2, 8: 381.6}
	var short []float64
	for _, name := range c.Algorithms {
		prev := math.Inf(-1)
		for k, v := range c.Values {
			m, p := modelAt(t, c, name, k)
			t.Logf("%s on %d nodes: flood %+.1f%% over (model %+.1f%%)", name, v, m, p)
			if name == "token-bucket" {
				headline = append(headline, fmt.Sprintf("%d: %+.1f%% (model %+.1f%%)", v, m, p))
				if want, ok := tokenBucket[v]; ok {
					stated(t, fmt.Sprintf("token bucket on %d nodes: flood over (%%)", v), 1, want, want, m)
				}
				if v == 8 {
					runs, _ := c.SeedRuns(name, k)
					for _, run := range runs {
						if f := run.Clients[traffic.Flood]; f.Admitted != f.Requests {
							t.Errorf("token bucket on 8 nodes, seed %d: %d of the flood's %d admitted; the claim is every one", run.Seed, f.Admitted, f.Requests)
						}
					}
				}
			}
			switch {
			case v > 1 && v <= 4 && (slices.Contains(bucketNames, name) || name == "fixed-window") && math.Abs(m-p) > 1:
				t.Errorf("%s on %d nodes: the flood is %+.1f%% over, beyond 1 point of the model's %+.1f%%", name, v, m, p)
			case v > 1 && v <= 4 && (name == "sliding-log" || name == "sliding-counter"):
				short = append(short, 100*(p-m)/p)
			case v == 5 && name == "sliding-log":
				stated(t, "sliding log on 5 nodes: short of the model (%)", 0, 9, 9, 100*(p-m)/p)
			}
			switch {
			case v == 1 && math.Abs(m) > 1:
				t.Errorf("%s on one node: the flood is %+.1f%% over the ideal, beyond 1%%", name, m)
			case m > p+1 || m < 0.9*p:
				t.Errorf("%s on %d nodes: the flood is %+.1f%% over, outside [90%% of, 1 point above] the model's %+.1f%%", name, v, m, p)
			case v > 1 && v <= 4 && m <= prev:
				t.Errorf("%s on %d nodes: the flood is %+.1f%% over, not above %+.1f%% on one node fewer", name, v, m, prev)
			}
			prev = m
		}
	}
	stated(t, "the sliding log and counter up to 4 nodes: the most short of the model (%)", 1, 3.5, 3.5, slices.Max(short))
}
