package live_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// One judge reads every producer's records, the simulator's too. The
// simulator sees each decision, so a simulated record's span is the
// decision itself, and the live judge, given a run's records, must convict
// exactly the runs the model's own promise check convicts wherever the
// client can judge the promise exactly (a bucket, a sliding window), and
// never one the model clears where it cannot (the windows, whose edges a
// client never sees). Each side must convict some runs and clear others,
// or the test proves nothing.
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
		exact := shape == algos.BucketShape || shape == algos.SlidingWindowShape
		for _, dep := range deployments {
			for seed := uint64(1); seed <= 4; seed++ {
				cfg := model.Config{Limiter: spec, Limit: l, Deployment: dep, Nodes: 3, Skew: 40_000, RTT: 2_000, Jitter: 25,
					WipeAt: 2 * algos.Second, Seed: seed, Requests: burstyRequests(seed, 3, 4*algos.Second)}
				if model.Applies(spec, dep) != nil {
					continue
				}
				res, recs := simulate(t, cfg)
				runs++
				v := live.Judge(recs, promise, l)
				if v.Unjudged != "" {
					t.Fatalf("%s, %s: unjudged: %s", a.Name, dep, v.Unjudged)
				}
				_, caught := v.Caught(live.OverAdmission)
				broke := res.Violations() > 0
				switch {
				case caught && !broke:
					t.Errorf("%s, %s, seed %d: the live judge convicts a run the model clears:\n%s", a.Name, dep, seed, v)
				case exact && broke && !caught:
					t.Errorf("%s, %s, seed %d: the model convicts (%d keys) a run the live judge clears", a.Name, dep, seed, res.Violations())
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

// burstyRequests is keys keys' requests over span: bursts of 2 to 30 at
// one instant, some on every node at once, with quiet gaps between, so
// that a limiter split over nodes, racing, or wiped shows it.
func burstyRequests(seed uint64, keys int, span int64) []model.Request {
	s := model.NewStream(seed, 77)
	var out []model.Request
	for at := int64(0); at < span; at += 1 + int64(s.Below(400_000)) {
		n := 2 + int(s.Below(29))
		key := int(s.Below(uint64(keys)))
		for range n {
			out = append(out, model.Request{Key: key, Send: at})
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
	judge := func(spec limiter.Spec, dep model.Deployment, seed uint64) live.Verdict {
		t.Helper()
		cfg := model.Config{Limiter: spec, Limit: l, Deployment: dep, Nodes: 3, RTT: 2_000, Jitter: 25, Seed: seed,
			Requests: burstyRequests(seed, 3, 4*algos.Second)}
		_, recs := simulate(t, cfg)
		return live.Judge(recs, spec.Promise(l), l)
	}
	judged := 0
	for _, a := range algos.All() {
		spec := limiter.FromAlgorithm(a)
		shape, _ := spec.Promise(l).Shape()
		exact := shape == algos.BucketShape || shape == algos.SlidingWindowShape
		for seed := uint64(1); seed <= 8; seed++ {
			for _, dep := range []model.Deployment{model.Ideal, model.StoreClock} {
				if b, caught := judge(spec, dep, seed).Caught(live.RemainingTooHigh); caught {
					t.Errorf("%s, %s, seed %d: an honest Remaining convicted: %s\n  first: %s", a.Name, dep, seed, b.Why, b.First)
				}
			}
			_, caught := judge(spec, model.LocalFull, seed).Caught(live.RemainingTooHigh)
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
		v := judge(planted, model.StoreClock, seed)
		if b, ok := v.Caught(live.RemainingTooHigh); ok {
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
		pct, ideal, err := live.Over(recs, algos.TokenBucket, l)
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
	if _, _, err := live.Over(nil, algos.TokenBucket, algos.Limit{}); err == nil {
		t.Error("an invalid limit gave no error")
	}
}
