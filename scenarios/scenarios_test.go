package scenarios_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
	"github.com/overshoot-go/overshoot/traffic"
)

// small returns quick options: 3 seeds of 6 s.
func small() scenarios.Options {
	o := scenarios.DefaultOptions()
	o.Seeds = []uint64{1, 2, 3}
	o.Duration = 6 * algos.Second
	o.WipeAt = 3*algos.Second + algos.Second/2
	return o
}

func tableBytes(t *testing.T, o scenarios.Options) []byte {
	t.Helper()
	r, err := scenarios.RunMatrix(limiter.FromAlgorithms(algos.All()...), o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if n, err := r.WriteTo(&b); err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	return b.Bytes()
}

func sweepBytes(t *testing.T, o scenarios.Options) []byte {
	t.Helper()
	r, err := scenarios.RunCurve(limiter.FromAlgorithms(algos.All()...), o, scenarios.SkewCurve([]int64{0, 25_000, 50_000}))
	if err != nil {
		t.Fatal(err)
	}
	s := scenarios.SkewSweep{Curve: r}
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReportsDoNotDependOnWorkers(t *testing.T) {
	o := small()
	want, wantSweep := tableBytes(t, o), sweepBytes(t, o)
	for _, workers := range []int{1, 3, 16} {
		o.Workers = workers
		if got := tableBytes(t, o); !bytes.Equal(got, want) {
			t.Errorf("the table differs with %d workers", workers)
		}
		if got := sweepBytes(t, o); !bytes.Equal(got, wantSweep) {
			t.Errorf("the sweep differs with %d workers", workers)
		}
	}
	o.Workers = 0
	for _, procs := range []int{1, 8} {
		old := runtime.GOMAXPROCS(procs)
		got, gotSweep := tableBytes(t, o), sweepBytes(t, o)
		runtime.GOMAXPROCS(old)
		if !bytes.Equal(got, want) || !bytes.Equal(gotSweep, wantSweep) {
			t.Errorf("the reports differ with GOMAXPROCS=%d", procs)
		}
	}
}

// Tables computed at once in parallel tests, each with its own workers,
// are the table of one computed alone. Kept to one seed: it is the race
// detector's test of the harness's sharing (make test runs it with -race),
// where TestReportsDoNotDependOnWorkers runs without.
func TestTablesInParallelTestsAgree(t *testing.T) {
	o := small()
	o.Seeds = o.Seeds[:1]
	want := tableBytes(t, o)
	t.Run("parallel", func(t *testing.T) {
		for range 2 {
			t.Run("", func(t *testing.T) {
				t.Parallel()
				if !bytes.Equal(tableBytes(t, o), want) {
					t.Error("a parallel table differs")
				}
			})
		}
	})
}

func TestCells(t *testing.T) {
	r, err := scenarios.RunMatrix(limiter.FromAlgorithms(algos.All()...), small())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range r.Algorithms {
		ideal, ok := r.Cell(name, model.Ideal)
		if !ok {
			t.Fatalf("no ideal cell for %s", name)
		}
		if want := 3 * len(r.Options.Clients()); ideal.Over != 0 || ideal.Violations != 0 || ideal.Runs != want {
			t.Errorf("%s ideal: %+v, want no over, no violations, %d runs", name, ideal, want)
		}
		runs := r.CellSeedRuns(name, model.NodeClock)
		if len(runs) != 3 || runs[2].Seed != 3 || runs[0].Algorithm != name {
			t.Fatalf("%s node clock runs: %+v", name, runs)
		}
		flood, _ := r.Cell(name, model.NodeClock, traffic.Flood)
		all, _ := r.Cell(name, model.NodeClock)
		if flood.Peak > all.Peak || flood.Runs != 3 || flood.PeakClient != traffic.Flood {
			t.Errorf("%s: flood cell %+v against all clients %+v", name, flood, all)
		}
	}
	if _, ok := r.Cell("no-such-algorithm", model.Ideal); ok {
		t.Error("a cell for an unknown algorithm")
	}
	if r.CellSeedRuns("gcra", model.Deployment(99)) != nil {
		t.Error("runs for an unknown deployment")
	}
}

// A user's own algorithm goes through the same matrix: here the token
// bucket under another name, and a limiter that admits everything, which
// every deployment shows breaking its promise.
func TestUserAlgorithm(t *testing.T) {
	mine := algos.TokenBucket
	mine.Name = "my <bucket>"
	open := algos.Algorithm{
		Name:    "admit-all",
		Decide:  func(*algos.State, int64, algos.Limit) algos.Decision { return algos.Decision{Allowed: true} },
		Promise: algos.BucketPromise,
	}
	o := small()
	r, err := scenarios.RunMatrix(limiter.FromAlgorithms(mine, open, algos.TokenBucket), o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	r.WriteTo(&b)
	if !strings.Contains(b.String(), "my <bucket>") || !strings.Contains(b.String(), "admit-all") {
		t.Errorf("the table does not name the user's algorithms:\n%s", b.String())
	}
	for _, d := range model.Deployments() {
		mineCell, _ := r.Cell("my <bucket>", d)
		theirs, _ := r.Cell("token-bucket", d)
		if fmt.Sprintf("%+v", mineCell) != fmt.Sprintf("%+v", theirs) { // NaN is never == NaN
			t.Errorf("%s: the renamed token bucket gives %+v, the original %+v", d, mineCell, theirs)
		}
		if c, _ := r.Cell("admit-all", d); c.Violations == 0 {
			t.Errorf("%s: admitting everything broke no promise", d)
		}
	}
	s, err := scenarios.RunCurve(limiter.FromAlgorithms(mine), o, scenarios.SkewCurve([]int64{0}))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	scenarios.SkewSweep{Curve: s}.WriteSVG(&b)
	if !strings.Contains(b.String(), "my &lt;bucket&gt;") || strings.Contains(b.String(), "my <bucket>") {
		t.Error("the SVG does not escape the algorithm's name")
	}
}

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(*scenarios.Options)
		algs []limiter.Spec
		want string
	}{
		{"no seeds", func(o *scenarios.Options) { o.Seeds = nil }, nil, "no seeds"},
		{"twice", func(o *scenarios.Options) { o.Seeds = []uint64{1, 1} }, nil, "twice"},
		{"wipe after the end", func(o *scenarios.Options) { o.WipeAt = o.Duration }, nil, "wipe"},
		{"no limit", func(o *scenarios.Options) { o.Limit = algos.Limit{} }, nil, "limit"},
		{"no nodes", func(o *scenarios.Options) { o.Nodes = 0 }, nil, "nodes"},
		{"negative workers", func(o *scenarios.Options) { o.Workers = -1 }, nil, "workers"},
		{"no limiters", nil, []limiter.Spec{}, "no limiters"},
		{"unnamed", nil, limiter.FromAlgorithms(algos.Algorithm{Decide: algos.GCRA.Decide, Promise: algos.GCRA.Promise}), "needs a Name"},
		{"same name", nil, limiter.FromAlgorithms(algos.GCRA, algos.GCRA), "two limiters"},
		{"no decide", nil, limiter.FromAlgorithms(algos.Algorithm{Name: "x", Promise: algos.BucketPromise}), "Decide"},
		{"no new", nil, []limiter.Spec{{Name: "x", Clock: limiter.CallerClock, Promise: algos.BucketPromise}}, "no New"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := small()
			if tc.edit != nil {
				tc.edit(&o)
			}
			algs := tc.algs
			if algs == nil {
				algs = limiter.FromAlgorithms(algos.GCRA)
			}
			if _, err := scenarios.RunMatrix(algs, o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RunMatrix: %v, want an error mentioning %q", err, tc.want)
			}
			if _, err := scenarios.RunCurve(algs, o, scenarios.SkewCurve([]int64{0})); err == nil {
				t.Error("RunCurve accepted it")
			}
		})
	}
	for _, skews := range [][]int64{nil, {-1}, {20, 10}, {10, 10}} {
		if _, err := scenarios.RunCurve(limiter.FromAlgorithms(algos.All()...), small(), scenarios.SkewCurve(skews)); err == nil {
			t.Errorf("RunCurve accepted skews %v", skews)
		}
	}
	// Without the ideal run there is no over: no model to measure against
	// it, and no over to plot.
	noIdeal := scenarios.SkewCurve([]int64{0})
	noIdeal.Plot = scenarios.PlotOver
	withModel := scenarios.SkewCurve([]int64{0})
	withModel.Model = scenarios.GetSetModel()
	for _, c := range []scenarios.CurveOf{noIdeal, withModel} {
		if _, err := scenarios.RunCurve(limiter.FromAlgorithms(algos.GCRA), small(), c); err == nil || !strings.Contains(err.Error(), "NoIdeal") {
			t.Errorf("RunCurve of %+v: %v, want an error naming NoIdeal", c, err)
		}
	}
}

