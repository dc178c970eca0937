package study

import (
	"testing"
	"time"
)

// A refusal is within the limit when fewer than L admits precede it in
// Redis's order, or when an optimistic budget ran out; a refusal carrying no
// order counts only if it is an exhaustion.
func TestRefusedWithinLimitCountsRefusalsBeforeTheLthAdmit(t *testing.T) {
	admit := func(seq int64) Ruling { return Ruling{Allowed: true, Seq: seq} }
	refuse := func(seq int64) Ruling { return Ruling{Refusal: AtLimit, Seq: seq} }
	rulings := []Ruling{admit(1), refuse(2), admit(3), refuse(4), refuse(5), {Refusal: Exhausted}, {Refusal: AtLimit}}
	// L = 2: refusal 2 comes after one admit (within); 4 and 5 after two.
	if got := RefusedWithinLimit(rulings, 2); got != 2 {
		t.Errorf("L=2: %d refusals within the limit, want 2 (seq 2 and the exhausted one)", got)
	}
	if got := RefusedWithinLimit(rulings, 3); got != 4 {
		t.Errorf("L=3: %d refusals within the limit, want 4 (seq 2, 4, 5 and the exhausted one)", got)
	}
}

func TestQuantileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 1: 100, 0: 1} {
		if got := quantile(d, q); got != want {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
}
