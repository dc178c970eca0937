package traffic_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// bounds is the adversary's tests' bounds: 24 requests within 12 s, at
// most 5 times 8 per second, on 4 nodes.
var bounds = traffic.AttackBoundsFor(algos.MustLimit(8, algos.Second, 4), 12*algos.Second, 24, 5, 4)

// The offered rate bounds a window at MaxRate·L, unless the attack is too
// short to reach it (the adversary's tests' bounds: 24 requests at 5×8).
func TestAttackBoundsForBoundsAWindowByTheOfferedRate(t *testing.T) {
	l := algos.MustLimit(8, algos.Second, 4)
	for _, c := range []struct {
		maxRequests int
		maxRate     int64
		want        int
	}{{24, 5, 24}, {24, 2, 16}, {24, 3, 24}, {100, 5, 40}, {1, 1, 1}} {
		if got := traffic.AttackBoundsFor(l, algos.Second, c.maxRequests, c.maxRate, 1).PerWindow; got != c.want {
			t.Errorf("%d requests at %d× the rate: PerWindow %d, want %d", c.maxRequests, c.maxRate, got, c.want)
		}
	}
}

// randomWaits are n waits of clamped gaps, a third of them bursts (gap 0),
// on nodes [0, nodes).
func randomWaits(rng *rand.Rand, e traffic.AttackBounds, n, nodes int) []traffic.Wait {
	waits := make([]traffic.Wait, n)
	for i := range waits {
		gap := rng.Int64N(e.Duration/4+2) - 1 // -1 too: Wait clamps it
		if rng.IntN(3) == 0 {
			gap = 0
		}
		waits[i] = e.Wait(gap, rng.IntN(nodes))
	}
	return waits
}

// Placed waits are an attack within the bounds, whatever they are: one
// request at least, each waiting its gap or longer, none past the duration,
// no window over PerWindow.
func TestPlaceKeepsEveryAttackWithinItsBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, e := range []traffic.AttackBounds{bounds, {Window: algos.Second, Duration: 3 * algos.Second, MaxRequests: 40, PerWindow: 8, Nodes: 4}, {Window: algos.Second, MaxRequests: 5, PerWindow: 5, Nodes: 4}} {
		for range 500 {
			waits := randomWaits(rng, e, 1+rng.IntN(e.MaxRequests), e.Nodes)
			start := rng.Int64N(e.Duration + 1)
			reqs := e.Place(start, waits)
			if !e.Valid(reqs) {
				t.Fatalf("%+v: placed %v from %d is not within the bounds: %v", e, waits, start, reqs)
			}
			at := start
			for i, r := range reqs {
				at += waits[i].Gap
				if i == 0 && at > e.Duration {
					at = e.Duration
				}
				if r.Sent < at || r.Node != waits[i].Node {
					t.Fatalf("request %d %+v: sent before its gap (%d) or not on its wait's node", i, r, at)
				}
				at = r.Sent
			}
		}
	}
	if got := bounds.Place(bounds.Duration, []traffic.Wait{bounds.Wait(bounds.Duration, 1)}); len(got) != 1 || got[0].Sent != bounds.Duration {
		t.Errorf("a first request past the end: %v, want one at the end", got)
	}
}

// Within keeps a subsequence that is within the bounds, and keeps what
// already is whole.
func TestWithinKeepsAValidSubsequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		reqs := make([]record.Request, 1+rng.IntN(3*bounds.MaxRequests))
		for i := range reqs {
			reqs[i] = record.Request{Sent: rng.Int64N(bounds.Duration + 1), Node: rng.IntN(bounds.Nodes)}
		}
		slices.SortStableFunc(reqs, func(a, b record.Request) int { return cmp.Compare(a.Sent, b.Sent) })
		in := slices.Clone(reqs)
		kept := bounds.Within(reqs)
		if !bounds.Valid(kept) {
			t.Fatalf("Within kept %v, not within the bounds", kept)
		}
		j := 0
		for _, r := range in {
			if j < len(kept) && kept[j] == r {
				j++
			}
		}
		if j != len(kept) {
			t.Fatalf("Within kept %v, not a subsequence of %v", kept, in)
		}
		if again := bounds.Within(slices.Clone(kept)); !slices.Equal(again, kept) {
			t.Fatalf("Within dropped %v from an attack within the bounds", kept)
		}
	}
}

