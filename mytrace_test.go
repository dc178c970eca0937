package overshoot_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/capacity"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/traffic"
)

// The CI gate of docs/capacity.md, as a user writes it: the tightest per-key limit a
// second, from 10 to 100, that refuses at most 1% of a recorded trace
// (testdata/production.csv: five minutes of twelve accounts at epoch
// times, costs of 1 to 3). The test fails, with the table, when no limit
// in the range fits.
func TestMyTraceFitsALimit(t *testing.T) {
	tr, _, err := traffic.ReadFile("testdata/production.csv")
	if err != nil {
		t.Fatal(err)
	}
	capacity.RequireFits(t, capacity.Sweep{
		Trace:     tr,
		Parameter: "limit",
		Setting:   capacity.Limits(limiter.FromAlgorithm(algos.SlidingCounter), algos.Second),
		Values:    capacity.Range(10, 100, 10),
		Budget:    0.01,
	})
}
