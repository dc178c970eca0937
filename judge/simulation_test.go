package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// judgedRun builds requests on one key of one instance, told the given
// times, in that order, admitted as given.
func judgedRun(told []int64, admitted []bool) []judged {
	all := make([]judged, len(told))
	for i := range told {
		// Each answer's Reset is an hour: never too short for the limits here.
		all[i] = judged{told: told[i], decided: int64(i), admitted: admitted[i], reset: 3600 * algos.Second, key: int32(traffic.RetryAfter), instance: int32(traffic.RetryAfter)}
	}
	return all
}

// deny is the Retry-After of a denial; admit, of an admit.
func deny(retry int64) int64 { return retry }
func admit() int64           { return 0 }

// A retry at its Retry-After that is denied, and an early retry told to
// wait past the deadline it came early for, are each a breach; a denied
// early retry that keeps the deadline, a retry on another instance and an
// admitted retry are not.
func TestRetriesHoldTheClientToItsAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		told     []int64
		admitted []bool
		replies  []int64
		want     breach.Kind
	}{
		{"retried at the Retry-After, admitted", []int64{0, 100}, []bool{false, true}, []int64{deny(100), admit()}, 0},
		{"retried at the Retry-After, denied", []int64{0, 100}, []bool{false, false}, []int64{deny(100), deny(5)}, breach.RetryDenied},
		{"retried after it, denied", []int64{0, 150}, []bool{false, false}, []int64{deny(100), deny(5)}, breach.RetryDenied},
		{"Retry-After 0 on a denial, retried at once, denied", []int64{0, 0}, []bool{false, false}, []int64{deny(0), deny(0)}, breach.RetryDenied},
		{"early, denied, the same deadline", []int64{0, 40}, []bool{false, false}, []int64{deny(100), deny(60)}, 0},
		{"early, denied, a later deadline", []int64{0, 40}, []bool{false, false}, []int64{deny(100), deny(61)}, breach.RetryExtended},
	} {
		var found [traffic.NumClients]Kinds
		retries(judgedRun(tc.told, tc.admitted), int(traffic.RetryAfter), tc.replies, &found)
		got := breach.Kind(0)
		if f := found[traffic.RetryAfter].first(); f != nil {
			got = f.Kind
		}
		if got != tc.want {
			t.Errorf("%s: breach %v, want %v", tc.name, got, tc.want)
		}
	}
	// The retry reached another node of a local deployment: that node
	// never denied it anything.
	all := judgedRun([]int64{0, 100}, []bool{false, false})
	all[1].instance++
	var found [traffic.NumClients]Kinds
	if retries(all, int(traffic.RetryAfter), []int64{deny(100), deny(5)}, &found); found[traffic.RetryAfter].first() != nil {
		t.Errorf("a retry on another instance was judged: %v", found[traffic.RetryAfter].first().Violation.Reason)
	}
}

// A refusal is an honest request turned away exactly when one more admit
// keeps the promise after the instance's admits: a bucket of 2 per second
// refusing the second request of a burst is; refusing the third is not. A
// conservative limiter's refusals, and an instance whose told times go
// back, are not judged.
func TestHonestyJudgesRefusalsByThePromise(t *testing.T) {
	spec := limiter.FromAlgorithm(algos.TokenBucket)
	cfg := model.Config{Limiter: spec, Limit: algos.MustLimit(2, algos.Second, 2), Deployment: model.StoreClock}
	run := func(spec limiter.Spec, told []int64, admitted []bool) *Evidence {
		all := judgedRun(told, admitted)
		for i := range all { // each answer's Remaining: the admits still to come (all at one instant here)
			for _, a := range admitted[i+1:] {
				if a {
					all[i].remaining++
				}
			}
		}
		var found [traffic.NumClients]Kinds
		honesty(spec, cfg, all, new(Simulation).byInstance(all), &found)
		return found[traffic.RetryAfter].first()
	}
	if f := run(spec, []int64{0, 0, 0}, []bool{true, true, false}); f != nil {
		t.Errorf("the third of a burst of 2 refused: judged %q", f.Violation.Reason)
	}
	f := run(spec, []int64{0, 0, 0}, []bool{true, false, false})
	if f == nil || f.Kind != breach.HonestTurnedAway || f.Violation.From != 0 || !strings.Contains(f.Violation.Reason, "after 1 admits") {
		t.Errorf("the second of a burst of 2 refused: %+v, want an honest request turned away at 0 after 1 admit", f)
	}
	conservative := spec
	conservative.Conservative = true
	if f := run(conservative, []int64{0, 0}, []bool{true, false}); f != nil {
		t.Errorf("a conservative limiter's refusal was judged: %q", f.Violation.Reason)
	}
	if f := run(spec, []int64{10, 5}, []bool{true, false}); f != nil {
		t.Errorf("a refusal told a time before the last was judged: %q", f.Violation.Reason)
	}
}

