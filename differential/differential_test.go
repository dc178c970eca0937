package differential_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/differential"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

var (
	perSecond = algos.MustLimit(100, algos.Second, 100)
	duration  = 20 * algos.Second

	slidingCounter = limiter.FromAlgorithm(algos.SlidingCounter)
	slidingLog     = limiter.FromAlgorithm(algos.SlidingLog)
	wrongWeight    = limiter.FromAlgorithm(planted.SlidingCounterWrongWeight)
)

// openLoop is the simulator's five open-loop clients at 100/s for 20 s.
func openLoop(t testing.TB, seed uint64) []record.Request {
	t.Helper()
	reqs, err := traffic.OpenLoop(seed, perSecond, duration)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// deployed is the table's conditions: 4 nodes, a 1 ms round trip with ±25%
// on each leg, clocks in agreement.
func deployed(d model.Deployment, seed uint64, reqs []record.Request) model.Config {
	return model.Config{Limit: perSecond, Deployment: d, Nodes: 4, RTT: 1000, Jitter: model.DefaultJitter, Seed: seed, Requests: reqs}
}

func run(t testing.TB, mine, ref limiter.Spec, cfg model.Config) differential.Comparison {
	t.Helper()
	rep, err := differential.Run(mine, ref, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func written(t testing.TB, rep differential.Comparison) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The sliding counter against the sliding log, on the scenarios' traffic.
//
// Mechanism: the sliding counter promises at most L admits in each aligned
// window, and the sliding log at most L in any window of W, aligned ones
// included, so every row has Mine ≤ L and Ref ≤ L, and |error| ≤ L.
//
// Closer, on one node (ideal), the boundary client sends L requests in the
// W/100 before each odd edge k·W and L in the W/100 after it. Both admit the
// L before (the key is idle). After the edge the log admits none (the L it
// holds are within W), while the counter, holding prev = L, admits while
// L·(W−e) + cur·W < L·W, i.e. cur < L·e/W: one request once e ≥ 1 µs, and a
// second only at e > W/L = 10 ms, after the burst has ended. So the window
// after each odd edge is exactly +1: ten of them in 20 s, and nothing under.
// Measured on seed 1: exactly that (+1 ten times, every other window
// equal: the flood, on-off, honest and first-hit clients get the same
// count per aligned window from both, though 1801 requests are admitted by
// the counter alone and 1791 by the log alone: the same number per window,
// not the same requests).
//
// Behind a store (4 nodes, 1 ms ± 25%), requests reach the store up to
// 0.625 ms after they are sent: some of the L sent just before an edge are
// decided after it (by both), and the burst after the edge is decided up to
// W/100 + 0.625 ms after it, so the counter's cur < L·e/W allows a second
// admit (e > 10 ms) but never a third (e > 20 ms). Measured on seed 1: +1
// or +2 in the boundary client's windows after an edge, +1 once on the
// on-off client, nothing under; the bound asserted is +2.
func TestSlidingCounterAgainstSlidingLog(t *testing.T) {
	reqs := openLoop(t, 1)
	for _, c := range []struct {
		cfg        model.Config
		over       int64 // the worst over-admission the mechanism allows
		overWindow int64 // where the worst over was measured (its start)
		differ     int   // measured windows that differ
		total      int64 // measured signed total
	}{
		{model.Config{Limit: perSecond, Deployment: model.Ideal, Nodes: 1, Requests: reqs}, 1, 1 * algos.Second, 10, +10},
		{deployed(model.StoreClock, 1, reqs), 2, 1 * algos.Second, 11, +17},
	} {
		t.Run(c.cfg.Deployment.String(), func(t *testing.T) {
			rep := run(t, slidingCounter, slidingLog, c.cfg)
			t.Logf("signed error per aligned window:\n%s", written(t, rep))
			for _, r := range rep.Windows {
				if r.Mine > perSecond.Rate || r.Ref > perSecond.Rate {
					t.Errorf("key %d at %s: %d and %d admits in one aligned window, but both promise at most %d",
						r.Key, algos.FormatTime(r.Start), r.Mine, r.Ref, perSecond.Rate)
				}
			}
			if got := rep.WorstOver.Error; got != c.over {
				t.Errorf("worst over-admission %+d, want exactly %+d (the mechanism's bound, reached)", got, c.over)
			}
			if w := rep.WorstOver; w.Key != int(traffic.Boundary) || w.Start != c.overWindow {
				t.Errorf("worst over at key %d, %s; want the boundary client's window after the edge at %s",
					w.Key, algos.FormatTime(w.Start), algos.FormatTime(c.overWindow))
			}
			if got := rep.WorstUnder.Error; got != 0 {
				t.Errorf("worst under-admission %+d; the counter was never measured below the log per window", got)
			}
			if c.cfg.Deployment == model.Ideal {
				for _, r := range rep.Windows {
					want := int64(0)
					if r.Key == int(traffic.Boundary) && (r.Start/algos.Second)%2 == 1 {
						want = 1 // the window after an odd edge
					}
					if r.Error != want {
						t.Errorf("key %d at %s: error %+d, the mechanism gives %+d", r.Key, algos.FormatTime(r.Start), r.Error, want)
					}
				}
			}
			if rep.Differ != c.differ || rep.MineAdmits-rep.RefAdmits != c.total {
				t.Errorf("%d windows differ, %+d in all; measured %d and %+d", rep.Differ, rep.MineAdmits-rep.RefAdmits, c.differ, c.total)
			}
			if err := rep.Check(differential.Bound{Over: c.over}); err != nil {
				t.Errorf("Check within the mechanism's bound: %v", err)
			}
			err := rep.Check(differential.Bound{Over: c.over - 1})
			var be *differential.BoundError
			if !errors.As(err, &be) || be.Window != rep.WorstOver {
				t.Errorf("Check one below the measured worst: %v, want a BoundError at the worst window", err)
			}
		})
	}
}

// A limiter against itself agrees on every request and every window, in
// any deployment, with closed-loop clients too (their requests follow the
// answers, which are the same on both sides).
func TestLimiterAgainstItself(t *testing.T) {
	reqs := openLoop(t, 2)
	for _, spec := range []limiter.Spec{slidingCounter, slidingLog, limiter.FromAlgorithm(algos.TokenBucket), wrongWeight} {
		for _, d := range []model.Deployment{model.Ideal, model.NodeClock, model.GetSet} {
			cfg := deployed(d, 2, reqs)
			cfg.Skew = 50 * 1000
			cfg.Loop = traffic.LoopClients(len(traffic.OpenLoopClients()), perSecond, duration)
			rep := run(t, spec, spec, cfg)
			if rep.Differ != 0 || rep.MineOnly != 0 || rep.RefOnly != 0 || rep.WorstOver.Error != 0 || rep.WorstUnder.Error != 0 {
				t.Errorf("%s against itself, %s: %d windows differ, %d and %d requests admitted by one side\n%s",
					spec.Name, d, rep.Differ, rep.MineOnly, rep.RefOnly, written(t, rep))
			}
			if rep.MineAdmits == 0 || rep.MineAdmits != rep.RefAdmits || rep.Compared != len(reqs) {
				t.Errorf("%s against itself, %s: admitted %d and %d, compared %d of %d requests",
					spec.Name, d, rep.MineAdmits, rep.RefAdmits, rep.Compared, len(reqs))
			}
			if err := rep.Check(differential.Bound{}); err != nil {
				t.Errorf("%s against itself, %s: Check(Bound{}) = %v", spec.Name, d, err)
			}
			if out := written(t, rep); !strings.Contains(out, "no window differs\n") || !strings.Contains(out, spec.Name+" (mine) against "+spec.Name+" (ref)") {
				t.Errorf("%s against itself:\n%s", spec.Name, out)
			}
		}
	}
}

// The planted wrong-weight counter keeps the sliding counter's promise (at
// most L per aligned window) on the same traffic, on one node and behind a
// store, so the promise cannot tell it from the real one; the differential
// can. Measured on seed 1, ideal: the boundary client's window after each
// odd edge is +99 (100 against the real counter's 1: the previous window,
// full, weighs prev·e/W ≈ 0 just after the edge) and the window after that
// −99 (1 against 100: late in a window it weighs the previous one almost
// in full); the flood gets 81 to 88 per window against 100, −12 to −19;
// −816 in all, 61 of 82 windows differ.
func TestPlantedWrongWeightKeepsItsPromiseButNotTheCounts(t *testing.T) {
	reqs := openLoop(t, 1)
	ideal := model.Config{Limit: perSecond, Deployment: model.Ideal, Nodes: 1, Requests: reqs}
	for _, cfg := range []model.Config{ideal, deployed(model.StoreClock, 1, reqs)} {
		cfg.Limiter = wrongWeight
		res, err := model.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		promise := algos.SlidingCounter.Promise(perSecond)
		for k := range res.Keys {
			if v := promise.CheckAdmits(res.AdmitTimes(k)); v != nil || res.Keys[k].Violation != nil {
				t.Errorf("%s, key %d: the planted counter broke %q: %v", cfg.Deployment, k, promise.Text, v)
			}
		}
	}

	rep := run(t, wrongWeight, slidingCounter, ideal)
	t.Logf("planted against the real counter:\n%s", written(t, rep))
	if rep.WorstOver.Error != 99 || rep.WorstUnder.Error != -99 || rep.MineAdmits-rep.RefAdmits != -816 || rep.Differ != 61 {
		t.Errorf("worst over %+d, under %+d, total %+d, %d windows differ; measured +99, -99, -816, 61",
			rep.WorstOver.Error, rep.WorstUnder.Error, rep.MineAdmits-rep.RefAdmits, rep.Differ)
	}
	err := rep.Check(differential.Bound{Over: 2, Under: 2})
	want := "key 1, window [1.000000s, 2.000000s): planted-sliding-counter-wrong-weight admitted 100, sliding-counter 1: 99 over, the bound is 2" +
		"; and key 1, window [2.000000s, 3.000000s): planted-sliding-counter-wrong-weight admitted 1, sliding-counter 100: 99 under, the bound is 2"
	if err == nil || err.Error() != want {
		t.Errorf("Check(Bound{2, 2}) =\n%v\nwant\n%s", err, want)
	}
	// Even a bound of a fifth of the limit each way is broken.
	if err := rep.Check(differential.Bound{Over: 20, Under: 20}); err == nil {
		t.Error("Check(Bound{20, 20}) passed")
	}
}

// Write shows at most MaxRows windows, then how many more differ.
func TestWriteCapsTheTable(t *testing.T) {
	rep := run(t, wrongWeight, slidingCounter, model.Config{Limit: perSecond, Deployment: model.Ideal, Nodes: 1, Requests: openLoop(t, 1)})
	lines := strings.Split(written(t, rep), "\n")
	// The header, the table's head, MaxRows windows, then the rest counted.
	if len(lines) < differential.MaxRows+3 || lines[differential.MaxRows+2] != fmt.Sprintf("… %d more windows that differ", rep.Differ-differential.MaxRows) {
		t.Fatalf("%d windows differ, want %d printed then the rest counted:\n%s", rep.Differ, differential.MaxRows, strings.Join(lines, "\n"))
	}
	for _, line := range lines[2 : differential.MaxRows+2] {
		if !strings.Contains(line, "s, ") || strings.HasSuffix(line, " +0") {
			t.Errorf("not a window that differs: %q", line)
		}
	}
}

// Two runs of the same arguments give the same bytes, in a deployment with
// every random stream in use (balancer, legs, closed-loop clients).
func TestDeterministic(t *testing.T) {
	cfg := deployed(model.NodeClock, 3, openLoop(t, 3))
	cfg.Skew = 20 * 1000
	cfg.Loop = traffic.LoopClients(len(traffic.OpenLoopClients()), perSecond, duration)
	a := written(t, run(t, slidingCounter, slidingLog, cfg))
	b := written(t, run(t, slidingCounter, slidingLog, cfg))
	if a != b {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, "node-clock, 4 nodes, seed 3") {
		t.Errorf("the header does not name the deployment:\n%s", a)
	}
}

// flaky answers an error instead of a decision for every 7th call on key 2,
// and is the token bucket otherwise.
type flaky struct {
	lim   limiter.Limiter
	calls int
}

func (f *flaky) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	if key == 2 {
		f.calls++
		if f.calls%7 == 0 {
			return algos.Decision{}, errors.New("connection reset")
		}
	}
	return f.lim.Allow(ctx, key, now)
}

// A limiter's errors are counted apart, never as denials: the requests it
// failed are left out of the per-request comparison, and Check fails on
// them unless the bound allows them.
func TestErrorsCountApart(t *testing.T) {
	tb := limiter.FromAlgorithm(algos.TokenBucket)
	mine := limiter.Spec{Name: "flaky-token-bucket", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			m, err := limiter.NewMemory(algos.TokenBucket, l)
			return &flaky{lim: m}, err
		}}
	reqs := openLoop(t, 1)
	rep := run(t, mine, tb, deployed(model.StoreClock, 1, reqs))
	onKey2 := 0
	for _, r := range reqs {
		if r.Key == 2 {
			onKey2++
		}
	}
	if want := int64(onKey2 / 7); rep.MineErrors != want || rep.RefErrors != 0 {
		t.Errorf("errors %d and %d, want %d and 0", rep.MineErrors, rep.RefErrors, want)
	}
	if rep.Compared != len(reqs)-int(rep.MineErrors) {
		t.Errorf("compared %d of %d requests with %d errors", rep.Compared, len(reqs), rep.MineErrors)
	}
	for _, r := range rep.Windows {
		if r.Key != 2 && (r.Error != 0 || r.MineErrors != 0) {
			t.Errorf("key %d at %s: error %+d, %d limiter errors; only key 2 fails", r.Key, algos.FormatTime(r.Start), r.Error, r.MineErrors)
		}
	}
	err := rep.Check(differential.Bound{Over: 100, Under: 100})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("flaky-token-bucket answered %d errors and token-bucket 0", rep.MineErrors)) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("Check with errors: %v", err)
	}
	if err := rep.Check(differential.Bound{Over: 100, Under: 100, Errors: rep.MineErrors}); err != nil {
		t.Errorf("Check allowing the errors: %v", err)
	}
	if out := written(t, rep); !strings.Contains(out, "errors, counted apart: ") || !strings.Contains(out, "errors flaky-token-bucket") {
		t.Errorf("Write does not show the errors:\n%s", out)
	}
}

