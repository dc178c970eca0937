package limiter_test

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// For every algorithm, a request of cost n is n unit requests at one
// instant, whole or not at all: admitted exactly when n unit requests at
// that instant would all be admitted, leaving the same state; refused
// otherwise, leaving the state as if it had never been asked. Cells always
// equals the cells of the states the keys hold, counted afresh.
func TestAllowWeighedIsCostUnitsWholeOrNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SampledFrom(algos.All()).Draw(t, "algorithm")
		l := algos.MustLimit(rapid.Int64Range(1, 8).Draw(t, "rate"), rapid.Int64Range(1, 50).Draw(t, "window"), rapid.Int64Range(1, 8).Draw(t, "burst"))
		weighed, _ := limiter.NewMemory(a, l)
		units, _ := limiter.NewMemory(a, l) // the reference: unit calls, undone on refusal by replaying
		var history []struct {
			key       int
			now, cost int64
		}
		now := int64(0)
		ctx := context.Background()
		for i := range rapid.IntRange(1, 40).Draw(t, "requests") {
			now += rapid.Int64Range(0, 30).Draw(t, "gap")
			key := rapid.IntRange(0, 2).Draw(t, "key")
			cost := rapid.Int64Range(1, 5).Draw(t, "cost")
			got, err := weighed.AllowWeighed(ctx, key, now, limiter.Weight{Cost: cost})
			if err != nil {
				t.Fatal(err)
			}
			// Would cost unit calls now, on the reference, all be admitted?
			trial, _ := limiter.NewMemory(a, l)
			replay(t, trial, history)
			all := true
			for range cost {
				d, _ := trial.Allow(ctx, key, now)
				all = all && d.Allowed
			}
			if got.Allowed != all {
				t.Fatalf("request %d: cost %d on key %d at %d: AllowWeighed says %v, %d unit calls say %v", i, cost, key, now, got.Allowed, cost, all)
			}
			if got.Allowed {
				history = append(history, struct {
					key       int
					now, cost int64
				}{key, now, cost})
			}
			units, _ = limiter.NewMemory(a, l)
			replay(t, units, history)
			if weighed.Cells() != units.Cells() {
				t.Fatalf("request %d: Cells %d, but the same admits leave %d", i, weighed.Cells(), units.Cells())
			}
		}
	})
}

func replay(t *rapid.T, m *limiter.Memory, history []struct {
	key       int
	now, cost int64
}) {
	for _, h := range history {
		for range h.cost {
			if d, _ := m.Allow(context.Background(), h.key, h.now); !d.Allowed {
				t.Fatalf("replaying an admitted request of cost %d at %d refused a unit", h.cost, h.now)
			}
		}
	}
}

// A cost below 1 or a negative service time is an error, not a decision.
func TestAllowWeighedRefusesABadWeight(t *testing.T) {
	m, _ := limiter.NewMemory(algos.TokenBucket, l10)
	for _, w := range []limiter.Weight{{Cost: 0}, {Cost: -1}, {Cost: 1, Service: -1}} {
		if _, err := m.AllowWeighed(context.Background(), 0, 0, w); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
}