// A Remaining and a Reset are held to the promise after the instance's
// admits, for a conservative limiter too: a bucket of 2 per second that has
// admitted one may say 1 more, not 2, it may not admit at the instant it
// said 0, and after one admit it is idle again 500 ms later, not sooner.
func TestRemainingAndResetAreHeldToThePromise(t *testing.T) {
	spec := limiter.FromAlgorithm(algos.TokenBucket)
	cfg := model.Config{Limiter: spec, Limit: algos.MustLimit(2, algos.Second, 2), Deployment: model.StoreClock}
	run := func(spec limiter.Spec, told []int64, admitted []bool, remaining []int64) *Evidence {
		all := judgedRun(told, admitted)
		for i := range all {
			all[i].remaining = remaining[i]
		}
		var found [traffic.NumClients]Kinds
		honesty(spec, cfg, all, new(Simulation).byInstance(all), &found)
		return found[traffic.RetryAfter].first()
	}
	if f := run(spec, []int64{0, 0, 0, 600_000}, []bool{true, true, false, true}, []int64{1, 0, 0, 0}); f != nil {
		t.Errorf("honest Remainings judged: %q", f.Violation.Reason)
	}
	conservative := spec
	conservative.Conservative = true
	for _, s := range []limiter.Spec{spec, conservative} {
		f := run(s, []int64{0, 0}, []bool{true, true}, []int64{2, 0})
		if f == nil || f.Kind != breach.RemainingTooHigh || !strings.Contains(f.Violation.Reason, "answered Remaining 2 at 0.000000s, after 1 admits, where the promise allows 1 more") {
			t.Errorf("conservative %v: Remaining 2 after one admit of a burst of 2: %+v", s.Conservative, f)
		}
		f = run(s, []int64{0, 5, 5}, []bool{true, true, true}, []int64{1, 0, 0})
		if f == nil || f.Kind != breach.RemainingTooHigh || !strings.Contains(f.Violation.Reason, "admitted a request at 0.000005s, the instant it had answered Remaining 0") || len(f.Trace) != 3 {
			t.Errorf("conservative %v: an admit at the instant of a Remaining 0: %+v", s.Conservative, f)
		}
		for _, reset := range []int64{500_000, 499_999} {
			all := judgedRun([]int64{0}, []bool{true})
			all[0].remaining, all[0].reset = 1, reset
			var found [traffic.NumClients]Kinds
			honesty(s, cfg, all, new(Simulation).byInstance(all), &found)
			switch f := found[traffic.RetryAfter].first(); {
			case reset == 500_000 && f != nil:
				t.Errorf("conservative %v: the exact Reset judged: %q", s.Conservative, f.Violation.Reason)
			case reset < 500_000 && (f == nil || f.Kind != breach.ResetTooShort || !strings.Contains(f.Violation.Reason, "answered Reset 499999µs at 0.000000s (idle at 0.499999s), after 1 admits, where the promise gives a whole burst only from 0.500000s")):
				t.Errorf("conservative %v: a Reset 1 µs short: %+v", s.Conservative, f)
			}
		}
	}
}

