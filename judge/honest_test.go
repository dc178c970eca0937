package judge

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/record"
)

// honestAt is the rule read straight from the promise, for records whose
// decisions were seen: one more admit at τ fits, after every admit decided
// at or before τ (two decisions at one µs are not ordered, so a tie counts
// as before).
func honestAt(tau int64, admits []int64, shape promiseShape, l algos.Limit) bool {
	switch shape {
	case bucketShape:
		for _, x := range append([]int64{tau}, admits...) {
			if x > tau {
				continue
			}
			n := int64(0)
			for _, a := range admits {
				if a >= x && a <= tau {
					n++
				}
			}
			if (n+1)*l.Window > l.Burst*l.Window+l.Rate*(tau-x) {
				return false
			}
		}
		return true
	case slidingShape:
		n := int64(0)
		for _, a := range admits {
			if a > tau-l.Window && a <= tau {
				n++
			}
		}
		return n+1 <= l.Rate
	}
	return false
}

// Where the records saw each decision, the honesty rule convicts exactly
// the denials a brute force over the promise's every interval convicts, on
// random runs of random decisions (bursts at one instant included), under
// a bucket and a sliding promise.
func TestHonestRuleAgreesWithBruteForce(t *testing.T) {
	l := algos.MustLimit(3, 100*ms, 4)
	convicted, cleared := 0, 0
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 31))
		shape := []promiseShape{bucketShape, slidingShape}[seed%2]
		var recs []record.Record
		var admits []int64
		at := int64(0)
		for range 2 + rng.IntN(14) {
			at += rng.Int64N(60 * ms)
			allowed := rng.IntN(3) > 0
			recs = append(recs, record.Record{Key: "k", Sent: at, Decided: at, Answered: at, Seen: record.SeenDecided,
				Answer: record.Answer{Decision: algos.Decision{Allowed: allowed}}})
			if allowed {
				admits = append(admits, at)
			}
		}
		want := 0
		for _, r := range recs {
			if !r.Allowed && honestAt(r.Decided, admits, shape, l) {
				want++
			}
		}
		hv, err := judgeHonest(recs, shape, l)
		if err != nil {
			t.Fatal(err)
		}
		if hv.count != int64(want) {
			t.Fatalf("seed %d, %v: the rule convicts %d denials, the brute force %d\n%v", seed, shape, hv.count, want, recs)
		}
		if want > 0 {
			convicted++
		} else {
			cleared++
		}
	}
	t.Logf("%d runs with a denial the promise allowed, each agreed on; %d without", convicted, cleared)
	if convicted < 50 || cleared < 50 {
		t.Errorf("%d runs convicted, %d cleared: the agreement was not tested both ways", convicted, cleared)
	}
}

