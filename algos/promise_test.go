package algos_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// one is 1 per 10 µs with a burst of 2 for the bucket promise.
var one = algos.MustLimit(1, 10, 2)

func TestPromiseEdges(t *testing.T) {
	sliding := algos.SlidingWindowPromise(one)
	aligned := algos.AlignedWindowPromise(one)
	bucket := algos.BucketPromise(one)
	for _, tc := range []struct {
		name  string
		p     algos.Promise
		times []int64
		ok    bool
	}{
		{"sliding: exactly W apart", sliding, []int64{0, 10}, true},
		{"sliding: W-1 apart", sliding, []int64{0, 9}, false},
		{"sliding: same µs", sliding, []int64{5, 5}, false},
		{"sliding: L admits then W later", sliding, []int64{3, 13, 23, 33}, true},
		{"aligned: either side of an edge", aligned, []int64{9, 10}, true},
		{"aligned: first and last µs of one window", aligned, []int64{10, 19}, false},
		{"aligned: negative times floor", aligned, []int64{-1, 0}, true},
		{"aligned: within a negative window", aligned, []int64{-10, -1}, false},
		{"bucket: B at one instant", bucket, []int64{0, 0}, true},
		{"bucket: B+1 at one instant", bucket, []int64{0, 0, 0}, false},
		{"bucket: B, then one W later", bucket, []int64{0, 0, 10}, true},
		{"bucket: B, then one W-1 later", bucket, []int64{0, 0, 9}, false},
		{"bucket: at the rate forever", bucket, []int64{0, 0, 10, 20, 30, 40}, true},
		{"empty", bucket, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.p.CheckAdmits(tc.times)
			if (v == nil) != tc.ok {
				t.Errorf("%s on %v: got %v, want ok=%v", tc.p.Text, tc.times, v, tc.ok)
			}
		})
	}
}

// The reason names the admits, the times and what was promised, in numbers.
func TestViolationReasons(t *testing.T) {
	for _, tc := range []struct {
		p     algos.Promise
		times []int64
		want  algos.Violation
	}{
		{algos.BucketPromise(one), []int64{0, 0, 9}, algos.Violation{From: 0, To: 9, Admits: 3, Allowed: 2,
			Reason: "3 admits from 0.000000s to 0.000009s (9µs), but at most 2 + 1·9µs/10µs = 2 are promised"}},
		{algos.AlignedWindowPromise(one), []int64{10, 19}, algos.Violation{From: 10, To: 19, Admits: 2, Allowed: 1,
			Reason: "2 admits in the aligned window [0.000010s, 0.000020s), but at most 1 are promised"}},
		{algos.SlidingWindowPromise(one), []int64{0, 9}, algos.Violation{From: 0, To: 9, Admits: 2, Allowed: 1,
			Reason: "2 admits from 0.000000s to 0.000009s, within 9µs of each other, but at most 1 in any 10µs are promised"}},
	} {
		v := tc.p.CheckAdmits(tc.times)
		if v == nil || *v != tc.want {
			t.Errorf("%s on %v:\n got %+v\nwant %+v", tc.p.Text, tc.times, v, tc.want)
			continue
		}
		if v.Error() != v.Reason {
			t.Errorf("Error() = %q, want the reason", v.Error())
		}
	}
}

// The bucket checker reports the interval that overflows the most, not the
// first one it meets.
func TestBucketViolationWidestInterval(t *testing.T) {
	// [6, 12] holds 3 where 2.6 are allowed, [0, 12] holds 4 where 3.2 are.
	v := algos.BucketPromise(one).CheckAdmits([]int64{0, 6, 12, 12})
	if v == nil || v.From != 0 || v.To != 12 || v.Admits != 4 || v.Allowed != 3 {
		t.Fatalf("got %+v, want 4 admits in [0, 12] where 3 are allowed", v)
	}
}

func TestCheckUnsortedAndEvents(t *testing.T) {
	p := algos.SlidingWindowPromise(algos.MustLimit(2, 10, 2))
	sorted := []int64{0, 4, 10, 13}
	shuffled := []int64{13, 0, 10, 4}
	keep := slices.Clone(shuffled)
	a, b := p.CheckAdmits(sorted), p.CheckAdmits(shuffled)
	if a == nil || b == nil || *a != *b {
		t.Fatalf("sorted %+v, shuffled %+v: want the same violation", a, b)
	}
	if a.From != 4 || a.To != 13 {
		t.Errorf("violation %+v, want 4, 10 and 13 within 10µs", a)
	}
	if !slices.Equal(shuffled, keep) {
		t.Errorf("CheckAdmits reordered its input: %v", shuffled)
	}
	events := []algos.Event{{13, true}, {0, true}, {10, true}, {4, false}, {12, false}}
	if v := p.Check(events); v != nil {
		t.Errorf("denied events counted: %v", v)
	}
	events[3].Admitted = true
	if v := p.Check(events); v == nil || *v != *a {
		t.Errorf("Check(events) = %+v, want %+v", v, a)
	}
}

func TestZeroPromise(t *testing.T) {
	v := algos.Promise{}.CheckAdmits([]int64{1})
	if v == nil || !strings.Contains(v.Reason, "not built by") {
		t.Errorf("zero Promise: got %v, want a violation saying so", v)
	}
}