// Bad input is an error naming what is wrong, never a panic.
func TestBadInput(t *testing.T) {
	reqs := []record.Request{{Key: 0, Sent: 0}, {Key: 0, Sent: 10}}
	good := model.Config{Limit: perSecond, Deployment: model.Ideal, Nodes: 1, Requests: reqs}
	storeClockOnly := limiter.Spec{Name: "store-clock-limiter", Clock: limiter.StoreClock, Promise: algos.BucketPromise, New: slidingLog.New}
	with := func(f func(*model.Config)) model.Config { c := good; f(&c); return c }
	for _, c := range []struct {
		name      string
		mine, ref limiter.Spec
		cfg       model.Config
		want      string
	}{
		{"mine without a name", limiter.Spec{}, slidingLog, good, "differential: mine: limiter: a Spec needs a Name"},
		{"ref without New", slidingCounter, limiter.Spec{Name: "x", Clock: limiter.CallerClock, Promise: algos.BucketPromise}, good, `differential: ref: limiter: "x" has no New function`},
		{"zero limit", slidingCounter, slidingLog, with(func(c *model.Config) { c.Limit = algos.Limit{} }), "differential: invalid limit"},
		{"no deployment", slidingCounter, slidingLog, with(func(c *model.Config) { c.Deployment = 0 }), "differential: unknown deployment"},
		{"does not apply", storeClockOnly, slidingLog, with(func(c *model.Config) { c.Deployment = model.NodeClock; c.Nodes = 4 }), "differential: mine: model: node-clock does not apply to store-clock-limiter"},
		{"does not apply to ref", slidingLog, storeClockOnly, with(func(c *model.Config) { c.Deployment = model.LocalSplit; c.Nodes = 4 }), "differential: ref: model: local-split does not apply"},
		{"no requests", slidingCounter, slidingLog, with(func(c *model.Config) { c.Requests = nil }), "differential: the Config has no requests"},
		{"unsorted requests", slidingCounter, slidingLog, with(func(c *model.Config) { c.Requests = []record.Request{{Sent: 5}, {Sent: 1}} }), "differential: running mine (sliding-counter): model: requests are not sorted"},
		{"no nodes", slidingCounter, slidingLog, with(func(c *model.Config) { c.Nodes = 0 }), "differential: running mine (sliding-counter): model: 0 nodes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := differential.Run(c.mine, c.ref, c.cfg)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %v, want one starting %q", err, c.want)
			}
		})
	}
	rep := run(t, slidingCounter, slidingLog, good)
	if err := rep.Check(differential.Bound{Over: -1}); err == nil || !strings.Contains(err.Error(), "never negative") {
		t.Errorf("a negative bound: %v", err)
	}
}