// The honesty rule is sound under the client's timing uncertainty: an
// exact limiter (one that admits whatever its promise allows, and so is
// honest at the true times) is never convicted, whatever the delays, from
// none to longer than a window, and whatever the spacing of the requests;
// one that refuses what the promise allows (a bucket one short of its
// burst, a limiter at half the promise's rate) is convicted on most runs
// whose answers come back within a few ms.
func TestHonestRuleIsSoundAgainstTheTrueTimes(t *testing.T) {
	l := algos.MustLimit(5, 200*ms, 5)
	exact := []struct {
		algo    algos.Algorithm
		promise func(algos.Limit) algos.Promise
	}{
		{algos.TokenBucket, algos.BucketPromise},
		{algos.LeakyBucket, algos.BucketPromise},
		{algos.GCRA, algos.BucketPromise},
		{algos.SlidingLog, algos.SlidingWindowPromise},
	}
	for _, c := range exact {
		for seed := range uint64(60) {
			rng := rand.New(rand.NewPCG(seed, 41))
			delay := []int64{0, 1, 5 * ms, 50 * ms, 300 * ms}[rng.IntN(5)]
			recs, _ := run(seed, c.algo, l, 1, ms+rng.Int64N(30*ms), 2*algos.Second, delay, delay)
			if b, ok := Records(recs, c.promise(l), l, Exact()).Caught(breach.HonestTurnedAway); ok {
				t.Fatalf("%s, seed %d, delays up to %s: an exact limiter convicted: %s\n  first: %s", c.algo.Name, seed, algos.FormatMicros(delay), b.Why, b.First)
			}
		}
	}
	refusing := []struct {
		name    string
		algo    algos.Algorithm
		limit   algos.Limit
		promise func(algos.Limit) algos.Promise
	}{
		{"a bucket one short of its burst", planted.TokenBucketBurstOneShort, l, algos.BucketPromise},
		{"a bucket at half the rate", algos.TokenBucket, algos.MustLimit(5, 400*ms, 5), algos.BucketPromise},
		{"a log at half the rate", algos.SlidingLog, algos.MustLimit(5, 400*ms, 5), algos.SlidingWindowPromise},
	}
	for _, c := range refusing {
		caught, runs := 0, 0
		for seed := range uint64(40) {
			rng := rand.New(rand.NewPCG(seed, 43))
			delay := []int64{0, 1, 2 * ms}[rng.IntN(3)]
			recs, _ := run(seed, c.algo, c.limit, 1, ms+rng.Int64N(30*ms), 2*algos.Second, delay, delay)
			runs++
			v := Records(recs, c.promise(l), l, Exact())
			if b, ok := v.Caught(breach.HonestTurnedAway); ok {
				caught++
				if seed == 0 {
					t.Logf("%s: %s %d: %s\n  first: %s", c.name, b.Kind, b.Count, b.Why, b.First)
				}
			}
			if _, ok := Records(recs, c.promise(l), l).Caught(breach.HonestTurnedAway); ok {
				t.Fatalf("%s, seed %d: judged for honesty without Exact", c.name, seed)
			}
		}
		t.Logf("%s: convicted on %d of %d runs", c.name, caught, runs)
		if 100*caught < 90*runs {
			t.Errorf("%s: convicted on %d of %d runs; want at least 90%%", c.name, caught, runs)
		}
	}
}

// A key with a request of cost above 1 is not judged for honesty, nor a
// promise whose windows the client cannot see; a run too long to count
// exactly is an error, and Records says it is unjudged.
func TestHonestRuleJudgesOnlyWhatItCanCount(t *testing.T) {
	l := algos.MustLimit(5, 200*ms, 5)
	denied := record.Record{Key: "k", Sent: 10, Decided: 10, Answered: 10, Seen: record.SeenDecided}
	judged := func(recs []record.Record, shape promiseShape, l algos.Limit) ruleVerdict {
		t.Helper()
		hv, err := judgeHonest(recs, shape, l)
		if err != nil {
			t.Fatal(err)
		}
		return hv
	}
	if hv := judged([]record.Record{denied}, bucketShape, l); hv.count != 1 || !strings.Contains(hv.why, "key k was denied") {
		t.Fatalf("a lone denial under a bucket promise: %+v", hv)
	}
	costly := denied
	costly.Cost = 2
	if hv := judged([]record.Record{denied, costly}, bucketShape, l); hv.count != 0 {
		t.Errorf("a key with a request of cost 2 was judged: %+v", hv)
	}
	if hv := judged([]record.Record{denied}, windowsShape, l); hv.count != 0 {
		t.Errorf("windows the client cannot see were judged: %+v", hv)
	}
	// Epoch times judge as times from the run's start do.
	late := denied
	late.Sent, late.Decided, late.Answered = 1_700_000_000_000_010, 1_700_000_000_000_010, 1_700_000_000_000_010
	if hv := judged([]record.Record{late}, bucketShape, l); hv.count != 1 {
		t.Errorf("a lone denial at an epoch time: %+v", hv)
	}
	fast := algos.MustLimit(1_000_000, 1, 1)
	far := late
	far.Sent, far.Decided, far.Answered = 1, 1, 1
	if _, err := judgeHonest([]record.Record{far, late}, bucketShape, fast); err == nil {
		t.Errorf("%v over 54 years was counted", fast)
	}
	if v := Records([]record.Record{far, late}, algos.BucketPromise(fast), fast, Exact()); v.Unjudged == "" {
		t.Errorf("Records judged what it cannot count: %s", v.Row())
	}
}
