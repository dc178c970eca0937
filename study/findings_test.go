package study

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/traffic"
)

// Each TestFinding runs its own small trials against a real Redis and
// asserts the number the report states. The tolerances are what the trials
// measured over many runs on a 2-core machine, stated beside each.
//
// Two kinds of findings share the binary. Those whose claims rest on real
// time (rounds kept in step by a delay, a flood kept to its plan, rates in
// decisions per second) are sequential tests that take
// redistest.LockTiming: Go runs them one at a time before any parallel test
// of the binary, so none of its heavy trials runs beside them, and the lock
// keeps the other binaries' timing tests off. The rest hold whatever the
// scheduling (atomicity, never over-admitting, replay equality) or measure
// what they need in their own trials, and run in parallel (TestMain sets
// how many at once).

// With every worker released at once on loopback, check-then-act lets more
// than L through at every concurrency above one: some GETs always read a
// count that other workers are about to INCR. With one worker it is exact.
// L is 101 (ctaLimit), which no c above one divides: workers that keep in
// step over-admit by the lockstep model's c·⌈L/c⌉ − L, and workers that
// fall out of step race for the last places.
//
// It never admits fewer than L (it refuses only on reading L), so "more than
// L on average" at a concurrency is "more than L in some trial": each c runs
// ctaMinReps trials (for the mean the log states), and more, up to
// ctaMaxReps, only while none has over-admitted. At c = 2 the first
// over-admitting trial came within 5 in each of 30 idle runs (by one, the
// most two workers can); from c = 8 up every trial over-admits.
// -study.full runs all 24 at every c.
//
// Badge: check-then-act
func TestFindingCheckThenActOverAdmitsAtEveryConcurrencyAboveOne(t *testing.T) {
	t.Parallel()
	l := newLab(t, 2*time.Minute)
	f := l.conns(l.path([2]int{}), 64)
	cta := CheckThenAct{}
	minReps, maxReps := ctaMinReps, ctaMaxReps
	if *full {
		minReps = maxReps
	}
	// One worker cannot race itself: one trial shows it exact.
	if s := l.point(f, cta, 1, ConcurrencyOffered, ctaLimit, Adversarial, 1).Summarize(); s.OverMax != 0 || s.OverMin != 0 {
		t.Errorf("one worker: over-admitted %+d..%+d, want exactly 0", s.OverMin, s.OverMax)
	}
	overAdmitted := func(pt GridPoint) bool { return pt.Summarize().OverMax > 0 }
	for _, c := range WorkerCounts[1:] {
		pt, err := l.pointUntil(f, cta, c, ceilDiv(ConcurrencyOffered, c), ctaLimit, Adversarial, minReps, maxReps, overAdmitted)
		if err != nil {
			t.Fatal(err)
		}
		s := pt.Summarize()
		t.Logf("c=%2d: over-admitted in %2d of %d trials, mean %+.1f (%s of L), max %+d", c, s.OverAdmittingTrials, s.Trials, s.OverMean, pct(s.OverMean/ctaLimit), s.OverMax)
		if c == WorkerCounts[len(WorkerCounts)-1] {
			t.Logf("measured: %+.1f%% over L on average with %d workers (%d trials), %+d at worst", s.OverMean, c, s.Trials, s.OverMax)
		}
		if s.OverMean <= 0 {
			t.Errorf("c=%d: mean over-admission %+.2f over %d trials, want > 0", c, s.OverMean, s.Trials)
		}
		// How wide the race opens at 64 workers is the scheduler's: +27.7
		// to +37.3 on average in twelve runs with both cores busy besides,
		// +6.0 on an idle machine (4 trials), where a bound of +15 set from
		// the loaded runs failed. The claim held is the one above.
		if s.OverMin < 0 {
			t.Errorf("c=%d: admitted fewer than L (%+d): check-then-act cannot refuse below the limit", c, s.OverMin)
		}
		for i, r := range pt.Results {
			v := judgedAsAService(t, fmt.Sprintf("check-then-act, c=%d", c), r)
			if c == WorkerCounts[len(WorkerCounts)-1] && i == 0 {
				t.Logf("its first trial at c=%d, judged from its records alone (judge.Records):\n%v", c, v)
			}
		}
	}
}

