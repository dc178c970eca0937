package lua_test

import (
	"context"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/internal/race"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/redis/lua"
)

// TestPlantedNegativeRefillScriptMatchesItsTwin holds the planted
// negative-refill token bucket's script (planted-token-bucket-negative-refill.lua,
// through lua.New) to its Go twin, planted.TokenBucketNegativeRefill,
// with the suite every script passes, told the time and reading TIME: the
// 15% of calls told a time behind drive the stored tokens below zero, which
// must survive the prelude's load3 and store3. Each key's calls end with
// steps of 100 years back and forth (0, MaxTime, 0, 1), where the twin's
// floor on the debt and its bound on a refill decide, so that those agree
// too. On simredis the store-clock path meets the same times, the store's
// clock stepped back where a time is behind, and the debt shows there too.
func TestPlantedNegativeRefillScriptMatchesItsTwin(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	s := redistest.Start(t)
	twin := planted.TokenBucketNegativeRefill
	l, err := lua.New(twin.Name)
	if err != nil {
		t.Fatal(err)
	}
	then := []int64{0, algos.MaxTime, 0, 1}
	rep, err := lua.Suite{Calls: 5000, Seed: 60, Then: then}.
		Run(context.Background(), s.Client(t), l, s.Prefix(t)+"diff:"+twin.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Error(rep)
	}
	sim, c := lua.SimStore(t)
	simCalls := 1300
	if race.Enabled {
		simCalls = 130 // gopher-lua under -race: 2 to 5 ms a call
	}
	onSim, err := lua.Suite{Calls: simCalls, Seed: 61, Then: then, Clock: sim}.Run(context.Background(), c, l, "diff:"+twin.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range onSim.Runs {
		if !run.Report.OK() {
			t.Error(onSim)
			break
		}
	}
	if !race.Enabled && !onSim.OK() {
		t.Error(onSim)
	}
	simOwing := 0
	for k, run := range onSim.Runs {
		var st algos.State
		for _, now := range run.Times { // the store-clock path's TIMEs too
			if twin.Decide(&st, now, lua.SuiteKeys[k].Limit); st.Bucket().Level < 0 {
				simOwing++
			}
		}
	}
	if simOwing == 0 && !race.Enabled {
		t.Errorf("on simredis no call left the bucket owing tokens")
	}
	// The twin replayed: how many calls left tokens owed, so that the
	// comparison covered negative stored values.
	owing := 0
	for k, run := range rep.Runs {
		var st algos.State
		for _, now := range run.Times {
			if twin.Decide(&st, now, lua.SuiteKeys[k].Limit); st.Bucket().Level < 0 {
				owing++
			}
		}
	}
	if owing == 0 {
		t.Errorf("no call left the bucket owing tokens: the negative refill was not exercised")
	}
	t.Logf("Lua against Go, %s:\n%s; %d calls left tokens owed\nsimredis, the store's clock set to the calls' times:\n%s; %d calls left tokens owed", s.Source, rep.Summary(), owing, onSim.Summary(), simOwing)
}