// The judge reads a run in the order the model decided it
// (honestyInOrder) and finds what laying the requests out and sorting
// them per instance finds (honesty): the same breach, reason and trace
// for every client, on runs of planted bugs that turn honest requests away
// behind a store and on nodes (where the first node's finding is kept),
// on correct ones with a skew, and on a conservative limiter. A run whose
// decisions come out of order is left to honesty.
func TestHonestyInOrderIsHonesty(t *testing.T) {
	found := 0
	algs := []algos.Algorithm{planted.TokenBucketBurstOneShort, planted.FixedWindowShifted, algos.TokenBucket, algos.SlidingLog, algos.SlidingCounter}
	ds := []model.Deployment{model.StoreClock, model.LocalSplit, model.LocalFull, model.NodeClock, model.Ideal}
	onHuntRuns(t, algs, ds, func(run string, cfg model.Config) {
		res, err := model.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sc := new(Simulation)
		v := newRunView(&cfg, &res)
		var got, want [traffic.NumClients]Kinds
		if !sc.honestyInOrder(cfg.Limiter, cfg, &v, &got) {
			t.Fatalf("%s: the model's order was refused", run)
		}
		all := sc.requestsOf(cfg, &res)
		honesty(cfg.Limiter, cfg, all, sc.byInstance(all), &want)
		found += sameFindings(t, run, "in order", "sorted", &got, &want)
	})
	if found < 10 {
		t.Errorf("only %d findings to compare", found)
	}
	// Out of order: the second decision of an instance decided before the first.
	cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Limit: algos.MustLimit(2, algos.Second, 2),
		Deployment: model.StoreClock, Nodes: 1, Requests: []record.Request{{Key: 0, Sent: 0}, {Key: 0, Sent: 5}}}
	res := model.Result{Outcomes: []model.Outcome{{Decided: 10, Admitted: true}, {Decided: 5}}, Order: []int32{0, 1}, Keys: make([]model.KeyResult, 1)}
	v := newRunView(&cfg, &res)
	var got [traffic.NumClients]Kinds
	if new(Simulation).honestyInOrder(cfg.Limiter, cfg, &v, &got) {
		t.Error("decisions out of order were judged in that order")
	}
}

