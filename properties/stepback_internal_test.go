package properties

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// stepBackKeepsRemaining is the literal claim "remaining never drops by
// more than the one admitted request across a backward step": the first
// call after the step reports at least the remaining of the last call
// before it, less one if admitted. It is not in the contract because it is
// not true of every correct algorithm: GCRA's TAT - now and the sliding
// counter's weight of the previous window both grow when now moves back.
// This test records which keep it.
func stepBackKeepsRemaining(spec limiter.Spec) func(*rapid.T) {
	c := configure(nil)
	return func(t *rapid.T) {
		e := drawEpisode(t, spec, c)
		if len(e.calls) == 0 || len(e.behind) == 0 {
			return
		}
		before, first := e.calls[len(e.calls)-1].d, e.behind[0].d
		floor := before.Remaining
		if first.Allowed {
			floor--
		}
		if first.Remaining < floor {
			t.Fatalf("%s\nremaining %d before the step, %d right after it", e.describe(), before.Remaining, first.Remaining)
		}
	}
}

func TestStepBackRemainingDropIsNotUniversal(t *testing.T) {
	t.Parallel()
	keeps := map[string]bool{algos.TokenBucket.Name: true, algos.LeakyBucket.Name: true, algos.FixedWindow.Name: true, algos.SlidingLog.Name: true}
	for _, algo := range algos.All() {
		t.Run(algo.Name, func(t *testing.T) {
			failed, report := Fails(stepBackKeepsRemaining(limiter.FromAlgorithm(algo)), 1000)
			if failed == keeps[algo.Name] {
				t.Fatalf("failed = %v, want %v:\n%s", failed, !keeps[algo.Name], report)
			}
			if failed && algo.Name == algos.GCRA.Name {
				t.Logf("GCRA seen from an earlier instant:\n%s", report)
			}
		})
	}
}
