package study

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// TestStudy prints the live half of the report. By default it runs one
// adversarial trial of every strategy at 16 workers on loopback (one point
// fills every table, and 16 is the fewest workers the contention table
// shows); with -study.full (`make study`) it runs the whole sweep: every strategy,
// worker count, path and release three times, check-then-act again at
// L = 101, the edge trials at every lead and the caller-clock trials at
// every skew. In both modes it also checks, trial by trial, what must hold
// in every trial: the atomic strategies admit exactly L and refuse nothing
// within it, WATCH/MULTI never over-admits, check-then-act never admits
// fewer than L.
func TestStudy(t *testing.T) {
	if !*full {
		t.Parallel() // the full sweep runs alone: its rates are the report's
	}
	budget := 2 * time.Minute
	if *full {
		budget = 40 * time.Minute
	}
	l := newLab(t, budget)
	start := time.Now()
	out := os.Stdout

	grid := Grid{
		Strategies: mustStrategies(t),
		Workers:    []int{16},
		Paths:      []*Path{l.path([2]int{})},
		Releases:   []Release{Adversarial},
		Reps:       1,
		Limit:      ConcurrencyLimit,
		Offered:    ConcurrencyOffered,
		Seed:       1,
	}
	if *full {
		grid.Workers = WorkerCounts
		grid.Releases = []Release{Adversarial, Random}
		grid.Reps = 3
		for _, legs := range DelayLegs {
			grid.Paths = append(grid.Paths, l.path(legs))
		}
	}
	fmt.Fprintf(out, "\n== paths (RTT: median of %d PINGs)\n\n", RTTSamples)
	for _, p := range grid.Paths {
		fmt.Fprintf(out, "%-8s up %-4s down %-4s RTT %s\n", p.Name, p.Up, p.Down, fmtDur(p.RTT))
	}
	trials := 0
	points, err := RunGrid(l.ctx, grid, l.prefix, func(pt GridPoint) {
		if *full && pt.Release == grid.Releases[len(grid.Releases)-1] && pt.Workers == grid.Workers[len(grid.Workers)-1] {
			t.Logf("%s done on %s (%s)", pt.Strategy, pt.Path, time.Since(start).Round(time.Second))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	trials += grid.Trials()
	checkEveryTrial(t, points)

	fmt.Fprintf(out, "\n== concurrency: %s, %d requests offered a trial\n\n", ConcurrencyLimit, ConcurrencyOffered)
	mustWrite(t, WriteGrid(out, points))
	fmt.Fprint(out, "\nover: admitted − L (mean/max over the trials); model: lockstep c·ceil(L/c) − L; within: refused while\n"+
		"fewer than L were admitted (mean/max); share: within ÷ (admitted + within), all trials; p50/p99: every\n"+
		"request's time to a decision, all trials; req/s: decisions per second from the barrier to the last (mean)\n")

	var lockstep []GridPoint
	for _, pt := range points {
		if pt.Strategy == (CheckThenAct{}).Name() && pt.Release == Adversarial {
			lockstep = append(lockstep, pt)
		}
	}
	if *full {
		// check-then-act again at a limit no c > 1 divides, adversarial only.
		lim, err := ConcurrencyLimitFor(101)
		if err != nil {
			t.Fatal(err)
		}
		g101 := grid
		g101.Strategies, g101.Releases, g101.Limit, g101.Offered = []Strategy{CheckThenAct{}}, []Release{Adversarial}, lim, 2*101
		c101, err := RunGrid(l.ctx, g101, l.prefix, nil)
		if err != nil {
			t.Fatal(err)
		}
		trials += g101.Trials()
		checkEveryTrial(t, c101)
		lockstep = append(lockstep, c101...)
	}
	fmt.Fprintf(out, "\n== check-then-act beside the lockstep model (adversarial)\n\n")
	mustWrite(t, WriteLockstepComparison(out, lockstep))

	fmt.Fprintf(out, "\n== Lua versus WATCH/MULTI on one contended key (adversarial; mean decisions per second)\n\n")
	mustWrite(t, writeContentionTable(out, points))

	if !*full {
		// The edge and caller-clock trials run in their findings by default.
		fmt.Fprintf(out, "\n== %d trials in %s (Redis from %s)\n", trials, time.Since(start).Round(time.Second), l.redis.Source)
		fmt.Fprintln(out, "(a small subset: `make study`, i.e. go test -count=1 -timeout 30m -v ./study/ -study.full, runs the full sweep)")
		return
	}
	leads, reps, skews := EdgeLeads, 3, SkewSkews
	scripts := mustScripts(t)
	fmt.Fprintf(out, "\n== around a window edge (live, loopback; most admits in any window of W by Redis TIME)\n\n")
	for _, lead := range leads {
		for range reps {
			rs, err := RunEdge(l.ctx, l.opt, scripts, EdgePlanFor(lead), EdgeWorkers, l.prefix+"edge")
			if err != nil {
				t.Fatal(err)
			}
			trials += len(rs)
			mustWrite(t, WriteEdgeTable(out, lead, rs))
			fmt.Fprintln(out)
		}
	}

	fmt.Fprintf(out, "== caller clocks (live, loopback): %s, 8 workers at 1.2x the rate for 3s; clamped and unclamped token buckets at once\n\n", SkewLimit)
	var buckets []LuaScript
	for _, a := range SkewBuckets {
		s, err := NewLuaScript(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		buckets = append(buckets, s)
	}
	var sk []SkewResult
	for _, skew := range skews {
		rs, err := RunSkew(l.ctx, l.opt, SkewPlanFor(skew), buckets, l.prefix+"skew")
		if err != nil {
			t.Fatal(err)
		}
		trials += len(rs)
		sk = append(sk, rs...)
	}
	mustWrite(t, WriteSkewTable(out, sk))

	fmt.Fprintf(out, "\n== %d trials in %s (Redis from %s)\n", trials, time.Since(start).Round(time.Second), l.redis.Source)
}

// checkEveryTrial asserts what must hold in each single trial, whatever the
// timing.
func checkEveryTrial(t *testing.T, points []GridPoint) {
	t.Helper()
	for _, pt := range points {
		for _, r := range pt.Results {
			where := fmt.Sprintf("%s c=%d %s %s L=%d", pt.Strategy, pt.Workers, pt.Path, pt.Release, pt.Limit)
			switch pt.Atomicity {
			case Atomic:
				if r.Over != 0 || r.RefusedWithin != 0 {
					t.Errorf("%s: over %+d, refused %d within the limit; an atomic strategy admits exactly L", where, r.Over, r.RefusedWithin)
				}
			case Optimistic:
				if r.Over > 0 {
					t.Errorf("%s: over-admitted by %d", where, r.Over)
				}
			case Racy:
				if r.Over < 0 || r.RefusedWithin != 0 {
					t.Errorf("%s: over %+d, refused %d within the limit; check-then-act refuses only at L", where, r.Over, r.RefusedWithin)
				}
			}
		}
	}
}

// writeContentionTable writes every Lua script's throughput over each
// WATCH/MULTI budget's, for the grid points with 16 or more workers,
// adversarial.
func writeContentionTable(w io.Writer, points []GridPoint) error {
	type at struct {
		path    string
		workers int
	}
	byStrategy := map[at]map[string]GridPoint{}
	var order []at
	for _, pt := range points {
		if pt.Release != Adversarial || pt.Workers < 16 {
			continue
		}
		k := at{pt.Path, pt.Workers}
		if byStrategy[k] == nil {
			byStrategy[k] = map[string]GridPoint{}
			order = append(order, k)
		}
		byStrategy[k][pt.Strategy] = pt
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-8s %3s %-20s %9s %14s %14s\n", "path", "c", "script", "req/s", "÷ watch-3", "÷ watch-10")
	for _, k := range order {
		m := byStrategy[k]
		w3, w10 := m[(Watch{Budget: 3}).Name()], m[(Watch{Budget: 10}).Name()]
		for _, name := range LuaAlgorithms {
			s, ok := m["lua-"+name]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "%-8s %3d %-20s %9.0f %13.1fx %13.1fx\n", k.path, k.workers, s.Strategy,
				s.Summarize().Throughput, ContentionRatio(s, w3), ContentionRatio(s, w10))
		}
	}
	_, err := b.WriteTo(w)
	return err
}

// mustWrite fails the test when writing a table failed.
func mustWrite(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
