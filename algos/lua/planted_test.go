package lua_test

import (
	"context"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/algos/lua"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/internal/redistest"
)

// TestPlantedNegativeRefillScriptMatchesItsTwin holds the planted
// negative-refill token bucket's script (planted-token-bucket-negative-refill.lua,
// through lua.New) to its Go twin, planted.TokenBucketNegativeRefill,
// with the suite every script passes: the 15% of calls told a time behind
// drive the stored tokens below zero, which must survive the prelude's load3
// and store3. Each key's calls end with steps of 100 years back and forth
// (0, MaxTime, 0, 1), where the twin's floor on the debt and its bound on a
// refill decide, so that those agree too.
func TestPlantedNegativeRefillScriptMatchesItsTwin(t *testing.T) {
	s := redistest.Start(t)
	twin := planted.TokenBucketNegativeRefill
	l, err := lua.New(twin.Name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := lua.Suite{Calls: 5000, Seed: 60, Then: []int64{0, algos.MaxTime, 0, 1}}.
		Run(context.Background(), s.Client(t), l, s.Prefix(t)+"diff:"+twin.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Error(rep)
	}
	// The twin replayed: how many calls left tokens owed, so that the
	// comparison covered negative stored values.
	owing := 0
	for k, run := range rep.Runs {
		var st algos.State
		for _, now := range run.Times {
			if twin.Decide(&st, now, lua.SuiteKeys[k].Limit); st.A < 0 {
				owing++
			}
		}
	}
	if owing == 0 {
		t.Errorf("no call left the bucket owing tokens: the negative refill was not exercised")
	}
	t.Logf("Lua against Go, %s:\n%s; %d calls left tokens owed", s.Source, rep.Summary(), owing)
}