// onHuntRuns calls check with a hunt's config (scenarios.HuntOptions: 4
// nodes, a 1 ms round trip, 100 a second with bursts of 100, 12 s of the
// nine clients) of each algorithm of algs on each deployment of ds and
// each of seeds 1, 2 and 3 (the column skewed 20 ms more each seed), named
// for a failure.
func onHuntRuns(t *testing.T, algs []algos.Algorithm, ds []model.Deployment, check func(run string, cfg model.Config)) {
	t.Helper()
	for s, seed := range []uint64{1, 2, 3} {
		requests, err := new(traffic.Scratch).Make(seed, huntLimit, huntDuration, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range algs {
			for _, d := range ds {
				cfg := huntConfig(limiter.FromAlgorithm(a), d, seed, requests)
				cfg.Skew = 20_000 * int64(s)
				check(fmt.Sprintf("%s %s seed %d", a.Name, d, seed), cfg)
			}
		}
	}
}

// huntLimit and huntDuration are a hunt's (scenarios.HuntOptions).
var huntLimit, huntDuration = algos.MustLimit(100, algos.Second, 100), 12 * algos.Second

// huntConfig is a hunt's run of s deployed as d on seed's requests, with
// its closed-loop clients.
func huntConfig(s limiter.Spec, d model.Deployment, seed uint64, requests []record.Request) model.Config {
	return model.Config{Limiter: s, Limit: huntLimit, Deployment: d, Nodes: 4, RTT: 1000, Jitter: model.DefaultJitter,
		Seed: seed, Requests: requests, Loop: traffic.LoopClients(int(traffic.RetryAfter), huntLimit, huntDuration)}
}

// sameFindings reports on t every client and kind whose finding got (by
// the way named gotBy) and want (by wantBy) describe differently, and
// returns how many findings got has.
func sameFindings(t *testing.T, run, gotBy, wantBy string, got, want *[traffic.NumClients]Kinds) int {
	t.Helper()
	found := 0
	for c := range got {
		for b := range got[c] {
			if describe(got[c][b]) != describe(want[c][b]) {
				t.Errorf("%s, client %d: %s %s, %s %s", run, c, gotBy, describe(got[c][b]), wantBy, describe(want[c][b]))
			}
			if got[c][b] != nil {
				found++
			}
		}
	}
	return found
}

// first is the client's finding of the first kind it has, or nil.
func (k *Kinds) first() *Evidence {
	for _, f := range k {
		if f != nil {
			return f
		}
	}
	return nil
}

// describe is everything a finding says.
func describe(f *Evidence) string {
	if f == nil {
		return "nothing"
	}
	return fmt.Sprintf("%v %+v\n%s", f.Kind, *f.Violation, strings.Join(f.Trace, "\n"))
}

// The judge follows the closed-loop clients in one pass over their
// requests (retriesInOrder) and finds what listing each client's requests
// and walking the list finds (retries): the same breach, reason and trace,
// on planted bugs that deny a retry at its Retry-After or extend an early
// one, behind a store and on nodes, and on correct limiters; a run whose
// closed-loop key also has fixed requests is left to the lists.
func TestRetriesInOrderIsRetries(t *testing.T) {
	found := 0
	algs := []algos.Algorithm{planted.GCRARetryAfterFloored, planted.TokenBucketBurstOneShort, algos.TokenBucket, algos.FixedWindow, algos.SlidingCounter}
	ds := []model.Deployment{model.StoreClock, model.LocalSplit, model.NodeClock, model.Ideal}
	onHuntRuns(t, algs, ds, func(run string, cfg model.Config) {
		sc := new(Simulation)
		cfg.Loop = sc.Watch(cfg.Loop)
		res, err := model.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		v := newRunView(&cfg, &res)
		var got, want [traffic.NumClients]Kinds
		if !sc.retriesInOrder(&v, &got) {
			t.Fatalf("%s: the one pass was refused", run)
		}
		mine := sc.sentBy(&v)
		for _, lc := range cfg.Loop {
			retries(mine[lc.Key], lc.Key, sc.retryAfter[lc.Key], &want)
		}
		found += sameFindings(t, run, "in one pass", "listed", &got, &want)
	})
	if found < 5 {
		t.Errorf("only %d findings to compare", found)
	}
	// A fixed request on a closed-loop client's key comes first in its
	// order: the one pass leaves that run to the lists.
	sc := new(Simulation)
	cfg := huntConfig(limiter.FromAlgorithm(algos.TokenBucket), model.StoreClock, 1,
		[]record.Request{{Key: int(traffic.RetryAfter), Sent: 0}, {Key: int(traffic.Flood), Sent: 10}})
	cfg.Loop = sc.Watch(cfg.Loop)
	res, err := model.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v := newRunView(&cfg, &res)
	var got [traffic.NumClients]Kinds
	if sc.retriesInOrder(&v, &got) {
		t.Error("a closed-loop key with a fixed request was judged in one pass")
	}
}

// A run is judged on its retries only when it was played with Watch's
// clients, which keep the Retry-Afters the clients were handed: a planted
// GCRA that floors its Retry-After is caught denying a retry when watched,
// and a run played without Watch, after a watched one, is not judged on
// the Retry-Afters that run kept.
func TestRetriesAreJudgedOnlyOnWatchedRuns(t *testing.T) {
	requests, err := new(traffic.Scratch).Make(1, huntLimit, huntDuration, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := huntConfig(limiter.FromAlgorithm(planted.GCRARetryAfterFloored), model.StoreClock, 1, requests)
	sc := new(Simulation)
	judged := func(watch bool) *Evidence {
		t.Helper()
		c := cfg
		if watch {
			c.Loop = sc.Watch(c.Loop)
		}
		res, err := model.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		var found [traffic.NumClients]Kinds
		sc.Judge(&c, &res, &found)
		return found[traffic.RetryAfter][breach.RetryDenied]
	}
	if judged(true) == nil {
		t.Fatal("the watched run of the floored Retry-After was not caught denying a retry")
	}
	if f := judged(false); f != nil {
		t.Errorf("a run played without Watch was judged on its retries: %s", f.Violation.Reason)
	}
	if judged(true) == nil {
		t.Error("watched again, the floored Retry-After was not caught")
	}
}
