package properties_test

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/differential"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
	"pgregory.net/rapid"
)

var (
	slidingCounter = limiter.FromAlgorithm(algos.SlidingCounter)
	wrongWeight    = limiter.FromAlgorithm(planted.SlidingCounterWrongWeight)
)

// The property fails on the planted wrong-weight counter against the real
// one, with a bound of one admit each way, and rapid shrinks it to a small
// case; it passes for the real counter against itself with no slack at
// all. The promise property, on the same planted counter, passes: its
// promise cannot see the bug.
func TestAgreesWithCatchesThePlantedWrongWeight(t *testing.T) {
	failed, report := properties.Fails(properties.AgreesWith(wrongWeight, slidingCounter, differential.Bound{Over: 1, Under: 1}), 1000)
	if !failed {
		t.Fatal("the differential property passed the planted wrong-weight counter")
	}
	for _, want := range []string{"[rapid] failed", "[rapid] draw limit: algos.Limit{", "planted-sliding-counter-wrong-weight admitted", "the bound is 1"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	t.Logf("the shrunk counterexample:\n%s", report)

	if failed, report := properties.Fails(properties.PromiseHolds(wrongWeight), 1000); failed {
		t.Errorf("the planted counter broke its promise, which it must keep:\n%s", report)
	}
}

func TestAgreesWithPassesALimiterAgainstItself(t *testing.T) {
	rapid.Check(t, properties.AgreesWith(slidingCounter, slidingCounter, differential.Bound{}))
	rapid.Check(t, properties.AgreesWith(wrongWeight, wrongWeight, differential.Bound{}))
}