// judgedAsAService holds a trial to its limit's promise from its records
// alone, with the judge of records, as a deployed service is judged
// (judge.Records): every request a worker sent, when it was sent and
// answered on this machine's clock, and whether it was admitted. A trial
// runs on a fresh key within one aligned window (Run makes sure), so each
// strategy promises at most L in the whole trial, which is the sliding
// window's promise (at most L in any interval of W) over a trial far
// shorter than W; the fixed window's own promise is judged by a client
// that cannot see the window's edges as at most 2L. The judge, which
// convicts only what every placement of the decisions within their spans
// shows, sees all of a trial's admits within W of each other: a trial that
// admitted more than L is caught over-admitting by exactly as many, one
// that did not is clean.
func judgedAsAService(t *testing.T, trial string, r TrialResult) judge.Verdict {
	t.Helper()
	lim := r.Trial.Limit
	v := judge.Records(r.Records, algos.SlidingWindowPromise(lim), lim)
	b, caught := v.Caught(breach.OverAdmission)
	switch {
	case len(r.Records) != r.Trial.Sent():
		t.Errorf("%s: %d records of %d requests", trial, len(r.Records), r.Trial.Sent())
	case r.Over > 0 && (!caught || b.Count != int64(r.Over)):
		t.Errorf("%s: admitted %+d over L, but its records were judged:\n%v", trial, r.Over, v)
	case r.Over <= 0 && !v.Clean():
		t.Errorf("%s: admitted %+d over L, but its records were caught:\n%v", trial, r.Over, v)
	}
	return v
}

// The trials of the check-then-act finding at each concurrency: at least
// ctaMinReps, and up to ctaMaxReps while none over-admits.
const ctaMinReps, ctaMaxReps = 3, 24

// ctaLimit is L of the check-then-act finding: 101, which no concurrency
// above one divides, so that even workers that stay in lockstep (every GET
// of a round before every INCR) over-admit, by c·⌈L/c⌉ − L (the lockstep
// finding below). At L = 100 two or four workers in lockstep admit
// exactly L, and the finding rested on the scheduler breaking their step:
// on an idle machine whose loopback answered in 30 to 40 µs, c = 2 stayed
// exact through all 24 trials in 4 of 22 runs, and c = 4 once needed 77.
const ctaLimit = 101

