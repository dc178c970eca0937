package redisrate_test

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/adapters/redisrate"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// Through the properties, redis_rate breaks three clauses of the contract
// at 7 per 3 s with a burst of 5, on the first case rapid draws: its float
// GCRA answers an idle key's first admit with a Remaining of 3, not 4
// (burst-from-idle), and admits only 4 at one instant where 5 are
// promised, so neither its Reset (reset-reaches-idle) nor an hour idle
// (refill-capped-after-idle) brings back the full burst. The report names
// the numbers. (At 100 per second, with more cases, remaining-is-exact,
// burst-from-idle and retry-loop-never-extends break too: a Remaining one
// short, a deadline 1 µs later; a few hundred cases on simredis take
// minutes, so they are not run here.)
func TestPropertiesItBreaks(t *testing.T) {
	l := algos.MustLimit(7, 3*algos.Second, 5)
	want := map[string]string{
		"burst-from-idle":          "of a burst of 5 from idle, remaining 3, want 4",
		"reset-reaches-idle":       "4 admits at one instant, want the full 5",
		"refill-capped-after-idle": "idle, want an admit leaving 4",
	}
	for _, p := range properties.Properties(redisrate.Spec(), properties.WithLimit(l)) {
		words, ok := want[p.Name]
		if !ok {
			continue
		}
		failed, report := properties.Fails(p.Prop, 5)
		first, _, _ := strings.Cut(report, "\n")
		if !failed || !strings.Contains(report, words) {
			t.Errorf("%s at %v: failed %v, want it broken with %q:\n%s", p.Name, l, failed, words, report)
			continue
		}
		t.Logf("%s: %s", p.Name, first)
	}
}

// Behind a store with clocks in agreement, at 10 per second and on two
// seeds (each call a real Redis command to simredis), the hunt finds no
// promise broken by more than GCRA's own arithmetic allows, and no error:
// the one-µs rounding the findings report shows on one node only.
func TestHuntBehindAStore(t *testing.T) {
	o := scenarios.HuntOptions()
	o.Limit = algos.MustLimit(10, algos.Second, 10)
	o.Seeds = []uint64{1, 2}
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: redisrate.Spec(), Deployment: model.StoreClock}}, o)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts[0]
	if v.Caught || v.Errors != 0 {
		t.Errorf("seed %d, %s client: %v (%d errors, the first %v)", v.FirstSeed, v.FirstClient, v.First, v.Errors, v.FirstError)
	}
	t.Logf("%s: clean on %d seeds, %d requests", v.Suspect, v.Seeds, v.Requests)
}
