package xtimerate_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/adapters/xtimerate"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// x/time/rate keeps the whole contract on one node, step-back properties
// included (a request told an earlier time refills nothing, and a denied
// one changes nothing), at the limits the properties draw.
func TestKeepsTheContract(t *testing.T) {
	t.Parallel()
	properties.Check(t, xtimerate.Spec())
}

// Behind a store with clocks in agreement, the mutants' hunt (200 seeds of
// 12 s, the eight clients) finds no broken promise and no error.
func TestHuntBehindAStoreIsClean(t *testing.T) {
	t.Parallel()
	o := scenarios.HuntOptions()
	if testing.Short() {
		o.Seeds = o.Seeds[:20]
	}
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: xtimerate.Spec(), Deployment: model.StoreClock}}, o)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts[0]
	if v.Caught || v.Errors != 0 {
		t.Errorf("seed %d, %s client: %v (%d errors)", v.FirstSeed, v.FirstClient, v.First, v.Errors)
	}
	t.Logf("%s: clean on %d seeds, %d requests", v.Suspect, v.Seeds, v.Requests)
}
