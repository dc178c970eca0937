package study

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
)

// The replay decides in Redis's order (seq), not in the order planned, and counts
// every decision the Go twin takes otherwise.
func TestReplayFollowsRedisOrderAndCountsDifferences(t *testing.T) {
	l := algos.MustLimit(1, algos.Second, 1)
	// The first planned request ran second in Redis, the second first: the
	// twin admits the first to run (seq 1) and denies the other.
	decided := []liveDecision{{seq: 2, at: 10, allowed: false}, {seq: 1, at: 10, allowed: true}}
	all, differences, err := decideAgainInRedisOrder(algos.FixedWindow, l, decided)
	if err != nil {
		t.Fatal(err)
	}
	if differences != 0 || all[0].seq != 1 || !all[0].twin || all[1].twin {
		t.Errorf("replayed %+v with %d differences, want seq 1 admitted, seq 2 denied, none different", all, differences)
	}
	// Redis admitting both is one decision the twin does not take.
	decided[0].allowed = true
	if _, differences, _ := decideAgainInRedisOrder(algos.FixedWindow, l, decided); differences != 1 {
		t.Errorf("%d differences, want 1", differences)
	}
	if _, _, err := decideAgainInRedisOrder(algos.Algorithm{Name: "no-decide"}, l, decided); err == nil {
		t.Error("replay through an algorithm without Decide succeeded")
	}
}
