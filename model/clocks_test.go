package model_test

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// A node's clock is its offset, its drift and the steps it has taken; the
// store's clock is true time and the store's steps.
func TestClockAtIsOffsetDriftAndSteps(t *testing.T) {
	cfg := model.Config{Nodes: 2, Skew: 10_000, Clocks: model.Clocks{
		DriftPPM: []int64{100, -100},
		Steps: []model.Step{
			{Clock: 1, At: 30 * algos.Second, By: -algos.Second},
			{Clock: 0, At: 20 * algos.Second, By: 60 * algos.Second},
			{Clock: model.StoreClockStep, At: 5 * algos.Second, By: 2 * algos.Second},
			{Clock: 1, At: 10 * algos.Second, By: 500},
		},
	}}
	hour := 3600 * algos.Second
	for _, c := range []struct {
		node     int
		at, want int64
	}{
		{0, 0, -5_000},
		{1, 0, 5_000},
		{0, hour, hour - 5_000 + 360_000 + 60*algos.Second}, // +100 ppm for an hour is 360 ms
		{1, hour, hour + 5_000 - 360_000 + 500 - algos.Second},
		{0, 20*algos.Second - 1, 20*algos.Second - 1 - 5_000 + 1_999}, // ⌊(20 s − 1 µs)·100/10⁶⌋
		{0, 20 * algos.Second, 20*algos.Second - 5_000 + 2_000 + 60*algos.Second},
		{1, 15_001, 15_001 + 5_000 - 2}, // ⌊15001·(−100)/10⁶⌋ = −2: drift rounds down
	} {
		if got := cfg.ClockAt(c.node, c.at); got != c.want {
			t.Errorf("node %d at %s reads %d, want %d", c.node, algos.FormatTime(c.at), got, c.want)
		}
	}
	if got := cfg.StoreClockAt(5*algos.Second - 1); got != 5*algos.Second-1 {
		t.Errorf("the store before its step reads %d", got)
	}
	if got := cfg.StoreClockAt(5 * algos.Second); got != 7*algos.Second {
		t.Errorf("the store at its step reads %d, want 7 s", got)
	}
}

// The store's clock is the only one a store-clock deployment reads: steps
// and drift of every node change nothing it decides, while the node-clock
// deployment of the same requests decides otherwise.
func TestStoreClockIgnoresNodeClockFaults(t *testing.T) {
	reqs := traffic(3, 30*algos.Second)
	nodeFaults := model.Clocks{
		DriftPPM: []int64{100_000, -100_000, 0, 50_000},
		Steps:    []model.Step{{Clock: 0, At: 5 * algos.Second, By: 60 * algos.Second}, {Clock: 2, At: 9 * algos.Second, By: -60 * algos.Second}},
	}
	for _, a := range algos.All() {
		for _, d := range []model.Deployment{model.StoreClock, model.NodeClock} {
			cfg := tableConfig(a, d, 7, reqs)
			clean := digest(mustRun(t, cfg))
			cfg.Clocks = nodeFaults
			faulted := digest(mustRun(t, cfg))
			if (clean == faulted) != (d == model.StoreClock) {
				t.Errorf("%s %s: the node clocks' faults changed the run: %t", a.Name, d, clean != faulted)
			}
		}
	}
}

// A store step forward is a fresh window for the fixed window: the flood's
// admits right after it exceed the promise, judged in true time.
func TestStoreStepForwardBreaksTheFixedWindow(t *testing.T) {
	reqs := traffic(3, 20*algos.Second)
	cfg := tableConfig(algos.FixedWindow, model.StoreClock, 7, reqs)
	if r := mustRun(t, cfg); r.Violations() != 0 {
		t.Fatalf("without a step the store-clock fixed window broke its promise %d times", r.Violations())
	}
	cfg.Clocks.Steps = []model.Step{{Clock: model.StoreClockStep, At: 10*algos.Second + 300_000, By: 700_000}}
	if r := mustRun(t, cfg); r.Violations() == 0 {
		t.Error("a store step of 0.7 s into the next window broke nothing")
	}
}

func TestBadClocks(t *testing.T) {
	for _, c := range []struct {
		clocks model.Clocks
		want   string
	}{
		{model.Clocks{DriftPPM: []int64{1, 2}}, "2 drifts for 4 nodes"},
		{model.Clocks{DriftPPM: []int64{0, 0, 0, 200_000}}, "node 3 drifts 200000 ppm"},
		{model.Clocks{Steps: []model.Step{{Clock: 4, At: 1, By: 1}}}, "step 0 is of clock 4"},
		{model.Clocks{Steps: []model.Step{{Clock: -2, At: 1, By: 1}}}, "step 0 is of clock -2"},
		{model.Clocks{Steps: []model.Step{{Clock: 0, At: -1, By: 1}}}, "outside the run"},
		{model.Clocks{Steps: []model.Step{{Clock: 0, At: 1, By: algos.MaxTime}}}, "too large"},
	} {
		cfg := tableConfig(algos.TokenBucket, model.NodeClock, 1, []record.Request{{Key: 0, Sent: 10}})
		cfg.Clocks = c.clocks
		if _, err := model.Run(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.clocks, err, c.want)
		}
	}
}
