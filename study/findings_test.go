package study

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// Each TestFinding runs its own small trials against a real Redis and
// asserts the number the report states. The tolerances are what the trials
// measured over many runs on a 2-core machine, stated beside each.

// With every worker released at once on loopback, check-then-act lets more
// than L through at every concurrency above one: some GETs always read a
// count that other workers are about to INCR. With one worker it is exact.
func TestFindingCheckThenActOverAdmitsAtEveryConcurrencyAboveOne(t *testing.T) {
	l := newLab(t, 2*time.Minute)
	f := l.fleet(l.path([2]int{}), 64)
	cta := CheckThenAct{}
	const reps = 24 // at c=2 about 40% of the trials over-admit, by one
	if c := l.cell(f, cta, 1, ConcurrencyOffered, 100, Adversarial, 3); c.Summarize().OverMax != 0 || c.Summarize().OverMin != 0 {
		t.Errorf("one worker: over-admitted %+d..%+d, want exactly 0", c.Summarize().OverMin, c.Summarize().OverMax)
	}
	for _, c := range WorkerCounts[1:] {
		s := l.cell(f, cta, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, reps).Summarize()
		t.Logf("c=%2d: over-admitted in %2d of %d trials, mean %+.1f (%s of L), max %+d", c, s.OverAdmittingTrials, reps, s.OverMean, pct(s.OverMean/100), s.OverMax)
		if c == WorkerCounts[len(WorkerCounts)-1] {
			t.Logf("measured: %+.1f%% over L on average with %d workers, %+d at worst", s.OverMean, c, s.OverMax)
		}
		if s.OverMean <= 0 {
			t.Errorf("c=%d: mean over-admission %+.2f over %d trials, want > 0", c, s.OverMean, reps)
		}
		if s.OverMin < 0 {
			t.Errorf("c=%d: admitted fewer than L (%+d): check-then-act cannot refuse below the limit", c, s.OverMin)
		}
	}
}

// Under a 6.5 ms round trip the workers move in lockstep, and check-then-act
// admits c·⌈L/c⌉: within one request of the model, for a limit that c
// divides (100: no over-admission at c ≤ 4) and one that no c > 1 divides
// (101: over-admission at every c > 1).
//
// A trial can fall out of step when the machine is busy (another process
// takes the CPU and the proxy's timers fire late); a cell whose trial
// misses by more than one is judged by the median of five (see judged).
func TestFindingCheckThenActFollowsTheLockstepModelUnderDelay(t *testing.T) {
	l := newLab(t, 5*time.Minute)
	p := l.path(DelayLegs[len(DelayLegs)-1])
	f := l.fleet(p, 64)
	worst := 0
	defer func() { t.Logf("measured: within %d of c·ceil(L/c) - L at RTT %s", worst, fmtDur(p.RTT)) }()
	for _, limit := range LockstepLimits {
		for _, c := range WorkerCounts[1:] { // one worker is exact everywhere (see above)
			model := LockstepOver(c, limit)
			near := func(over int) bool { return abs(over-model) <= 1 }
			got, runs := judged(near, func() int {
				// ⌈L/c⌉+1 requests each: enough for the last round to read L.
				return l.cell(f, CheckThenAct{}, c, ceilDiv(limit, c)+1, limit, Adversarial, 1).Results[0].Over
			})
			t.Logf("RTT %s, L=%d, c=%2d: model %+3d, measured %+3d %v", fmtDur(p.RTT), limit, c, model, got, runs)
			worst = max(worst, abs(got-model))
			if !near(got) {
				t.Errorf("L=%d c=%d: over-admitted %+d (median of %v), the lockstep model says %+d (tolerance ±1)", limit, c, got, runs, model)
			}
		}
	}
}

// judged runs a timing-sensitive trial once and returns its number if ok
// accepts it; otherwise it runs the trial four more times and returns the
// median of all five, with every run, so that one trial a busy machine
// disturbed does not decide a finding, and a finding that is false fails.
func judged(ok func(int) bool, trial func() int) (int, []int) {
	runs := []int{trial()}
	if ok(runs[0]) {
		return runs[0], runs
	}
	for range 4 {
		runs = append(runs, trial())
	}
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2], runs
}