// A store-clock limiter, which no node clock reaches, is n/a in the skew
// sweep, which says why, beside the limiters the sweep does run.
func TestSkewSweepSaysWhyAStoreClockLimiterIsNotRun(t *testing.T) {
	o := small()
	o.Seeds = o.Seeds[:1]
	store := storeClockBucket("store-bucket", func(_ context.Context, now int64) int64 { return now })
	c, err := scenarios.RunCurve([]limiter.Spec{limiter.FromAlgorithm(algos.GCRA), store}, o, scenarios.SkewCurve([]int64{0, 50_000}))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := (scenarios.SkewSweep{Curve: c}).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if gcra, _ := c.At("gcra", 50_000); gcra.NotApplicable != "" || gcra.Peak == 0 ||
		!strings.Contains(b.String(), "50ms  2.01x           n/a\n") ||
		!strings.Contains(b.String(), "store-bucket at 50ms: n/a, it reads the store's clock") {
		t.Errorf("GCRA at 50 ms %+v; the sweep:\n%s", gcra, b.String())
	}
}

// A hand-built skew sweep with nothing to draw, or a curve of another
// deployment or parameter, is an error, not a panic or another curve's
// numbers under the skew sweep's words.
func TestEmptySweepHasNoPicture(t *testing.T) {
	if _, err := (scenarios.SkewSweep{}).WriteSVG(io.Discard); err == nil {
		t.Error("WriteSVG drew a sweep with no skews")
	}
	c, err := scenarios.RunCurve(limiter.FromAlgorithms(algos.GCRA), small(),
		scenarios.CurveOf{Deployment: model.NodeClock, Param: scenarios.ParamRTT, Values: []int64{0}, NoIdeal: true, Plot: scenarios.PlotPeak})
	if err != nil {
		t.Fatal(err)
	}
	s := scenarios.SkewSweep{Curve: c}
	if _, err := s.WriteTo(io.Discard); err == nil || !strings.Contains(err.Error(), "against the round trip") {
		t.Errorf("a curve against the round trip rendered as the skew sweep: %v", err)
	}
	if err := s.WriteJSON(io.Discard); err == nil {
		t.Error("a curve against the round trip written as the skew sweep's JSON")
	}
}

// Clock faults whose honest client would send every 0 µs (a rate above
// half its window in µs) are refused with a clear error before any request
// is made, not generated forever.
func TestClockFaultsRefuseALimitItsHonestClientCannotPace(t *testing.T) {
	d := scenarios.DefaultClockFaultOptions()
	d.Limit = algos.MustLimit(3_000_000, algos.Second, 20)
	done := make(chan error, 1)
	go func() { _, err := scenarios.RunClockFaults(d); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "honest client") {
			t.Fatalf("RunClockFaults at %v: %v, want an error naming the honest client", d.Limit, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("RunClockFaults at %v did not return within 10 s", d.Limit)
	}
}
