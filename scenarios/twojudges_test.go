package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// sharedKinds are the kinds both of package judge's ways name: the hunt's
// (judge.Simulation) from the run itself, the judge of records
// (judge.Records) from the run's records alone.
var sharedKinds = []breach.Kind{breach.OverAdmission, breach.HonestTurnedAway, breach.RetryDenied, breach.RetryExtended,
	breach.BadAnswer, breach.RemainingTooHigh, breach.ResetTooShort, breach.ResetPastIdle}

// wireName is, per kind the hunt names, the kind the judge of records gives
// the same observation where the two names differ: a Retry-After past the
// Reset, which the hunt, knowing the exact waits, calls a bad answer, and
// the judge of records, allowing for the rounding of header values, a
// Reset before its Retry-After (package breach).
var wireName = map[breach.Kind]breach.Kind{breach.BadAnswer: breach.ResetBeforeRetryAfter}

// explainedBy are, per kind the judge of records names, the kinds the hunt may
// name for the same observation. A client that is refused at a Reset, or
// after its Retry-After, sees a Reset too short or a retry denied; the
// hunt, which sees the limiter, may find the cause instead: a burst or a
// refill smaller than the promise's, an honest request turned away. A
// client told a Remaining that the admits already decided in its window
// leave no room for sees a Remaining too high; where the nodes decide on
// copies read apart from the state (GET, decide, SET), the hunt judges no
// Remaining and finds the cause, the over-admission of those copies.
var explainedBy = map[breach.Kind][]breach.Kind{
	breach.ResetTooShort:    {breach.ResetTooShort, breach.HonestTurnedAway},
	breach.RetryDenied:      {breach.RetryDenied, breach.HonestTurnedAway},
	breach.RemainingTooHigh: {breach.RemainingTooHigh, breach.OverAdmission},
}

// partlyShown are the shared kinds the judge of records may show on fewer
// suspect-seeds than the hunt, and why. The hunt holds every Reset to the
// time its instance's promise takes to idle; a client holds a Reset to
// the burst it then sends, and an uncapped bucket whose Reset is short
// (it has more tokens than the promise, not fewer) admits that burst.
var partlyShown = map[breach.Kind]string{
	breach.ResetTooShort: "a short Reset that admits the burst sent at it shows nothing to a client",
}

// The judge's two ways, of a simulated run and of records, speak one
// vocabulary and agree where both can see: on the very runs a hunt judges,
// every breach of a kind both name that the judge of records finds in the run's records (each
// decision at its instant, as the simulator saw it) the hunt finds too,
// on the same seed, or its cause (explainedBy); and the correct
// deployments are clean before both. The judge of records is the weaker
// (it reads the records a client could keep, not the limiter), so the
// hunt may find more: the test counts how much of it the records show.
// The deployments are those whose state is one per key, behind a store; a
// local one is, to a client, one service, and to the hunt a limiter per
// node (the local deployments' mistake shows as over-admission in both).
func TestTheTwoJudgesAgreeOnTheHuntsRuns(t *testing.T) {
	t.Parallel()
	o := HuntOptions()
	o.Seeds = o.Seeds[:1] // the judge of records takes ~30 ms a run of 20,000 records
	type suspect struct {
		Suspect
		correct bool
	}
	var suspects []suspect
	for _, a := range append(algos.All(), algos.FirstHitWindow) {
		suspects = append(suspects, suspect{Suspect{Limiter: limiter.FromAlgorithm(a), Deployment: model.StoreClock}, true})
	}
	for _, a := range planted.All() {
		suspects = append(suspects, suspect{Suspect: Suspect{Limiter: limiter.FromAlgorithm(a), Deployment: model.StoreClock}})
	}
	suspects = append(suspects, suspect{Suspect: Suspect{Limiter: limiter.FromAlgorithm(algos.FixedWindow), Deployment: model.GetSet}})

	var sc traffic.Scratch
	seen, shown := map[breach.Kind]int{}, map[breach.Kind]int{}
	for _, seed := range o.Seeds {
		requests, err := sc.Make(seed, o.Limit, o.Duration, o.Edge)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range suspects {
			one := o
			one.Seeds = []uint64{seed}
			verdicts, err := Hunt([]Suspect{s.Suspect}, one)
			if err != nil {
				t.Fatal(err)
			}
			hunt := verdicts[0]
			cfg := o.config(s.Limiter, Column{Deployment: s.Deployment}, seed, requests)
			res, err := model.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			records, err := res.Records(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var opts []judge.Option
			if !s.Limiter.Conservative { // held to its promise as a floor too, as the hunt holds it
				opts = append(opts, judge.Exact())
			}
			v := judge.Records(records, s.Limiter.Promise(o.Limit), o.Limit, opts...)
			if v.Unjudged != "" {
				t.Fatalf("%s, seed %d: the judge of records could not judge the promise: %s", hunt.Suspect, seed, v.Unjudged)
			}
			if s.correct && (hunt.Caught || !v.Clean()) {
				t.Errorf("%s, seed %d, correct: hunt caught %v (%s), judge of records:\n%s", hunt.Suspect, seed, hunt.Caught, hunt.FirstBreach, v)
				continue
			}
			var missed []string
			for _, k := range sharedKinds {
				b, inRecords := v.Caught(k)
				if hunt.SeedsBy[k] > 0 {
					seen[k]++
					_, asWire := v.Caught(wireName[k])
					if inRecords || asWire {
						shown[k]++
					}
				}
				explained := hunt.SeedsBy[k] > 0
				for _, cause := range explainedBy[k] {
					explained = explained || hunt.SeedsBy[cause] > 0
				}
				if inRecords && !explained {
					missed = append(missed, fmt.Sprintf("%s %d: %s\n    first: %s", k, b.Count, b.Why, b.First))
				}
			}
			if len(missed) > 0 {
				t.Errorf("%s, seed %d: the judge of records found in the run's records what the hunt did not:\n  %s", hunt.Suspect, seed, strings.Join(missed, "\n  "))
			}
		}
	}
	for _, k := range sharedKinds {
		t.Logf("%-20s the hunt found it on %2d suspect-seeds, the judge of records on %2d of them", k, seen[k], shown[k])
	}
	// The records rank the decisions of one µs (record.SeenOrder), so the
	// judge of records shows every breach of a shared kind that the hunt
	// finds, on the same suspect and seed, but where partlyShown says why
	// a client cannot.
	for _, k := range sharedKinds {
		if _, partly := partlyShown[k]; !partly && shown[k] < seen[k] {
			t.Errorf("%s: the judge of records showed it on %d of the %d suspect-seeds the hunt found it on", k, shown[k], seen[k])
		}
	}
	// Both ways tested: the judge of records must have convicted something the
	// hunt also found, of more than one kind.
	if kinds := slices.DeleteFunc(slices.Clone(sharedKinds), func(k breach.Kind) bool { return shown[k] == 0 }); len(kinds) < 3 {
		t.Errorf("the judge of records agreed with the hunt on %d kinds only (%v): the agreement was barely tested", len(kinds), kinds)
	}
}