// Increment-then-check and the four Lua scripts decide in one atomic Redis
// command: every trial admits exactly L and refuses nothing within it, at
// every concurrency and arrival, on loopback and under delay.
func TestFindingAtomicStrategiesAdmitExactlyTheLimit(t *testing.T) {
	l := newLab(t, 3*time.Minute)
	loop := l.fleet(l.path([2]int{}), 64)
	slow := l.fleet(l.path(DelayLegs[len(DelayLegs)-1]), 64)
	trials := 0
	for _, s := range mustStrategies(t) {
		if s.Kind() != Atomic {
			continue
		}
		check := func(f *Fleet, c int, a Arrival) {
			cell := l.cell(f, s, c, ceilDiv(ConcurrencyOffered, c), 100, a, 1)
			for _, r := range cell.Results {
				trials++
				if r.Admitted != 100 || r.RefusedWithin != 0 {
					t.Errorf("%s, c=%d, %s, %s: admitted %d and refused %d within the limit, want exactly 100 and 0",
						s.Name(), c, a, f.Path.Name, r.Admitted, r.RefusedWithin)
				}
			}
		}
		for _, c := range WorkerCounts {
			check(loop, c, Adversarial)
			check(loop, c, Random)
		}
		check(slow, 16, Adversarial)
		check(slow, 64, Adversarial)
	}
	t.Logf("%d trials, every one admitted exactly L = 100", trials)
	t.Logf("measured: %d trials, each admitted exactly L", trials)
}

