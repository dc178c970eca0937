package study

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
)

// Each TestFinding runs its own small trials against a real Redis and
// asserts the number the report states. The tolerances are what the trials
// measured over many runs on a 2-core machine, stated beside each.

// With every worker released at once on loopback, check-then-act lets more
// than L through at every concurrency above one: some GETs always read a
// count that other workers are about to INCR. With one worker it is exact.
//
// Badge: check-then-act
func TestFindingCheckThenActOverAdmitsAtEveryConcurrencyAboveOne(t *testing.T) {
	l := newLab(t, 2*time.Minute)
	f := l.fleet(l.path([2]int{}), 64)
	cta := CheckThenAct{}
	const reps = 24 // at c=2 about 40% of the trials over-admit, by one
	if s := l.point(f, cta, 1, ConcurrencyOffered, 100, Adversarial, 3).Summarize(); s.OverMax != 0 || s.OverMin != 0 {
		t.Errorf("one worker: over-admitted %+d..%+d, want exactly 0", s.OverMin, s.OverMax)
	}
	for _, c := range WorkerCounts[1:] {
		s := l.point(f, cta, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, reps).Summarize()
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
// Badge: lockstep model
func TestFindingCheckThenActFollowsTheLockstepModelUnderDelay(t *testing.T) {
	l := newLab(t, 5*time.Minute)
	p := l.path(DelayLegs[len(DelayLegs)-1])
	f := l.fleet(p, 64)
	const lockstepTries = 20 // a trial at c = 64 is three rounds, some 50 ms
	matched, points, reruns := 0, 0, 0
	defer func() {
		t.Logf("measured: %d of %d cells exactly c·ceil(L/c) - L at RTT %s (%d trials rerun for a round out of step)",
			matched, points, fmtDur(p.RTT), reruns)
	}()
	for _, limit := range LockstepLimits {
		for _, c := range WorkerCounts[1:] { // one worker is exact everywhere (see above)
			points++
			model := LockstepOver(c, limit)
			var tried []string
			var inStep *TrialResult
			for range lockstepTries {
				// ⌈L/c⌉+1 requests each: enough for the last round to read L.
				r := l.point(f, CheckThenAct{}, c, ceilDiv(limit, c)+1, limit, Rounds, 1).Results[0]
				tried = append(tried, fmt.Sprintf("%+d (%d of %d rounds out of step)", r.Over, r.RoundsOutOfStep, r.Rounds))
				if r.RoundsOutOfStep == 0 {
					inStep = &r
					break
				}
				reruns++
			}
			t.Logf("RTT %s, L=%d, c=%2d: model %+3d, trials %s", fmtDur(p.RTT), limit, c, model, strings.Join(tried, ", "))
			switch {
			case inStep == nil:
				t.Errorf("L=%d c=%d: no trial of %d ran in step (%s): the machine delayed some GET by more than a round trip every time",
					limit, c, lockstepTries, strings.Join(tried, ", "))
			case inStep.Over != model:
				t.Errorf("L=%d c=%d: an in-step trial over-admitted %+d, the lockstep model says %+d", limit, c, inStep.Over, model)
			default:
				matched++
			}
		}
	}
}

// Increment-then-check and the four Lua scripts decide in one atomic Redis
// command: every trial admits exactly L and refuses nothing within it, at
// every concurrency and release, on loopback and under delay.
//
// Badge: atomic strategies
func TestFindingAtomicStrategiesAdmitExactlyTheLimit(t *testing.T) {
	l := newLab(t, 3*time.Minute)
	loop := l.fleet(l.path([2]int{}), 64)
	slow := l.fleet(l.path(DelayLegs[len(DelayLegs)-1]), 64)
	trials := 0
	for _, s := range mustStrategies(t) {
		if s.Kind() != Atomic {
			continue
		}
		check := func(f *Fleet, c int, rel Release) {
			pt := l.point(f, s, c, ceilDiv(ConcurrencyOffered, c), 100, rel, 1)
			for _, r := range pt.Results {
				trials++
				if r.Admitted != 100 || r.RefusedWithin != 0 {
					t.Errorf("%s, c=%d, %s, %s: admitted %d and refused %d within the limit, want exactly 100 and 0",
						s.Name(), c, rel, f.Path.Name, r.Admitted, r.RefusedWithin)
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
//
// Badge: WATCH/MULTI
func TestFindingWatchMultiNeverOverAdmitsButRefusesWithinTheLimit(t *testing.T) {
	l := newLab(t, 3*time.Minute)
	p := l.path(DelayLegs[0])
	f := l.fleet(p, 64)
	within := map[int]int{}
	for _, budget := range []int{3, 10} {
		w := Watch{Budget: budget}
		for _, c := range []int{4, 16, 64} {
			s := l.point(f, w, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, 1).Summarize()
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
//
// Badge: Lua vs WATCH/MULTI
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
		script := l.point(f, lua, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, reps)
		for _, w := range []Watch{{Budget: 3}, {Budget: 10}} {
			watch := l.point(f, w, c, ceilDiv(ConcurrencyOffered, c), 100, Adversarial, reps)
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
// sliding counter admits more than L; only the sliding log holds at L.
//
// Two things are checked, and kept apart. What no scheduling can change:
// each script decides exactly as its Go twin replayed at the Redis TIMEs it
// decided at, in Redis's order (0 differences in every trial). What depends
// on the plan being kept: the counts above hold for a flood that arrives on
// time, so they are judged on a trial in which every request was decided
// within EdgeMaxLag of its planned time. A trial a busy machine delayed
// past that did not run the plan; it is reported and run again, up to
// edgeTries times, and the finding fails if none ran on plan.
//
// Badge: window edge, live
func TestFindingOnlyTheSlidingLogHoldsTheLimitAcrossAWindowEdge(t *testing.T) {
	l := newLab(t, time.Minute)
	scripts := mustScripts(t)
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
	var onPlan []EdgeResult
	var lags []string
	for try := 1; try <= edgeTries && onPlan == nil; try++ {
		rs, err := RunEdge(l.ctx, l.redis.Addr, scripts, plan, EdgeWorkers, l.prefix+"edge")
		if err != nil {
			t.Fatal(err)
		}
		kept := true
		for _, r := range rs {
			if r.Differences != 0 {
				t.Errorf("%s: %d decisions differ from the Go twin replayed at the same Redis TIMEs: the script is not the algorithm", r.Algorithm, r.Differences)
			}
			kept = kept && r.OnPlan()
			lags = append(lags, fmt.Sprintf("%s %s", r.Algorithm, algos.FormatMicros(r.Lag)))
		}
		t.Logf("trial %d: latest decision after its plan: %s", try, strings.Join(lags[len(lags)-len(rs):], ", "))
		if kept {
			onPlan = rs
		}
	}
	if onPlan == nil {
		t.Fatalf("no trial of %d kept the plan within %s (latest decisions: %s): the machine was too busy to run it",
			edgeTries, algos.FormatMicros(EdgeMaxLag), strings.Join(lags, ", "))
	}
	var headline []string
	defer func() { t.Logf("measured: %s", strings.Join(headline, ", ")) }()
	for _, r := range onPlan {
		t.Logf("%-16s most in any %s: %3d (%.2fx L), replayed %3d, model on the plan %3d", r.Algorithm, algos.FormatMicros(EdgeLimit.Window),
			r.Most, float64(r.Most)/float64(L), r.Replayed, r.Model)
		headline = append(headline, fmt.Sprintf("%s %.2fx", r.Algorithm, float64(r.Most)/float64(L)))
		if !want[r.Algorithm](r.Most) {
			t.Errorf("%s: %d admits in one window of %s (model on the plan %d), want %s", r.Algorithm, r.Most, algos.FormatMicros(EdgeLimit.Window), r.Model, says[r.Algorithm])
		}
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
	l := newLab(t, 2*time.Minute)
	redisClock, callerClock := l.skewTrial(SkewPlanFor(2*algos.Second), algos.TokenBucket)
	if callerClock.Share() < 1.10 {
		t.Errorf("caller clocks: admitted %d (%s of the %d allowed), want at least 110%%", callerClock.Admitted, pct(callerClock.Share()), callerClock.Allowed)
	}
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
	l := newLab(t, 2*time.Minute)
	redisClock, callerClock := l.skewTrial(SkewPlanFor(2*algos.Second), planted.TokenBucketNegativeRefill)
	if callerClock.Share() >= 0.5 {
		t.Errorf("caller clocks: admitted %d (%s of the %d allowed), want under 50%%", callerClock.Admitted, pct(callerClock.Share()), callerClock.Allowed)
	}
	t.Logf("measured: %s of the rate on callers' clocks spread over ±1s, %s on Redis's", pct(callerClock.Share()), pct(redisClock.Share()))
}

// skewTrial runs plan once on bucket a (RunSkew with that bucket alone) and
// checks what no scheduling can change: on both clocks the script decides
// exactly as the Go bucket replayed at the times it decided at, and on
// Redis's clock it admits no more than the bucket promise allows over the
// trial's actual span, and at least 90% of what the limit allows over the
// plan (a busy machine that holds requests back costs the bucket the
// tokens it could not store, a few percent; the model, on time, says 99%).
// How far the counts sit from the model on the planned times is logged: it
// measures the machine, not the limiter.
func (l *lab) skewTrial(plan SkewPlan, a algos.Algorithm) (redisClock, callerClock SkewResult) {
	t := l.t
	t.Helper()
	script, err := NewScript(a.Name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := RunSkew(l.ctx, l.redis.Addr, plan, []Script{script}, l.prefix+"skew")
	if err != nil {
		t.Fatal(err)
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
	if promised := redisClock.Promised(plan.Limit); int64(redisClock.Admitted) > promised || redisClock.Share() < 0.9 {
		t.Errorf("%s, Redis clock: admitted %d, want at most the %d its promise allows over the trial's %s and at least 90%% of the %d allowed",
			a.Name, redisClock.Admitted, promised, algos.FormatMicros(redisClock.Span), redisClock.Allowed)
	}
	return redisClock, callerClock
}
