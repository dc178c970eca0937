package ceiling_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/ceiling"
)

// decide runs buckets token buckets under l (request i on bucket i mod
// buckets) on arrivals every gap µs from 0 to end, none in [holeFrom,
// holeTo), and logs each decision as the deployments do.
func decide(l algos.Limit, buckets int, gap, end, holeFrom, holeTo int64) []ceiling.Decided {
	states := make([]algos.State, buckets)
	var out []ceiling.Decided
	i := 0
	for at := int64(0); at < end; at += gap {
		if at >= holeFrom && at < holeTo {
			continue
		}
		d := algos.TokenBucket.Decide(&states[i%buckets], at, l)
		out = append(out, ceiling.Decided{Node: i % buckets, Told: at, Allowed: d.Allowed, RetryAfter: d.RetryAfter})
		i++
	}
	return out
}

// JudgeBucket reads a token bucket's own rate from its decisions, to a few
// parts in a million, whatever stalls the traffic had; and it reads a
// bucket that refills 5% fast, or three buckets taken for one, as what
// they are.
func TestJudgeBucketReadsTheRateBetweenDenials(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 25)
	// 500/s for 2 s with a stall of 0.6 s in the middle, in which the
	// bucket fills and loses refill: over the whole run it admits 13% less
	// than its rate beyond its burst.
	stalled := decide(l, 1, 2000, 2*algos.Second, 700_000, 1_300_000)
	b := ceiling.JudgeBucket(stalled, l)
	lo, hi := b.Bounds(l)
	t.Logf("stalled: %.6fx to %.6fx, %d admits over %v in %d stretches, %d µs skipped", lo, hi, b.Admitted, b.Judged(), b.Stretches, b.Skipped)
	if lo > 1 || hi < 1 || hi-lo > 1e-4 || b.Stretches != 2 || b.Skipped < 600_000 || b.Admitted < 100 {
		t.Errorf("a correct bucket with a stall: %.6fx to %.6fx, %+v; want 1 within 1e-4, two stretches and the stall skipped", lo, hi, b)
	}

	fast := algos.MustLimit(105, algos.Second, 25)
	lo, hi = ceiling.JudgeBucket(decide(fast, 1, 2000, 2*algos.Second, 0, 0), l).Bounds(l)
	if lo < 1.049 || hi > 1.051 {
		t.Errorf("a bucket refilling at 105/s read against 100/s: %.6fx to %.6fx, want 1.05", lo, hi)
	}

	// Three buckets, as three nodes that each keep their own, read as one
	// shared bucket (the merged log of a fleet): three times the rate.
	merged := decide(l, 3, 700, 2*algos.Second, 0, 0)
	lo, hi = ceiling.JudgeBucket(merged, l).Bounds(l)
	if lo < 2.5 {
		t.Errorf("three buckets read as one: %.3fx to %.3fx, want about 3", lo, hi)
	}
	perNode := make([][]ceiling.Decided, 3)
	for _, d := range merged {
		perNode[d.Node] = append(perNode[d.Node], d)
	}
	var all ceiling.BucketRate
	for _, p := range perNode {
		all = all.Add(ceiling.JudgeBucket(p, l))
	}
	if lo, hi := all.Bounds(l); lo > 1 || hi < 1 || hi-lo > 1e-4 {
		t.Errorf("three buckets each read as its own: %.6fx to %.6fx, want 1", lo, hi)
	}
}

// JudgeWindows finds a window that refused a request before admitting its
// limit, and only that: a window sent fewer than the limit, all admitted,
// is not judged; one sent the limit is.
func TestJudgeWindowsFindsAShortWindow(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	ds := []ceiling.Decided{
		{Told: 10, Allowed: true}, {Told: 20, Allowed: true}, {Told: 30, Allowed: true}, {Told: 40}, // full, then refused
		{Told: algos.Second + 10, Allowed: true},                              // admitted only: not judged
		{Told: 2*algos.Second + 5, Allowed: true}, {Told: 2*algos.Second + 6}, // refused at 1 of 3
	}
	ds = append(ds, ceiling.Decided{Told: 3 * algos.Second, Allowed: true}, ceiling.Decided{Told: 3*algos.Second + 1, Allowed: true},
		ceiling.Decided{Told: 3*algos.Second + 2, Allowed: true}) // the limit, all admitted: judged, and fine
	judged, short := ceiling.JudgeWindows(ds, l)
	if judged != 3 || len(short) != 1 || short[0].Start != 2*algos.Second || short[0].Admitted != 1 {
		t.Errorf("JudgeWindows = %d, %+v; want 3 judged and the third window short at 1", judged, short)
	}
}