// WATCH/MULTI never lets more than L through, but under contention its
// retries run out while the count is still below L, and it refuses requests
// the limit had room for: more with a budget of 3 retries than of 10.
func TestFindingWatchMultiNeverOverAdmitsButRefusesWithinTheLimit(t *testing.T) {
	l := newLab(t, 3*time.Minute)
	p := l.path(DelayLegs[0])
	f := l.fleet(p, 64)
	within := map[int]int{}
	for _, budget := range []int{3, 10} {
		w := Watch{Budget: budget}
		for _, c := range []int{4, 16, 64} {
			s := l.cell(f, w, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, 1).Summarize()
			t.Logf("RTT %s, %s, c=%2d: admitted %3d, refused %3d within the limit (%s of the requests within it), %.1f attempts a request",
				fmtDur(p.RTT), w.Name(), c, s.AdmittedMax, s.WithinMax, pct(s.WithinShare), s.Attempts)
			if s.OverMax > 0 {
				t.Errorf("%s c=%d: over-admitted by %d", w.Name(), c, s.OverMax)
			}
			within[budget] += s.WithinMax
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

// On one contended key (64 workers behind a delayed path), a Lua script
// decides several times as many requests per second as WATCH/MULTI, which
// spends three round trips on every attempt and retries most: at least 2×
// (the report states the measured ratios, 10-25× here).
//
// Loopback is left out of the assertion: on this 2-core machine the 64
// workers then mostly run one after another, WATCH meets little contention,
// and the ratio swings between runs (1.2× to 24× measured); the report
// prints it.
func TestFindingLuaIsSeveralTimesFasterThanWatchMultiUnderContention(t *testing.T) {
	l := newLab(t, 3*time.Minute)
	const c, reps = 64, 3
	lua := mustStrategy(t, "lua-fixed-window")
	paths := DelayLegs[:1]
	if *full {
		paths = DelayLegs
	}
	lowest := math.Inf(1)
	defer func() { t.Logf("measured: Lua at least %.1fx as fast as WATCH/MULTI with %d workers", lowest, c) }()
	for _, legs := range paths {
		f := l.fleet(l.path(legs), c)
		script := l.cell(f, lua, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, reps)
		for _, w := range []Watch{{Budget: 3}, {Budget: 10}} {
			watch := l.cell(f, w, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, reps)
			ratio := ContentionRatio(script, watch)
			t.Logf("RTT %s, c=%d: %s %.0f req/s, %s %.0f req/s: %.1fx", fmtDur(f.Path.RTT), c,
				lua.Name(), script.Summarize().Throughput, w.Name(), watch.Summarize().Throughput, ratio)
			lowest = min(lowest, ratio)
			if ratio < 2 {
				t.Errorf("%s: Lua is %.2fx as fast as %s, want at least 2x", f.Path.Name, ratio, w.Name())
			}
		}
	}
}

// Around a window edge, with every decision atomic: a fixed window admits
// L just before the edge and L just after (2L in one window's length); a
// token bucket set to L per W admits its burst and then L·(W-1µs)/W refilled
// tokens (2L - 1: the L-th refill lands exactly W after the burst); the
// sliding counter admits more than L, as the model says for this lead; only
// the sliding log holds at L.
func TestFindingOnlyTheSlidingLogHoldsTheLimitAcrossAWindowEdge(t *testing.T) {
	l := newLab(t, time.Minute)
	var scripts []Script
	for _, name := range LuaAlgorithms {
		s, err := NewScript(name)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, s)
	}
	lead := EdgeLeads[1]
	plan := EdgePlanFor(lead)
	L := int(EdgeLimit.Rate)
	want := map[string]func(most int) bool{
		algos.FixedWindow.Name:    func(most int) bool { return most == 2*L },
		algos.TokenBucket.Name:    func(most int) bool { return most == 2*L-1 },
		algos.SlidingCounter.Name: func(most int) bool { return most > L && abs(most-EdgeModel(algos.SlidingCounter, plan)) <= 2 },
		algos.SlidingLog.Name:     func(most int) bool { return most == L },
	}
	says := map[string]string{
		algos.FixedWindow.Name:    fmt.Sprintf("exactly 2L = %d", 2*L),
		algos.TokenBucket.Name:    fmt.Sprintf("exactly 2L-1 = %d", 2*L-1),
		algos.SlidingCounter.Name: "more than L, within 2 of the model",
		algos.SlidingLog.Name:     fmt.Sprintf("exactly L = %d", L),
	}
	// One live trial runs all four scripts; as in judged, it is rerun four
	// times when any misses, and each algorithm is judged by its median.
	trial := func() []EdgeResult {
		rs, err := RunEdge(l.ctx, l.redis.Addr, scripts, plan, EdgeWorkers, l.prefix+"edge")
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	runs := [][]EdgeResult{trial()}
	for _, r := range runs[0] {
		if !want[r.Algorithm](r.Most) {
			for range 4 {
				runs = append(runs, trial())
			}
			break
		}
	}
	var headline []string
	defer func() { t.Logf("measured: %s", strings.Join(headline, ", ")) }()
	for i, r := range runs[0] {
		var mosts []int
		for _, run := range runs {
			mosts = append(mosts, run[i].Most)
		}
		sorted := slices.Clone(mosts)
		slices.Sort(sorted)
		most := sorted[len(sorted)/2]
		t.Logf("%-16s most in any %s: %3d (%.2fx L) %v, model %3d", r.Algorithm, algos.FormatMicros(EdgeLimit.Window), most, float64(most)/float64(L), mosts, r.Model)
		headline = append(headline, fmt.Sprintf("%s %.2fx", r.Algorithm, float64(most)/float64(L)))
		if !want[r.Algorithm](most) {
			t.Errorf("%s: %d admits in one window of %s (median of %v; model %d), want %s", r.Algorithm, most, algos.FormatMicros(EdgeLimit.Window), mosts, r.Model, says[r.Algorithm])
		}
	}
}

// A token bucket told the time by its callers, whose clocks are spread over
// ±1 s, does not hold its rate near the limit, while the same bucket on
// Redis's clock admits exactly what the model does (99% of B + L·T/W: the
// last request comes before the last token).
//
// The published study reports the caller-clock bucket admitting 16% of its
// rate. This repository's token bucket refills max(0, now-last) and stores
// last = now, so a caller behind the last one gets no refill and moves last
// back, and the next caller ahead is refilled for the gap again: it cannot
// lose tokens to skew, only gain them. Measured: it admits everything
// offered (1.2x the rate), 116% of what the limit allows. The 16% is what a
// bucket without the clamp does: see the next finding.
func TestFindingCallerClockBucketOverAdmitsAtOneSecondSkewWhileRedisClockStaysExact(t *testing.T) {
	l := newLab(t, 2*time.Minute)
	plan := SkewPlanFor(algos.Second)
	redisClock, callerClock := l.skewTrials(plan, algos.TokenBucket)
	var shares []string
	for _, cc := range callerClock {
		shares = append(shares, pct(cc.Share()))
		if cc.Share() < 1.10 || abs(cc.Admitted-cc.Model) > 3 {
			t.Errorf("caller clocks: admitted %d (%s of the %d allowed), want at least 110%% and the model's %d ± 3", cc.Admitted, pct(cc.Share()), cc.Allowed, cc.Model)
		}
	}
	t.Logf("measured: %s of the rate on callers' clocks at ±1s skew, %s on Redis's", strings.Join(shares, ", "), pct(redisClock.Share()))
}

// The other common way to write the bucket, without the clamp
// (algos.PlantedTokenBucketNegativeRefill: tokens += (now-last)·rate), in
// the same trial: a caller whose clock is behind the stored last gets a
// negative refill, and the bucket owes up to 2 s worth of tokens whenever a
// caller behind follows one ahead, while the cap, applied at the clock
// furthest ahead, throws the matching refill away. Near the limit it then
// admits only the callers whose clocks are close to the one furthest ahead:
// far below its rate. (It is GCRA's arithmetic written as a bucket, and
// GCRA's model admits the same 46 here.)
// Bound asserted: under 50% of B + L·T/W on callers' clocks at ±1 s (the
// model says 15%; the published study measured 16%), and on Redis's clock
// the model's count ± 3 and at most what is allowed, as for the clamped
// bucket above; the caller-clock count within 3 of the model's, as there
// (measured: exactly the model's 46 in every run).
func TestFindingCallerClockWithoutClampStarvesAtOneSecondSkew(t *testing.T) {
	l := newLab(t, 2*time.Minute)
	plan := SkewPlanFor(algos.Second)
	redisClock, callerClock := l.skewTrials(plan, algos.PlantedTokenBucketNegativeRefill)
	var shares []string
	for _, cc := range callerClock {
		shares = append(shares, pct(cc.Share()))
		if cc.Share() >= 0.5 || abs(cc.Admitted-cc.Model) > 3 {
			t.Errorf("caller clocks: admitted %d (%s of the %d allowed), want under 50%% and the model's %d ± 3", cc.Admitted, pct(cc.Share()), cc.Allowed, cc.Model)
		}
	}
	t.Logf("measured: %s of the rate on callers' clocks at ±1s skew, %s on Redis's", strings.Join(shares, ", "), pct(redisClock.Share()))
}

// skewTrials runs plan on bucket a (RunSkew with that bucket alone) and
// judges it as judged does, by the Redis-clock count: exact is the model's
// count ± 3 and at most what the limit allows. It fails t when the median
// is not exact, and returns the Redis-clock result whose count is that
// median, with every caller-clock result (one per run), each logged.
func (l *lab) skewTrials(plan SkewPlan, a algos.Algorithm) (redisClock SkewResult, callerClock []SkewResult) {
	t := l.t
	t.Helper()
	script, err := SkewScript(a)
	if err != nil {
		t.Fatal(err)
	}
	model := mustModel(a, plan, false)
	exact := func(admitted int) bool {
		return abs(admitted-model) <= 3 && int64(admitted) <= plan.Allowed()
	}
	var redisRuns []SkewResult
	admitted, runs := judged(exact, func() int {
		rs, err := RunSkew(l.ctx, l.redis.Addr, plan, []Script{script}, l.prefix+"skew")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			t.Logf("%s, %s clock, skew ±%s: sent %d, admitted %d of %d allowed (%s), model %d",
				SkewLabel(r.Bucket), r.Clock, fmtSkew(r.Skew), r.Sent, r.Admitted, r.Allowed, pct(r.Share()), r.Model)
		}
		redisRuns = append(redisRuns, rs[0])
		callerClock = append(callerClock, rs[1])
		return rs[0].Admitted
	})
	if !exact(admitted) {
		t.Errorf("%s, Redis clock: admitted %d (median of %v), want the model's %d ± 3 and at most the %d allowed", a.Name, admitted, runs, model, plan.Allowed())
	}
	for _, r := range redisRuns {
		if r.Admitted == admitted {
			redisClock = r
		}
	}
	return redisClock, callerClock
}

func mustModel(a algos.Algorithm, p SkewPlan, callerClock bool) int {
	_, admitted := SkewModel(a, p, callerClock)
	return admitted
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