// RunAgainst, handed mine's run, reports what Run does (closed-loop
// clients included, whose requests follow each side's answers), reusing
// the ref Result it is given from run to run; mine's run with fewer
// outcomes than the requests, and a deployment ref does not fit, are
// errors.
func TestRunAgainstIsRunWithMinesRunGiven(t *testing.T) {
	var refRun model.Result
	for _, d := range []model.Deployment{model.StoreClock, model.LocalSplit, model.GetSet} {
		for seed := uint64(1); seed <= 3; seed++ {
			cfg := deployed(d, seed, openLoop(t, seed))
			cfg.Loop = traffic.LoopClients(5, perSecond, duration)
			want := run(t, wrongWeight, slidingCounter, cfg)
			mineCfg := cfg
			mineCfg.Limiter = wrongWeight
			mine, err := model.Run(mineCfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := differential.RunAgainst(wrongWeight, slidingCounter, cfg, &mine, &refRun)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || written(t, got) != written(t, want) {
				t.Errorf("%s, seed %d: RunAgainst reports\n%s\nRun reports\n%s", d, seed, written(t, got), written(t, want))
			}
		}
	}
	cfg := deployed(model.StoreClock, 1, openLoop(t, 1))
	if _, err := differential.RunAgainst(wrongWeight, slidingCounter, cfg, &model.Result{}, &refRun); err == nil {
		t.Error("a run of no outcomes was taken for mine's")
	}
	storeOnly := limiter.FromAlgorithm(algos.SlidingLog)
	storeOnly.Clock = limiter.StoreClock
	local := deployed(model.LocalSplit, 1, openLoop(t, 1))
	if _, err := differential.RunAgainst(slidingLog, storeOnly, local, &model.Result{}, &refRun); err == nil || !strings.Contains(err.Error(), "ref") {
		t.Errorf("a ref that does not fit the deployment: %v", err)
	}
}
