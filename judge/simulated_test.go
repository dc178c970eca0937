package judge_test

import (
	"cmp"
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// One judge reads every producer's records, the simulator's too. The
// simulator sees each decision, so a simulated record's span is the
// decision itself, and the judge, given a run's records, must convict
// exactly the runs the model's own promise check convicts wherever the
// client can judge the promise exactly (a bucket, a sliding window, and
// aligned windows, whose edges a record seen at its decision shows), and
// never one the model clears where it cannot (the anchored windows, whose
// edges a client never sees). Each side must convict some runs and clear others,
// or the test proves nothing. The Reset rules convict none of these runs:
// each algorithm's Resets are honest in every deployment, its nodes'
// clocks apart (which the simulator's records show) included.
func TestJudgeOfSimulatedRecordsAgreesWithTheModel(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	deployments := []model.Deployment{model.Ideal, model.NodeClock, model.StoreClock, model.StoreWiped, model.LocalSplit, model.GetSet}
	convicted, cleared, runs := 0, 0, 0
	for _, a := range algos.All() {
		spec := limiter.FromAlgorithm(a)
		promise := spec.Promise(l)
		shape, _ := promise.Shape()
		exact := shape == algos.BucketShape || shape == algos.SlidingWindowShape || shape == algos.AlignedWindowShape
		for _, dep := range deployments {
			for seed := uint64(1); seed <= 4; seed++ {
				cfg := model.Config{Limiter: spec, Limit: l, Deployment: dep, Nodes: 3, Skew: 40_000, RTT: 2_000, Jitter: 25,
					WipeAt: 2 * algos.Second, Seed: seed, Requests: burstyRequests(seed, 3, 4*algos.Second)}
				if model.Applies(spec, dep) != nil {
					continue
				}
				res, recs := simulate(t, cfg)
				runs++
				v := judge.Records(recs, promise, l)
				if v.Unjudged != "" {
					t.Fatalf("%s, %s: unjudged: %s", a.Name, dep, v.Unjudged)
				}
				for _, k := range waitKinds {
					if b, ok := v.Caught(k); ok {
						t.Errorf("%s, %s, seed %d: a correct algorithm's waits convicted: %s %d: %s\n  first: %s", a.Name, dep, seed, k, b.Count, b.Why, b.First)
					}
				}
				_, caught := v.Caught(breach.OverAdmission)
				broke := res.Violations() > 0
				switch {
				case caught && !broke:
					t.Errorf("%s, %s, seed %d: the judge convicts a run the model clears:\n%s", a.Name, dep, seed, v)
				case exact && broke && !caught:
					t.Errorf("%s, %s, seed %d: the model convicts (%d keys) a run the judge clears", a.Name, dep, seed, res.Violations())
				}
				if caught {
					convicted++
				} else {
					cleared++
				}
			}
		}
	}
	t.Logf("%d simulated runs judged from their records: %d convicted, %d cleared", runs, convicted, cleared)
	if convicted == 0 || cleared == 0 {
		t.Errorf("%d convicted and %d cleared: the agreement was not tested both ways", convicted, cleared)
	}
	// The runs are simulated, so the counts are exact; docs/http.md states
	// them.
	if runs != 144 || convicted != 58 || cleared != 86 {
		t.Errorf("%d runs, %d convicted, %d cleared; the docs state 144, 58 and 86", runs, convicted, cleared)
	}
}

// simulate runs cfg and returns the run and its records.
func simulate(t *testing.T, cfg model.Config) (model.Result, []record.Record) {
	t.Helper()
	res, err := model.Run(cfg)
	if err != nil {
		t.Fatalf("%s, %s: %v", cfg.Limiter.Name, cfg.Deployment, err)
	}
	recs, err := res.Records(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res, recs
}

// burstyRecords is the records of spec under l deployed dep on 3 nodes, a
// 2 ms round trip apart from the store, offered burstyRequests on 3 keys
// for 4 s.
func burstyRecords(t *testing.T, spec limiter.Spec, dep model.Deployment, seed uint64, l algos.Limit) []record.Record {
	t.Helper()
	_, recs := simulate(t, model.Config{Limiter: spec, Limit: l, Deployment: dep, Nodes: 3, RTT: 2_000, Jitter: 25,
		Seed: seed, Requests: burstyRequests(seed, 3, 4*algos.Second)})
	return recs
}

// burstyRequests is keys keys' requests over span: bursts of 2 to 30 at
// one instant, some on every node at once, with quiet gaps between, so
// that a limiter split over nodes, racing, or wiped shows it.
func burstyRequests(seed uint64, keys int, span int64) []record.Request {
	s := record.NewStream(seed, 77)
	var out []record.Request
	for at := int64(0); at < span; at += 1 + int64(s.Below(400_000)) {
		n := 2 + int(s.Below(29))
		key := int(s.Below(uint64(keys)))
		for range n {
			out = append(out, record.Request{Key: key, Sent: at})
		}
	}
	return out
}

// The Remaining rule reads the simulator's records soundly: the six
// algorithms, deployed where their promise holds (one node, or one store
// on the store's clock), never answer a Remaining the rule convicts; the
// token bucket that answers Remaining before taking its token is convicted
// on every seed, and so, with a bucket on each of three nodes, is every
// limiter whose promise the client can judge: each node's Remaining counts
// its own admits only.
func TestRemainingRuleOnSimulatedRecords(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	judgeRun := func(spec limiter.Spec, dep model.Deployment, seed uint64) judge.Verdict {
		t.Helper()
		return judge.Records(burstyRecords(t, spec, dep, seed, l), spec.Promise(l), l)
	}
	judged := 0
	for _, a := range algos.All() {
		spec := limiter.FromAlgorithm(a)
		shape, _ := spec.Promise(l).Shape()
		exact := shape == algos.BucketShape || shape == algos.SlidingWindowShape || shape == algos.AlignedWindowShape
		for seed := uint64(1); seed <= 8; seed++ {
			for _, dep := range []model.Deployment{model.Ideal, model.StoreClock} {
				if b, caught := judgeRun(spec, dep, seed).Caught(breach.RemainingTooHigh); caught {
					t.Errorf("%s, %s, seed %d: an honest Remaining convicted: %s\n  first: %s", a.Name, dep, seed, b.Why, b.First)
				}
			}
			_, caught := judgeRun(spec, model.LocalFull, seed).Caught(breach.RemainingTooHigh)
			if exact && !caught && a.Name != algos.SlidingCounter.Name {
				t.Errorf("%s, a bucket per node, seed %d: no Remaining convicted", a.Name, seed)
			}
			if exact {
				judged++
			}
		}
	}
	planted := limiter.FromAlgorithm(plantedRemainingBeforeTake)
	caught := 0
	for seed := uint64(1); seed <= 8; seed++ {
		v := judgeRun(planted, model.StoreClock, seed)
		if b, ok := v.Caught(breach.RemainingTooHigh); ok {
			caught++
			if seed == 1 {
				t.Logf("%s: %s\n  first: %s", planted.Name, b.Why, b.First)
			}
		}
	}
	if caught != 8 || judged == 0 {
		t.Errorf("the planted Remaining caught on %d of 8 seeds (%d exact runs judged), want every one", caught, judged)
	}
}

// plantedRemainingBeforeTake answers the Remaining it had before taking the
// request's token: one too many on every admit.
var plantedRemainingBeforeTake = planted.TokenBucketRemainingBeforeTake

// The table's "over" from records: a run on one shared store admits what
// the reference would of the same requests, within a round trip's worth;
// a bucket on each of three nodes admits far more, and says how much.
func TestOverFromRecordsIsTheTables(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	spec := limiter.FromAlgorithm(algos.TokenBucket)
	over := func(dep model.Deployment) (float64, int) {
		t.Helper()
		cfg := model.Config{Limiter: spec, Limit: l, Deployment: dep, Nodes: 3, RTT: 1_000, Seed: 1, Requests: burstyRequests(1, 3, 6*algos.Second)}
		_, recs := simulate(t, cfg)
		pct, ideal, err := judge.Over(recs, algos.TokenBucket, l)
		if err != nil {
			t.Fatal(err)
		}
		if ideal == 0 {
			t.Fatalf("%s: the reference admitted nothing", dep)
		}
		return pct, ideal
	}
	shared, ideal := over(model.StoreClock)
	split, _ := over(model.LocalFull)
	t.Logf("token bucket over its ideal (%d admits): shared store %+.1f%%, a bucket per node %+.1f%%", ideal, shared, split)
	if shared < -2 || shared > 2 || split < 100 {
		t.Errorf("over: shared store %+.1f%% (want within ±2%%), a bucket per node %+.1f%% (want +100%% or more)", shared, split)
	}
	if _, _, err := judge.Over(nil, algos.TokenBucket, algos.Limit{}); err == nil {
		t.Error("an invalid limit gave no error")
	}
}

// waitKinds are the breaches of the rules on stated waits: the Reset
// rules (reset.go) and the early retry (retries.go).
var waitKinds = []breach.Kind{breach.ResetBeforeRetryAfter, breach.ResetPastIdle, breach.ResetTooShort, breach.RetryExtended}

// idleRequests is keys keys' requests over span, each key's on its own:
// bursts of 1 to 25 at one instant, each after a quiet gap of up to one and
// a half windows of l, so that many come after the key is idle again.
func idleRequests(seed uint64, keys int, span int64, l algos.Limit) []record.Request {
	s := record.NewStream(seed, 78)
	var out []record.Request
	for key := range keys {
		for at := int64(s.Below(uint64(l.Window))); at < span; at += 1 + int64(s.Below(uint64(l.Window*3/2))) {
			for range 1 + int(s.Below(25)) {
				out = append(out, record.Request{Key: key, Sent: at})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b record.Request) int { return cmp.Compare(a.Sent, b.Sent) })
	return out
}

// The rules on stated waits on the simulator's records: the six
// algorithms, each where its promise holds and over a sliding window of
// nodes, on traffic that comes back to idle keys, are never convicted;
// waits planted wrong are caught by the rule each breaks, on every seed: a
// Reset in the wrong unit (shorter than its Retry-After, and the key not
// idle at it), half the wait (the key not idle at it), a Reset past an
// empty bucket's refill and a window's edge after next. The fixed window
// that names the start of its window is caught too, where it names an
// edge before the true one, and the GCRA that charges each denial an
// interval by the early retries its bursts make (breach.RetryExtended).
func TestWaitRulesOnSimulatedRecords(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	judgeRun := func(a algos.Algorithm, dep model.Deployment, seed uint64) judge.Verdict {
		t.Helper()
		spec := limiter.FromAlgorithm(a)
		cfg := model.Config{Limiter: spec, Limit: l, Deployment: dep, Nodes: 3, RTT: 2_000, Jitter: 25, Seed: seed,
			Requests: idleRequests(seed, 3, 8*algos.Second, l)}
		_, recs := simulate(t, cfg)
		return judge.Records(recs, spec.Promise(l), l)
	}
	for _, a := range append(algos.All(), algos.FirstHitWindow) {
		for seed := uint64(1); seed <= 8; seed++ {
			for _, dep := range []model.Deployment{model.Ideal, model.StoreClock, model.NodeClock} {
				v := judgeRun(a, dep, seed)
				for _, k := range waitKinds {
					if b, ok := v.Caught(k); ok {
						t.Errorf("%s, %s, seed %d: an honest wait convicted: %s: %s\n  first: %s", a.Name, dep, seed, k, b.Why, b.First)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		a     algos.Algorithm
		kinds []breach.Kind
	}{
		{planted.ResetInMillis, []breach.Kind{breach.ResetBeforeRetryAfter, breach.ResetTooShort}},
		{planted.ResetHalf, []breach.Kind{breach.ResetTooShort}},
		{planted.GCRAResetPlusTolerance, []breach.Kind{breach.ResetPastIdle}},
		{planted.ResetNextButOneEdge, []breach.Kind{breach.ResetPastIdle}},
		{planted.FixedWindowResetFromStart, []breach.Kind{breach.ResetTooShort}},
		{plantedPenalizedDenial, []breach.Kind{breach.RetryExtended}},
	} {
		for seed := uint64(1); seed <= 8; seed++ {
			v := judgeRun(c.a, model.StoreClock, seed)
			for _, k := range c.kinds {
				b, ok := v.Caught(k)
				if !ok {
					t.Errorf("%s, seed %d: not caught as %s:\n%s", c.a.Name, seed, k, v)
				} else if seed == 1 {
					t.Logf("%s: %s %d: %s\n  first: %s", c.a.Name, k, b.Count, b.Why, b.First)
				}
			}
			if _, ok := v.Caught(breach.OverAdmission); ok {
				t.Errorf("%s, seed %d: over-admission, but only its waits are planted", c.a.Name, seed)
			}
		}
	}
}

// plantedPenalizedDenial is the GCRA charging every denial an emission
// interval: a retry that comes early, as a burst's next request does, is
// told a deadline later than the denial before it named.
var plantedPenalizedDenial = func() algos.Algorithm {
	a := algos.GCRA
	decide := a.Decide
	a.Name, a.Decide = "planted-gcra-penalized-denial", func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		d := decide(s, now, l)
		if !d.Allowed {
			g := s.GCRA()
			g.TAT += l.Window / l.Rate
			s.SetGCRA(g)
		}
		return d
	}
	return a
}()

// The honesty rule reads the simulator's records soundly: the four exact
// algorithms (the buckets and the GCRA under a bucket promise, the
// sliding log under a sliding one), on one node or behind one store on
// the store's clock, never deny a request the rule convicts; a bucket one
// short of its burst behind the store is convicted on every seed, and so
// is the token bucket split over three nodes, each holding a third of the
// burst, which turns away what one bucket would admit.
func TestHonestRuleOnSimulatedRecords(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	exact := []algos.Algorithm{algos.TokenBucket, algos.LeakyBucket, algos.GCRA, algos.SlidingLog}
	runOf := func(a algos.Algorithm, dep model.Deployment, seed uint64) judge.Verdict {
		spec := limiter.FromAlgorithm(a)
		return judge.Records(burstyRecords(t, spec, dep, seed, l), spec.Promise(l), l, judge.Exact())
	}
	denials := 0
	for _, a := range exact {
		for _, dep := range []model.Deployment{model.Ideal, model.StoreClock} {
			for seed := uint64(1); seed <= 6; seed++ {
				v := runOf(a, dep, seed)
				denials += v.Denied
				if b, ok := v.Caught(breach.HonestTurnedAway); ok {
					t.Errorf("%s, %s, seed %d: an exact algorithm convicted: %s %d: %s\n  first: %s", a.Name, dep, seed, b.Kind, b.Count, b.Why, b.First)
				}
			}
		}
	}
	if denials < 1000 {
		t.Errorf("the exact algorithms denied %d requests in all: the rule was barely tested", denials)
	}
	for _, c := range []struct {
		a   algos.Algorithm
		dep model.Deployment
	}{
		{planted.TokenBucketBurstOneShort, model.StoreClock},
		{algos.TokenBucket, model.LocalSplit},
	} {
		for seed := uint64(1); seed <= 6; seed++ {
			v := runOf(c.a, c.dep, seed)
			b, ok := v.Caught(breach.HonestTurnedAway)
			if !ok {
				t.Errorf("%s, %s, seed %d: not caught turning honest requests away:\n%s", c.a.Name, c.dep, seed, v)
			} else if seed == 1 {
				t.Logf("%s, %s: %s %d: %s\n  first: %s", c.a.Name, c.dep, b.Kind, b.Count, b.Why, b.First)
			}
		}
	}
}

// PerNode tells a deployment from its limiter: the token bucket given the
// whole limit on each of three nodes over-admits every key, and every
// node's bucket keeps the promise, on every seed; a GCRA whose burst is
// one too big is caught on its node. It is for nodes that keep their own
// state: the bucket behind one store, clean as the deployment it is,
// judged per node is refused after waits its answers named, since the
// other nodes took the room.
func TestPerNodeTellsTheDeploymentFromItsLimiter(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	verdicts := func(a algos.Algorithm, dep model.Deployment, seed uint64) (whole, perNode judge.Verdict) {
		recs := burstyRecords(t, limiter.FromAlgorithm(a), dep, seed, l)
		p := algos.BucketPromise(l)
		return judge.Records(recs, p, l), judge.Records(recs, p, l, judge.PerNode())
	}
	for seed := uint64(1); seed <= 6; seed++ {
		whole, perNode := verdicts(algos.TokenBucket, model.LocalFull, seed)
		if _, ok := whole.Caught(breach.OverAdmission); !ok {
			t.Errorf("seed %d: a bucket with the whole limit on each of 3 nodes was not caught over-admitting:\n%s", seed, whole)
		}
		if !perNode.Clean() || perNode.Keys <= whole.Keys {
			t.Errorf("seed %d: each node's own bucket, judged per node, was not clean (%d keys on their nodes, %d keys):\n%s", seed, perNode.Keys, whole.Keys, perNode)
		}
		if seed == 1 {
			t.Logf("a bucket per node, the deployment:\n%s\neach node's bucket:\n%s", whole, perNode)
		}
		whole, perNode = verdicts(algos.TokenBucket, model.StoreClock, seed)
		if !whole.Clean() {
			t.Errorf("seed %d: one store's bucket:\n%s", seed, whole)
		}
		_, retry := perNode.Caught(breach.RetryDenied)
		_, reset := perNode.Caught(breach.ResetTooShort)
		if !retry && !reset {
			t.Errorf("seed %d: one store's bucket judged per node, as if each node kept its own, showed no wait the other nodes took:\n%s", seed, perNode)
		}
		wide := planted.GCRAWideTolerance // a burst one too big
		if _, perNode := verdicts(wide, model.LocalFull, seed); perNode.Clean() {
			t.Errorf("seed %d: %s on each node was not caught per node:\n%s", seed, wide.Name, perNode)
		}
	}
}