// Each edit does what it says, clamped into the duration, on a copy.
func TestEditAppliesEachKindOnACopy(t *testing.T) {
	d := bounds.Duration
	base := []record.Request{{Sent: 0}, {Sent: 1000, Node: 1}, {Sent: d - 5}}
	orig := slices.Clone(base)
	for _, c := range []struct {
		name string
		edit traffic.Edit
		want []record.Request
	}{
		{"insert", traffic.Edit{Kind: traffic.InsertEdit, At: 1, Wait: bounds.Wait(10, 3)}, []record.Request{{Sent: 0}, {Sent: 1000, Node: 1}, {Sent: 1010, Node: 3}, {Sent: d - 5}}},
		{"insert past the end", traffic.Edit{Kind: traffic.InsertEdit, At: 2, Wait: bounds.Wait(10, 2)}, []record.Request{{Sent: 0}, {Sent: 1000, Node: 1}, {Sent: d - 5}, {Sent: d, Node: 2}}},
		{"move", traffic.Edit{Kind: traffic.MoveEdit, At: 4, Wait: bounds.Wait(5000, 0)}, []record.Request{{Sent: 0}, {Sent: 6000, Node: 1}, {Sent: d - 5}}}, // 4 mod 3 is 1
		{"move back before 0", traffic.Edit{Kind: traffic.MoveEdit, At: 1, Wait: bounds.Wait(5000, 0), Back: true}, []record.Request{{Sent: 0}, {Sent: 0, Node: 1}, {Sent: d - 5}}},
		{"node", traffic.Edit{Kind: traffic.NodeEdit, At: 0, Wait: bounds.Wait(0, 2)}, []record.Request{{Sent: 0, Node: 2}, {Sent: 1000, Node: 1}, {Sent: d - 5}}},
		{"remove", traffic.Edit{Kind: traffic.RemoveEdit, At: 2}, []record.Request{{Sent: 0}, {Sent: 1000, Node: 1}}},
	} {
		if got := bounds.Edit(base, []traffic.Edit{c.edit}); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if !slices.Equal(base, orig) {
			t.Fatalf("%s modified its base", c.name)
		}
	}
	all := make([]traffic.Edit, 3)
	for i := range all {
		all[i] = traffic.Edit{Kind: traffic.RemoveEdit}
	}
	if got := bounds.Edit(base, append(all, traffic.Edit{Kind: traffic.InsertEdit})); len(got) != 0 {
		t.Errorf("edits after the last request was removed: %v", got)
	}
}

// Valid refuses each way out of the bounds.
func TestValidRefusesEachWayOutOfTheBounds(t *testing.T) {
	e := traffic.AttackBounds{Window: 1000, Duration: 10_000, MaxRequests: 4, PerWindow: 2, Nodes: 2}
	ok := []record.Request{{Sent: 0}, {Sent: 0, Node: 1}, {Sent: 1000}, {Sent: 10_000}}
	if !e.Valid(ok) {
		t.Fatalf("%v refused", ok)
	}
	for name, bad := range map[string][]record.Request{
		"empty":           nil,
		"too many":        append(slices.Clone(ok), record.Request{Sent: 10_000}),
		"another key":     {{Sent: 0, Key: 1}},
		"before 0":        {{Sent: -1}},
		"after the end":   {{Sent: 10_001}},
		"no such node":    {{Sent: 0, Node: 2}},
		"negative node":   {{Sent: 0, Node: -1}},
		"out of order":    {{Sent: 5}, {Sent: 4}},
		"window too full": {{Sent: 0}, {Sent: 1}, {Sent: 999}},
	} {
		if e.Valid(bad) {
			t.Errorf("%s: %v accepted", name, bad)
		}
	}
}