// Under a 6.5 ms round trip check-then-act follows the lockstep model
// c·⌈L/c⌉ − L exactly, for a limit that c divides (100: no over-admission at
// c ≤ 4) and one that no c > 1 divides (101: over-admission at every c > 1).
//
// The model is about rounds in which every worker reads before any worker
// writes. The experiment enforces what it can: workers are released together
// for every request (Rounds), so drift cannot build up from one request to
// the next; the round trip does the rest, keeping a round's GETs ahead of its
// INCRs. Whether it did is measured, not assumed: a round is in step when
// every GET in it read exactly the admits of the rounds before. A trial with
// a round out of step (a busy machine delayed some GET by a round trip) did
// not run under the model's conditions; it is reported and run again, up to
// lockstepTries times, and the finding fails if no trial ran in step. The
// count of an in-step trial must equal the model exactly.
//
// The twelve cells run in four lanes at once, each lane on its own keys and
// connections through the one delayed path: c = 2 at L = 100, c = 2 at
// L = 101, c = 4 at both, and c ≥ 8 at both one after another, some 50
// rounds each. A round takes two round trips of 6.5 ms and little CPU, and
// whether each cell's rounds stayed in step is measured in it. (The lanes
// share connections because the proxy opens them one at a time.)
//
// Badge: lockstep model
func TestFindingCheckThenActFollowsTheLockstepModelUnderDelay(t *testing.T) {
	redistest.LockTiming(t) // the rounds must stay in step
	l := newLab(t, 5*time.Minute)
	p := l.path(DelayLegs[len(DelayLegs)-1])
	const lockstepTries = 20 // a trial at c = 64 is three rounds, some 50 ms
	type cell struct {
		limit, c, model int
		tried           []string
		inStep          *TrialResult
	}
	var cells []*cell
	lanes := map[int][]*cell{} // by the lane's lowest c
	for _, limit := range LockstepLimits {
		for _, c := range WorkerCounts[1:] { // one worker is exact everywhere (see above)
			cl := &cell{limit: limit, c: c, model: LockstepOver(c, limit)}
			cells = append(cells, cl)
			lane := min(c, 8)
			if c == 2 {
				lane = 2 * limit // c = 2 alone: 51 or 52 rounds
			}
			lanes[lane] = append(lanes[lane], cl)
		}
	}
	var jobs []func() error
	for _, lane := range lanes {
		f := l.conns(p, slices.MaxFunc(lane, func(a, b *cell) int { return cmp.Compare(a.c, b.c) }).c)
		jobs = append(jobs, func() error {
			for _, cl := range lane {
				// ⌈L/c⌉+1 requests each: enough for the last round to read L.
				pt, err := l.pointUntil(f, CheckThenAct{}, cl.c, ceilDiv(cl.limit, cl.c)+1, cl.limit, Rounds, 1, lockstepTries,
					func(pt GridPoint) bool { return pt.Results[len(pt.Results)-1].RoundsOutOfStep == 0 })
				for _, r := range pt.Results {
					cl.tried = append(cl.tried, fmt.Sprintf("%+d (%d of %d rounds out of step)", r.Over, r.RoundsOutOfStep, r.Rounds))
					if r.RoundsOutOfStep == 0 {
						cl.inStep = &r
					}
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	matched, reruns := 0, 0
	defer func() {
		t.Logf("measured: %d of %d cells exactly c·ceil(L/c) - L at RTT %s (%d trials rerun for a round out of step)",
			matched, len(cells), fmtDur(p.RTT), reruns)
	}()
	l.concurrently(jobs...)
	for _, cl := range cells {
		t.Logf("RTT %s, L=%d, c=%2d: model %+3d, trials %s", fmtDur(p.RTT), cl.limit, cl.c, cl.model, strings.Join(cl.tried, ", "))
		reruns += len(cl.tried) - 1
		switch {
		case cl.inStep == nil:
			t.Errorf("L=%d c=%d: no trial of %d ran in step (%s): the machine delayed some GET by more than a round trip every time",
				cl.limit, cl.c, lockstepTries, strings.Join(cl.tried, ", "))
		case cl.inStep.Over != cl.model:
			t.Errorf("L=%d c=%d: an in-step trial over-admitted %+d, the lockstep model says %+d", cl.limit, cl.c, cl.inStep.Over, cl.model)
		default:
			matched++
		}
	}
}

// Increment-then-check and the four Lua scripts decide in one atomic Redis
// command: every trial admits exactly L and refuses nothing within it, at
// every concurrency and release, on loopback and under delay.
//
// The trials use L = atomicLimit = 20 (offering 2L, as the sweep does at
// L = 100): what could break atomicity is the race for the last places
// under the limit, which every trial runs once whatever L is, with every
// worker in flight (at c = 64 all 64 requests race for the 20 places).
// TestStudy checks the same in every trial of its grid at L = 100. It holds
// however the trials are scheduled, so the five strategies' loopback trials
// run at once, each strategy on its own connections and keys, beside the
// delayed trials, which share one set of connections (the proxy opens them
// one at a time).
//
// Badge: atomic strategies
func TestFindingAtomicStrategiesAdmitExactlyTheLimit(t *testing.T) {
	t.Parallel()
	l := newLab(t, 3*time.Minute)
	loop, slow := l.path([2]int{}), l.path(DelayLegs[len(DelayLegs)-1])
	var points []GridPoint
	var mu sync.Mutex
	check := func(f *Conns, s Strategy, c int, rel Release) error {
		pt, err := l.pointUntil(f, s, c, ceilDiv(2*atomicLimit, c), atomicLimit, rel, 1, 1, nil)
		mu.Lock()
		points = append(points, pt)
		mu.Unlock()
		return err
	}
	var atomic []Strategy
	for _, s := range mustStrategies(t) {
		if s.Atomicity() == Atomic {
			atomic = append(atomic, s)
		}
	}
	var jobs []func() error
	for _, s := range atomic {
		f := l.conns(loop, 64)
		jobs = append(jobs, func() error {
			for _, c := range WorkerCounts {
				for _, rel := range []Release{Adversarial, Random} {
					if err := check(f, s, c, rel); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	slowF := l.conns(slow, 64)
	jobs = append(jobs, func() error {
		for _, s := range atomic {
			for _, c := range []int{16, 64} {
				if err := check(slowF, s, c, Adversarial); err != nil {
					return err
				}
			}
		}
		return nil
	})
	l.concurrently(jobs...)
	trials := 0
	for _, pt := range points {
		for _, r := range pt.Results {
			trials++
			if r.Admitted != atomicLimit || r.RefusedWithin != 0 {
				t.Errorf("%s, c=%d, %s, %s: admitted %d and refused %d within the limit, want exactly %d and 0",
					pt.Strategy, pt.Workers, pt.Release, pt.Path, r.Admitted, r.RefusedWithin, atomicLimit)
			}
			judgedAsAService(t, fmt.Sprintf("%s, c=%d, %s, %s", pt.Strategy, pt.Workers, pt.Release, pt.Path), r)
		}
	}
	t.Logf("%d trials, every one admitted exactly L = %d, and its records judged clean", trials, atomicLimit)
	t.Logf("measured: %d trials, each admitted exactly L", trials)
}

// atomicLimit is L of the atomic strategies' finding.
const atomicLimit = 20

// WATCH/MULTI never lets more than L through, but under contention its
// retries run out while the count is still below L, and it refuses requests
// the limit had room for: more with a budget of 3 retries than of 10.
//
// By default it runs c = 16 alone, where every run has measured some 130
// refusals within the limit with 3 retries and 45 with 10 (against a claim
// of "some, and more with 3": a margin of about three times); -study.full
// adds c = 4 (3 to 6 with 10 retries) and c = 64, the costliest. The trials
// run at once, each on its own key and connections, through the same
// delayed path: the contention is between one trial's workers on its key,
// which the path's round trip, not the machine's speed, keeps overlapping.
//
// Badge: WATCH/MULTI
func TestFindingWatchMultiNeverOverAdmitsButRefusesWithinTheLimit(t *testing.T) {
	t.Parallel()
	l := newLab(t, 3*time.Minute)
	p := l.path(DelayLegs[0])
	workers := []int{16}
	if *full {
		workers = []int{4, 16, 64}
	}
	budgets := []int{3, 10}
	points := make([]GridPoint, len(budgets)*len(workers))
	var jobs []func() error
	for i, budget := range budgets {
		for j, c := range workers {
			f := l.conns(p, c)
			jobs = append(jobs, func() (err error) {
				points[i*len(workers)+j], err = l.pointUntil(f, Watch{Budget: budget}, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, 1, 1, nil)
				return err
			})
		}
	}
	l.concurrently(jobs...)
	within := map[int]int{}
	for i, pt := range points {
		budget := budgets[i/len(workers)]
		s := pt.Summarize()
		t.Logf("RTT %s, %s, c=%2d: admitted %3d, refused %3d within the limit (%s of the requests within it), %.1f attempts a request",
			fmtDur(p.RTT), pt.Strategy, pt.Workers, s.AdmittedMax, s.WithinMax, pct(s.WithinShare), s.Attempts)
		if s.OverMax > 0 {
			t.Errorf("%s c=%d: over-admitted by %d", pt.Strategy, pt.Workers, s.OverMax)
		}
		within[budget] += s.WithinMax
		// At 16 workers a budget of 3 refused 133 to 149 of the requests
		// within the limit (64% or more), a budget of 10 44 to 87 (31% or
		// more), in twelve runs with both cores busy besides; the bounds
		// sit 14 and 11 points below.
		if least := watchMinRefusedAt16[budget]; pt.Workers == 16 && 100*s.WithinShare < least {
			t.Errorf("%s c=16: refused %.0f%% of the requests within the limit, want at least %.0f%%", pt.Strategy, 100*s.WithinShare, least)
		}
	}
	t.Logf("measured: refused within the limit: %d with 3 retries, %d with 10", within[3], within[10])
	if within[3] == 0 || within[10] == 0 {
		t.Errorf("refusals within the limit: budget 3: %d, budget 10: %d; want some for both", within[3], within[10])
	}
	if within[3] <= within[10] {
		t.Errorf("refusals within the limit: budget 3: %d, budget 10: %d; want more with the smaller budget", within[3], within[10])
	}
}

// watchMinRefusedAt16 is, for each retry budget, the least share (%) of
// the requests within the limit WATCH/MULTI refuses at 16 workers behind
// the 1 ms path.
var watchMinRefusedAt16 = map[int]float64{3: 50, 10: 20}

// On one contended key (64 workers behind a delayed path), a Lua script
// decides several times as many requests per second as WATCH/MULTI, which
// spends three round trips on every attempt and retries most: at least
// luaMinRatio× (the report states the measured ratios, 10-25× here).
//
// Loopback is left out of the assertion: on this 2-core machine the 64
// workers then mostly run one after another, WATCH meets little contention,
// and the ratio swings between runs (1.2× to 24× measured); the report
// prints it.
//
// By default against WATCH/MULTI with 3 retries only: it retries least,
// so it is the fastest WATCH/MULTI and the ratio the bound must hold for.
// -study.full adds 10 retries and every delayed path.
//
// A trial lasts a fraction of a second, so a moment in which another
// process held the CPU can halve one trial's rate: a single pair of trials
// measured 2.6x once in ten runs beside a busy machine and another
// package's live tests. So the strategies run in pairs, one trial of each,
// back to back (pairs, three by default, each pair sharing whatever load
// the machine had then), and the bound holds the median pair's ratio; the
// test logs every pair's.
//
// The bound is luaMinRatio: twelve runs with both cores busy besides (and
// three other programs' tests) measured 4.5 to 21.4x against 3 retries;
// the bound is two thirds of the lowest, a throughput ratio on a shared
// machine.
//
// Badge: Lua vs WATCH/MULTI
func TestFindingLuaIsSeveralTimesFasterThanWatchMultiUnderContention(t *testing.T) {
	const luaMinRatio = 3.0
	redistest.LockTiming(t) // the rates are decisions per second of real time
	l := newLab(t, 3*time.Minute)
	const c = 64
	pairs := 3
	lua := mustStrategy(t, "lua-fixed-window")
	paths, watches := DelayLegs[:1], []Watch{{Budget: 3}}
	if *full {
		paths, watches, pairs = DelayLegs, []Watch{{Budget: 3}, {Budget: 10}}, 5
	}
	lowest := math.Inf(1)
	defer func() {
		t.Logf("measured: Lua at least %.1fx as fast as WATCH/MULTI with %d workers (median of %d pairs)", lowest, c, pairs)
	}()
	for _, legs := range paths {
		f := l.conns(l.path(legs), c)
		for _, w := range watches {
			ratios := make([]float64, pairs)
			var each []string
			for i := range ratios {
				script := l.point(f, lua, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, 1)
				watch := l.point(f, w, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, 1)
				ratios[i] = ContentionRatio(script, watch)
				each = append(each, fmt.Sprintf("%.0f/%.0f req/s = %.1fx", script.Summarize().Throughput, watch.Summarize().Throughput, ratios[i]))
			}
			slices.Sort(ratios)
			ratio := ratios[pairs/2]
			t.Logf("RTT %s, c=%d, %s against %s, pair by pair: %s; median %.1fx", fmtDur(f.Path.RTT), c,
				lua.Name(), w.Name(), strings.Join(each, ", "), ratio)
			lowest = min(lowest, ratio)
			if ratio < luaMinRatio {
				t.Errorf("%s: Lua is %.2fx as fast as %s in the median of %d pairs, want at least %.0fx", f.Path.Name, ratio, w.Name(), pairs, luaMinRatio)
			}
		}
	}
}

// Around a window edge, with every decision atomic: a fixed window admits
// L just before the edge and L just after (2L in one window's length); a
// token bucket set to L per W admits its burst and then L·(W-1µs)/W refilled
// tokens (2L - 1: the L-th refill lands exactly W after the burst); the
// sliding counter admits more than L; only the sliding log holds at L.
//
// Two things are checked, and kept apart. What no scheduling can change:
// each script decides exactly as its Go twin replayed at the Redis TIMEs it
// decided at, in Redis's order (0 differences in every trial). What depends
// on the plan being kept: the counts above hold for a flood that arrives on
// time, so each script's count is judged on a trial in which every one of
// its requests was decided within EdgeMaxLag of its planned time (the token
// bucket's count moves with a request 50 ms late). A trial a busy machine
// delayed past that did not run the plan; it is reported, and the scripts
// it bent are run again, up to edgeTries times. A script that never ran on
// plan has its count not judged: the test says how late its requests were
// and is skipped (after failing on any difference or count it did judge),
// since what it would measure is the machine, not the limiter.
//
// Badge: window edge, live
func TestFindingOnlyTheSlidingLogHoldsTheLimitAcrossAWindowEdge(t *testing.T) {
	redistest.LockTiming(t) // the flood must keep its plan
	l := newLab(t, time.Minute)
	const edgeTries = 5
	lead := EdgeLeads[1]
	plan := EdgePlanFor(lead)
	L := int(EdgeLimit.Rate)
	want := map[string]func(most int) bool{
		algos.FixedWindow.Name:    func(most int) bool { return most == 2*L },
		algos.TokenBucket.Name:    func(most int) bool { return most == 2*L-1 },
		algos.SlidingCounter.Name: func(most int) bool { return most > L },
		algos.SlidingLog.Name:     func(most int) bool { return most == L },
	}
	says := map[string]string{
		algos.FixedWindow.Name:    fmt.Sprintf("exactly 2L = %d", 2*L),
		algos.TokenBucket.Name:    fmt.Sprintf("exactly 2L-1 = %d", 2*L-1),
		algos.SlidingCounter.Name: fmt.Sprintf("more than L = %d", L),
		algos.SlidingLog.Name:     fmt.Sprintf("exactly L = %d", L),
	}
	onPlan := map[string]EdgeResult{}
	lags := map[string][]string{}
	pending := mustScripts(t)
	for try := 1; try <= edgeTries && len(pending) > 0; try++ {
		rs, err := RunEdge(l.ctx, l.opt, pending, plan, EdgeWorkers, l.prefix+"edge")
		if err != nil {
			t.Fatal(err)
		}
		var line []string
		var bent []LuaScript
		for i, r := range rs {
			if r.Differences != 0 {
				t.Errorf("%s: %d decisions differ from the Go twin replayed at the same Redis TIMEs: the script is not the algorithm", r.Algorithm, r.Differences)
			}
			lags[r.Algorithm] = append(lags[r.Algorithm], algos.FormatMicros(r.Lag))
			line = append(line, fmt.Sprintf("%s %s", r.Algorithm, algos.FormatMicros(r.Lag)))
			if r.OnPlan() {
				onPlan[r.Algorithm] = r
			} else {
				bent = append(bent, pending[i])
			}
		}
		t.Logf("trial %d: latest decision after its plan: %s", try, strings.Join(line, ", "))
		pending = bent
	}
	var headline []string
	defer func() { t.Logf("measured: %s", strings.Join(headline, ", ")) }()
	var unjudged []string
	for _, name := range LuaAlgorithms {
		r, ok := onPlan[name]
		if !ok {
			unjudged = append(unjudged, fmt.Sprintf("%s, claimed %s (latest decisions %s after the plan)",
				name, says[name], strings.Join(lags[name], ", ")))
			continue
		}
		t.Logf("%-16s most in any %s: %3d (%.2fx L), replayed %3d, model on the plan %3d", r.Algorithm, algos.FormatMicros(EdgeLimit.Window),
			r.Most, float64(r.Most)/float64(L), r.Replayed, r.Model)
		headline = append(headline, fmt.Sprintf("%s %.2fx", r.Algorithm, float64(r.Most)/float64(L)))
		if !want[r.Algorithm](r.Most) {
			t.Errorf("%s: %d admits in one window of %s (model on the plan %d), want %s", r.Algorithm, r.Most, algos.FormatMicros(EdgeLimit.Window), r.Model, says[r.Algorithm])
		}
		// From its records alone, as a deployed service is judged, against
		// "at most L in any window": the sliding log is clean, and the
		// fixed window and the token bucket, 2L and 2L − 1 within a
		// window's length, are caught. (The sliding counter's excess may
		// be within what a round trip leaves uncertain: logged only.)
		v := judge.Records(r.Records, algos.SlidingWindowPromise(EdgeLimit), EdgeLimit)
		_, caught := v.Caught(breach.OverAdmission)
		switch r.Algorithm {
		case algos.SlidingLog.Name:
			if !v.Clean() {
				t.Errorf("%s: its records were caught against at most L in any window:\n%v", r.Algorithm, v)
			}
		case algos.FixedWindow.Name, algos.TokenBucket.Name:
			if !caught {
				t.Errorf("%s: its records were not caught over-admitting against at most L in any window:\n%v", r.Algorithm, v)
			}
		}
		t.Logf("%s, judged from its records against at most L in any window (judge.Records):\n%s\n%s", r.Algorithm, v.RowHeader(), v.Row())
	}
	if len(unjudged) > 0 {
		t.Skipf("the machine was too busy to keep the plan within %s in %d trials, so these counts were not judged: %s",
			algos.FormatMicros(EdgeMaxLag), edgeTries, strings.Join(unjudged, "; "))
	}
}

// A token bucket told the time by its callers, whose clocks are spread over
// ±1 s (a skew of 2 s between the extreme clocks), does not hold its rate
// near the limit, while the same bucket on Redis's clock admits what its
// promise allows (99% of B + L·T/W in the model: the last request comes
// before the last token).
//
// The published study reports the caller-clock bucket admitting 16% of its
// rate. This repository's token bucket refills max(0, now-last) and stores
// last = now, so a caller behind the last one gets no refill and moves last
// back, and the next caller ahead is refilled for the gap again: it cannot
// lose tokens to skew, only gain them. Measured: it admits everything
// offered (1.2x the rate), 116% of what the limit allows. The 16% is what a
// bucket without the clamp does: see the next finding.
//
// Badge: caller clocks, clamped
func TestFindingCallerClockBucketOverAdmitsAtTwoSecondSkewWhileRedisClockStaysExact(t *testing.T) {
	t.Parallel()
	l := newLab(t, 2*time.Minute)
	plan := SkewPlanFor(2 * algos.Second)
	redisClock, callerClock := l.skewTrial(plan, algos.TokenBucket)
	if callerClock.Share() < 1.10 {
		t.Errorf("caller clocks: admitted %d (%s of the %d allowed), want at least 110%%", callerClock.Admitted, pct(callerClock.Share()), callerClock.Allowed)
	}
	// Its records alone convict it, as a deployed service's would: more
	// admitted than any placement of the decisions keeps to the promise.
	v := judge.Records(callerClock.Records, algos.BucketPromise(plan.Limit), plan.Limit)
	if _, caught := v.Caught(breach.OverAdmission); !caught {
		t.Errorf("caller clocks: its records were not caught over-admitting:\n%v", v)
	}
	t.Logf("caller clocks, judged from the records alone (judge.Records):\n%v", v)
	t.Logf("measured: %s of the rate on callers' clocks spread over ±1s, %s on Redis's", pct(callerClock.Share()), pct(redisClock.Share()))
}

// The other common way to write the bucket, without the clamp
// (planted.TokenBucketNegativeRefill: tokens += (now-last)·rate), in
// the same trial: a caller whose clock is behind the stored last gets a
// negative refill, and the bucket owes up to 2 s worth of tokens whenever a
// caller behind follows one ahead, while the cap, applied at the clock
// furthest ahead, throws the matching refill away. Near the limit it then
// admits only the callers whose clocks are close to the one furthest ahead:
// far below its rate. (It is GCRA's arithmetic written as a bucket, and
// GCRA's model admits the same 46 here.)
// Bound asserted: under 50% of B + L·T/W on callers' clocks spread over
// ±1 s, a skew of 2 s (the model says 15%; the published study measured
// 16%); on Redis's clock, as for the clamped bucket above.
//
// Badge: caller clocks, unclamped
func TestFindingCallerClockWithoutClampStarvesAtTwoSecondSkew(t *testing.T) {
	t.Parallel()
	l := newLab(t, 2*time.Minute)
	plan := SkewPlanFor(2 * algos.Second)
	redisClock, callerClock := l.skewTrial(plan, planted.TokenBucketNegativeRefill)
	if callerClock.Share() >= 0.5 {
		t.Errorf("caller clocks: admitted %d (%s of the %d allowed), want under 50%%", callerClock.Admitted, pct(callerClock.Share()), callerClock.Allowed)
	}
	// Its records alone convict it, as a deployed service's would: it
	// turned away requests that one more admit certainly fitted.
	v := judge.Records(callerClock.Records, algos.BucketPromise(plan.Limit), plan.Limit, judge.Exact())
	if _, caught := v.Caught(breach.HonestTurnedAway); !caught {
		t.Errorf("caller clocks: its records were not caught turning honest requests away:\n%v", v)
	}
	t.Logf("caller clocks, judged from the records alone (judge.Records, Exact):\n%v", v)
	t.Logf("measured: %s of the rate on callers' clocks spread over ±1s, %s on Redis's", pct(callerClock.Share()), pct(redisClock.Share()))
}

// skewTrial runs plan on every one of SkewBuckets at once (or finds the
// trial the other caller-clock finding is running or has run, see
// sharedSkewTrial), takes bucket a's results, and checks what no scheduling
// can change: on both clocks the script decides exactly as the Go bucket
// replayed at the times it decided at, and on Redis's clock it admits no
// more than the bucket promise allows over the trial's actual span. It also
// checks that on Redis's clock the bucket admits at least 90% of what the
// limit allows over the plan (the model, on time, says 99%), but only when
// the machine kept the plan: a request held back longer than the bucket
// takes to fill lets the bucket sit full and lose refill it never had a
// request to give, which measures the machine, not the limiter; the test
// then says how late it was. How far the counts sit from the model on the
// planned times is logged.
func (l *lab) skewTrial(plan traffic.SkewPlan, a algos.Algorithm) (redisClock, callerClock SkewResult) {
	t := l.t
	t.Helper()
	all, err := l.sharedSkewTrial(plan)
	if err != nil {
		t.Fatal(err)
	}
	var rs []SkewResult
	for _, r := range all {
		if r.Bucket == a.Name {
			rs = append(rs, r)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%s is not one of the SkewBuckets", a.Name)
	}
	for _, r := range rs {
		t.Logf("%s, %s clock, offsets ±%s: sent %d, admitted %d of %d allowed (%s), replayed %d, model on the plan %d",
			SkewLabel(r.Bucket), r.Clock, fmtSkew(r.Skew/2), r.Sent, r.Admitted, r.Allowed, pct(r.Share()), r.Replayed, r.Model)
		if r.Differences != 0 {
			t.Errorf("%s, %s clock: %d decisions differ from the Go bucket replayed at the same times: the script is not the algorithm",
				a.Name, r.Clock, r.Differences)
		}
	}
	redisClock, callerClock = rs[0], rs[1]
	if promised := redisClock.Promised(plan.Limit); int64(redisClock.Admitted) > promised {
		t.Errorf("%s, Redis clock: admitted %d, want at most the %d its promise allows over the trial's %s",
			a.Name, redisClock.Admitted, promised, algos.FormatMicros(redisClock.Span))
	}
	// Judged from its records alone, as a deployed service is, the bucket
	// on Redis's clock keeps its promise both ways: no more admitted than
	// any placement of the decisions allows, and no request turned away
	// that one more admit certainly fitted (judge.Exact).
	if v := judge.Records(redisClock.Records, algos.BucketPromise(plan.Limit), plan.Limit, judge.Exact()); !v.Clean() || v.Offered != redisClock.Sent {
		t.Errorf("%s, Redis clock: %d records of %d requests, judged from its records:\n%v", a.Name, v.Offered, redisClock.Sent, v)
	}
	// The floor needs the requests on time: near empty at 1.2x its rate, the
	// bucket loses refill only when it sits full, which a hold-up longer
	// than it takes to fill (B·W/L, 100 ms) allows.
	fill := plan.Limit.Burst * plan.Limit.Window / plan.Limit.Rate
	switch {
	case redisClock.Lag > fill:
		t.Logf("%s, Redis clock: the 90%% floor is not judged: a request was decided %s after its plan, longer than the %s the bucket takes to fill",
			a.Name, algos.FormatMicros(redisClock.Lag), algos.FormatMicros(fill))
	case redisClock.Share() < 0.9:
		t.Errorf("%s, Redis clock: admitted %d, want at least 90%% of the %d allowed (every request decided within %s of its plan)",
			a.Name, redisClock.Admitted, redisClock.Allowed, algos.FormatMicros(redisClock.Lag))
	}
	return redisClock, callerClock
}

// skewShared is the caller-clock trial the two caller-clock findings share:
// their plan is the same, and RunSkew runs both buckets at once on their own
// keys and connections (as the full sweep does), so one 3 s trial serves
// both.
var skewShared struct {
	mu  sync.Mutex
	cur *skewRun
}

// skewRun is one shared caller-clock trial: done closes once rs and err
// are set; read names the tests that have taken its results.
type skewRun struct {
	plan traffic.SkewPlan
	done chan struct{}
	rs   []SkewResult
	err  error
	read map[string]bool
}

// sharedSkewTrial returns the results of a trial of plan on every one of
// SkewBuckets: the current shared trial's, running or done, unless this
// test has read it already (a second -count, or a test run alone), in which
// case it runs a fresh one for itself and whichever finding asks next.
func (l *lab) sharedSkewTrial(plan traffic.SkewPlan) ([]SkewResult, error) {
	name := l.t.Name()
	skewShared.mu.Lock()
	r := skewShared.cur
	mine := r == nil || r.plan != plan || r.read[name]
	if mine {
		r = &skewRun{plan: plan, done: make(chan struct{}), read: map[string]bool{}}
		skewShared.cur = r
	}
	r.read[name] = true
	skewShared.mu.Unlock()
	if mine {
		func() {
			defer close(r.done)
			var buckets []LuaScript
			for _, a := range SkewBuckets {
				s, err := NewLuaScript(a.Name)
				if err != nil {
					r.err = err
					return
				}
				buckets = append(buckets, s)
			}
			r.rs, r.err = RunSkew(l.ctx, l.opt, plan, buckets, l.prefix+"skew")
		}()
	}
	select {
	case <-r.done:
		return r.rs, r.err
	case <-l.ctx.Done():
		return nil, l.ctx.Err()
	}
}