// Check is linear on sorted input: sixteen times the admits take about
// sixteen times as long, not 256 times, and no allocation, for each kind.
// The test compares the checker with itself on one machine, never with a
// fixed time. It reads the CPU time of the thread that checked (threadCPU),
// which a busy machine's preemptions do not add to, and takes the least of
// seven rounds, each checking the small input and then the whole, so that
// both sizes meet the same machine. A busy machine still slows a check
// (caches and memory shared with its other work, a sibling hyperthread):
// with both cores busy besides, four times the admits read 10.6x in CPU
// time (19.5x by the wall clock). So the sizes are 16x apart, where
// linear is 16x and quadratic 256x, and the bound is 64x: four times
// linear's room, and a quarter of quadratic's.
func TestCheckIsLinear(t *testing.T) {
	const n, part = 1_000_000, 16
	l := algos.MustLimit(100, algos.Second, 100)
	steady := make([]int64, n) // one admit per 1/L, exactly at the rate
	for i := range steady {
		steady[i] = int64(i) * (algos.Second / 100)
	}
	bursty := make([]int64, n) // L admits at the start of every window
	for i := range bursty {
		bursty[i] = int64(i/100) * algos.Second
	}
	clock := "CPU time"
	// check is the time of one check of times, which must pass.
	check := func(p algos.Promise, times []int64) time.Duration {
		var v *algos.Violation
		took, cpu := threadCPU(func() { v = p.CheckAdmits(times) })
		if v != nil {
			t.Fatalf("%s: %v", p.Text, v)
		}
		if !cpu {
			clock = "wall clock (no thread CPU clock here)"
		}
		return took
	}
	for _, tc := range []struct {
		p     algos.Promise
		times []int64
	}{
		{algos.BucketPromise(l), steady},
		{algos.SlidingWindowPromise(l), steady},
		{algos.AlignedWindowPromise(l), bursty},
		{algos.SlidingWindowPromise(l), bursty},
	} {
		// A sixteenth of the admits is a prefix of the same shape (whole
		// windows of bursty), so the two sizes differ in length alone.
		small, whole := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
		for range 7 {
			small = min(small, check(tc.p, tc.times[:n/part]))
			whole = min(whole, check(tc.p, tc.times))
		}
		ratio := float64(whole) / float64(max(small, time.Microsecond))
		t.Logf("%s: %d admits %v, %d admits %v (%s): %.1fx", tc.p.Text, n/part, small, n, whole, clock, ratio)
		if ratio > 4*part {
			t.Errorf("%s: %d admits took %v, %d took %v (%s): %.1fx for %dx the admits, want linear (at most %dx)",
				tc.p.Text, n/part, small, n, whole, clock, ratio, part, 4*part)
		}
		if allocs := testing.AllocsPerRun(2, func() { tc.p.CheckAdmits(tc.times) }); allocs != 0 {
			t.Errorf("%s: %v allocations on sorted input, want 0", tc.p.Text, allocs)
		}
	}
}

func TestMostInAnyWindow(t *testing.T) {
	for _, tc := range []struct {
		times []int64
		span  int64
		want  int
	}{
		{nil, 10, 0},
		{[]int64{0, 10}, 10, 1},
		{[]int64{0, 9}, 10, 2},
		{[]int64{0, 5, 5, 14, 20}, 10, 3},
	} {
		if got := algos.MostInAnyWindow(tc.times, tc.span); got != tc.want {
			t.Errorf("MostInAnyWindow(%v, %d) = %d, want %d", tc.times, tc.span, got, tc.want)
		}
	}
}

// A promise built on a zero limit is reported, not a division by zero.
func TestPromiseOnAZeroLimitIsAViolationThatSaysWhy(t *testing.T) {
	for _, p := range []algos.Promise{algos.BucketPromise(algos.Limit{}), algos.AlignedWindowPromise(algos.Limit{}), algos.SlidingWindowPromise(algos.Limit{})} {
		v := p.CheckAdmits([]int64{0, 1})
		if v == nil || !strings.Contains(v.Reason, "must be positive") {
			t.Errorf("%v: want a violation saying the limit must be positive", v)
		}
	}
}

// A promise says which of the four built-in promises it is, and for which
// limit, however its text reads: a promise of one's own in a bucket's words
// is still one's own.
func TestPromiseShapeIsTheConstructorsNotTheText(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 20)
	for _, c := range []struct {
		p    algos.Promise
		want algos.PromiseShape
	}{
		{algos.BucketPromise(l), algos.BucketShape},
		{algos.AlignedWindowPromise(l), algos.AlignedWindowShape},
		{algos.SlidingWindowPromise(l), algos.SlidingWindowShape},
		{algos.AnchoredWindowPromise(l), algos.AnchoredWindowShape},
	} {
		if shape, made := c.p.Shape(); shape != c.want || made != l {
			t.Errorf("%q: shape %d for %v, want %d for %v", c.p.Text, shape, made, c.want, l)
		}
	}
	own := algos.NewPromise(algos.BucketPromise(l).Text, func([]int64) *algos.Violation { return nil })
	if shape, made := own.Shape(); shape != algos.OwnShape || made != (algos.Limit{}) {
		t.Errorf("a promise of one's own in a bucket's words: shape %d for %v, want OwnShape", shape, made)
	}
	if shape, _ := (algos.Promise{}).Shape(); shape != algos.OwnShape {
		t.Errorf("the zero Promise: shape %d, want OwnShape", shape)
	}
}
