package algos_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/properties"
	"pgregory.net/rapid"
)

// The fast checks in checker.go are linear and clever (a meter with a
// walk-back, one running count, a two-finger scan). Here each is held to a
// brute force that is slow and plainly right: it counts the admits in every
// interval the promise speaks of, in exact integers, and knows nothing of
// the checks' arithmetic.

// checkFunc is a promise check under test: the first violation among the
// sorted admit times, or nil.
type checkFunc func(times []int64, l algos.Limit) *algos.Violation

// promiseKind is one promise as the brute force reads it.
type promiseKind struct {
	name    string
	promise func(algos.Limit) algos.Promise
	// breaks returns an interval of admits that breaks the promise, by
	// counting every interval the promise speaks of, or nil.
	breaks func(l algos.Limit, times []int64) *interval
	// judge counts the admits in [from, to] and says how many the promise
	// allows there, and whether that breaks it; spoken is false when the
	// promise says nothing about [from, to] alone (it spans two aligned
	// windows, or is W or longer for the sliding promise).
	judge func(l algos.Limit, times []int64, from, to int64) (count, allowed int64, broken, spoken bool)
	// worstFrom, when set, is the start of the interval ending at to that
	// overflows the most (the latest such start on a tie): the one the
	// check must report.
	worstFrom func(l algos.Limit, times []int64, to int64) int64
}

// interval is [from, to] holding count admits.
type interval struct{ from, to, count int64 }

func (w interval) String() string { return fmt.Sprintf("[%d, %d] holding %d", w.from, w.to, w.count) }

// countIn is how many of times lie in the closed interval [from, to].
func countIn(times []int64, from, to int64) int64 {
	var n int64
	for _, t := range times {
		if from <= t && t <= to {
			n++
		}
	}
	return n
}

// bucketBreaks is B + L·Δ/W compared as count·W > B·W + L·Δ, so nothing is
// rounded.
func bucketBreaks(l algos.Limit, count, delta int64) bool {
	return count*l.Window > l.Burst*l.Window+l.Rate*delta
}

// alignedStart is k·W with k·W <= t < (k+1)·W, found by stepping k until
// both hold, so negative times need no rounding rule.
func alignedStart(t, w int64) int64 {
	k := t / w
	for k*w > t {
		k--
	}
	for (k+1)*w <= t {
		k++
	}
	return k * w
}

var (
	bucket = promiseKind{
		name:    "bucket",
		promise: algos.BucketPromise,
		// Every pair of admits i <= j bounds an interval [t_i, t_j].
		breaks: func(l algos.Limit, times []int64) *interval {
			for _, from := range times {
				for _, to := range times {
					if from <= to {
						if n := countIn(times, from, to); bucketBreaks(l, n, to-from) {
							return &interval{from, to, n}
						}
					}
				}
			}
			return nil
		},
		judge: func(l algos.Limit, times []int64, from, to int64) (int64, int64, bool, bool) {
			n := countIn(times, from, to)
			return n, l.Burst + l.Rate*(to-from)/l.Window, bucketBreaks(l, n, to-from), true
		},
		worstFrom: func(l algos.Limit, times []int64, to int64) int64 {
			// The excess over the promise, times W, is count·W - L·Δ - B·W.
			var best, bestFrom int64
			found := false
			for _, from := range times {
				if from <= to {
					excess := countIn(times, from, to)*l.Window - l.Rate*(to-from)
					if !found || excess > best || excess == best && from > bestFrom {
						best, bestFrom, found = excess, from, true
					}
				}
			}
			return bestFrom
		},
	}
	aligned = promiseKind{
		name:    "aligned window",
		promise: algos.AlignedWindowPromise,
		// Every aligned window that holds an admit, [k·W, (k+1)·W).
		breaks: func(l algos.Limit, times []int64) *interval {
			for _, t := range times {
				start := alignedStart(t, l.Window)
				if n := countIn(times, start, start+l.Window-1); n > l.Rate {
					return &interval{start, start + l.Window - 1, n}
				}
			}
			return nil
		},
		judge: func(l algos.Limit, times []int64, from, to int64) (int64, int64, bool, bool) {
			n := countIn(times, from, to)
			spoken := alignedStart(from, l.Window) == alignedStart(to, l.Window)
			return n, l.Rate, spoken && n > l.Rate, spoken
		},
	}
	sliding = promiseKind{
		name:    "sliding window",
		promise: algos.SlidingWindowPromise,
		// Every window [s, s+W) that starts at an admit (any window can
		// slide right to its first admit without losing one).
		breaks: func(l algos.Limit, times []int64) *interval {
			for _, s := range times {
				if n := countIn(times, s, s+l.Window-1); n > l.Rate {
					return &interval{s, s + l.Window - 1, n}
				}
			}
			return nil
		},
		judge: func(l algos.Limit, times []int64, from, to int64) (int64, int64, bool, bool) {
			n := countIn(times, from, to)
			spoken := to-from < l.Window
			return n, l.Rate, spoken && n > l.Rate, spoken
		},
	}
	kinds = []promiseKind{bucket, aligned, sliding}
)

// fast is the shipped check for a promise, through its public entry point.
func (k promiseKind) fast() checkFunc {
	return func(times []int64, l algos.Limit) *algos.Violation { return k.promise(l).CheckAdmits(times) }
}

// disagreement compares check with the brute force on one sorted admit set
// and says how they differ, or returns "". They must agree on whether the
// promise is broken; a reported violation must be one by the brute force's
// own count, end at the first admit that breaks the promise, and say
// honestly how many admits it saw and how many were allowed.
func disagreement(k promiseKind, check checkFunc, l algos.Limit, times []int64) string {
	v, broken := check(times, l), k.breaks(l, times)
	switch {
	case v == nil && broken == nil:
		return ""
	case v == nil:
		return fmt.Sprintf("the check found nothing, but %v breaks the promise", broken)
	case broken == nil:
		return fmt.Sprintf("the check reported %+v, but no interval breaks the promise", *v)
	}
	count, allowed, bad, spoken := k.judge(l, times, v.From, v.To)
	switch {
	case v.From > v.To || countIn(times, v.From, v.From) == 0 || countIn(times, v.To, v.To) == 0:
		return fmt.Sprintf("the check reported %+v: From and To must be admits, in order", *v)
	case !spoken:
		return fmt.Sprintf("the check reported %+v, an interval the promise says nothing about", *v)
	case !bad:
		return fmt.Sprintf("the check reported %+v, but [%d, %d] holds %d admits where %d are allowed: no violation", *v, v.From, v.To, count, allowed)
	case v.Allowed != allowed:
		return fmt.Sprintf("the check reported %+v, but the promise allows %d in [%d, %d]", *v, allowed, v.From, v.To)
	case v.Admits <= v.Allowed || v.Admits > count:
		return fmt.Sprintf("the check reported %+v, but [%d, %d] holds %d admits: Admits must be above Allowed and at most that", *v, v.From, v.To, count)
	case v.Reason == "":
		return fmt.Sprintf("the check reported %+v without a reason", *v)
	}
	var before []int64
	for _, t := range times {
		if t < v.To {
			before = append(before, t)
		}
	}
	if w := k.breaks(l, before); w != nil {
		return fmt.Sprintf("the check reported %+v, but the admits before %d already break the promise: %v", *v, v.To, w)
	}
	if k.worstFrom != nil {
		if from := k.worstFrom(l, times, v.To); from != v.From {
			return fmt.Sprintf("the check reported %+v, but the interval ending at %d that overflows the most starts at %d", *v, v.To, from)
		}
	}
	return ""
}

// mostDisagreement compares most with a brute-force MostInAnyWindow: every
// window [s, s+span) that starts at an admit.
func mostDisagreement(most func([]int64, int64) int, times []int64, span int64) string {
	want := int64(0)
	for _, s := range times {
		want = max(want, countIn(times, s, s+span-1))
	}
	if got := most(times, span); int64(got) != want {
		return fmt.Sprintf("%d in one window of %dµs, but the brute force counts %d", got, span, want)
	}
	return ""
}

// smallLimits draws 1 to 4 requests per 1 to 12 µs (now and then per 60 µs
// or 1 ms) with bursts of 1 to 5: small enough that a few dozen admits both
// break and keep each promise often.
func smallLimits() *rapid.Generator[algos.Limit] {
	return rapid.Custom(func(t *rapid.T) algos.Limit {
		rate := rapid.Int64Range(1, 4).Draw(t, "rate")
		window := rapid.OneOf(rapid.Int64Range(1, 12), rapid.SampledFrom([]int64{60, 1000})).Draw(t, "window")
		burst := rapid.Int64Range(1, 5).Draw(t, "burst")
		return algos.MustLimit(rate, window, burst)
	})
}

// admitSets draws up to 32 sorted admit times starting around 0 (negative
// times included) or anywhere in ±MaxTime, with gaps that land on the
// edges: none, 1 µs, W and W±1, the emission interval ⌈W/L⌉ and ±1, onto
// and either side of the next aligned edge, anything up to 2·W, and idle
// spells.
func admitSets(l algos.Limit) *rapid.Generator[[]int64] {
	return rapid.Custom(func(t *rapid.T) []int64 {
		w := l.Window
		emission := (w + l.Rate - 1) / l.Rate
		now := rapid.OneOf(rapid.Int64Range(-3*w, 3*w), rapid.Int64Range(-algos.MaxTime, algos.MaxTime)).Draw(t, "start")
		n := rapid.IntRange(0, 32).Draw(t, "n")
		times := make([]int64, 0, n)
		for range n {
			nudge := rapid.Int64Range(-1, 1).Draw(t, "nudge")
			var gap int64
			switch rapid.IntRange(0, 9).Draw(t, "gap") {
			case 0, 1:
				gap = 0
			case 2:
				gap = 1
			case 3:
				gap = w + nudge
			case 4:
				gap = emission + nudge
			case 5:
				gap = rapid.Int64Range(2, 3).Draw(t, "emissions") * emission
			case 6:
				gap = alignedStart(now, w) + w - now + nudge
			case 7, 8:
				gap = rapid.Int64Range(0, 2*w).Draw(t, "within")
			default:
				gap = rapid.Int64Range(3*w, 3600*algos.Second).Draw(t, "idle")
			}
			now += max(0, gap)
			times = append(times, now)
		}
		return times
	})
}

// agreement checks one drawn case and reports whether the brute force
// found the promise broken.
func agreement(t *rapid.T, k promiseKind, check checkFunc) (broken bool) {
	l := smallLimits().Draw(t, "limit")
	times := admitSets(l).Draw(t, "admits")
	if d := disagreement(k, check, l, times); d != "" {
		t.Fatalf("%s promise, %v, admits %v: %s", k.name, l, times, d)
	}
	return k.breaks(l, times) != nil
}

// agreesWithBruteForce is the property: check, judging promise k, agrees
// with the brute force on a random admit set and a small limit.
func agreesWithBruteForce(k promiseKind, check checkFunc) func(*rapid.T) {
	return func(t *rapid.T) { agreement(t, k, check) }
}

// mostAgreesWithBruteForce is the property for MostInAnyWindow (or a
// stand-in for it).
func mostAgreesWithBruteForce(most func([]int64, int64) int) func(*rapid.T) {
	return func(t *rapid.T) {
		l := smallLimits().Draw(t, "limit")
		times := admitSets(l).Draw(t, "admits")
		span := rapid.Int64Range(1, 3*l.Window).Draw(t, "span")
		if d := mostDisagreement(most, times, span); d != "" {
			t.Fatalf("admits %v: %s", times, d)
		}
	}
}

// Each fast check agrees with counting every interval, and the cases drawn
// are not one-sided: a good share keep the promise and a good share break
// it, so both the "nothing found" and the "this interval" paths are held to
// the count.
func TestFastCheckersAgreeWithBruteForceOverEveryInterval(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var cases, broken int
			rapid.Check(t, func(rt *rapid.T) {
				b := agreement(rt, k, k.fast())
				cases++
				if b {
					broken++
				}
			})
			t.Logf("%d admit sets, %d breaking the promise", cases, broken)
			if broken < cases/10 || cases-broken < cases/10 {
				t.Errorf("%d of %d admit sets break the %s promise: the draws should give both outcomes at least 10%% of the time", broken, cases, k.name)
			}
		})
	}
	t.Run("most in any window", rapid.MakeCheck(mostAgreesWithBruteForce(algos.MostInAnyWindow)))
}

// everySmallCase runs judge on every sorted admit set of up to 4 admits in
// [-5, 5] µs, under every limit of 1 to 3 requests per 1 to 5 µs with a
// burst of 1 to 3, and returns how many cases it judged and the first
// disagreement (or "").
func everySmallCase(judge func(l algos.Limit, times []int64) string) (cases int, first string) {
	var sets [][]int64
	var grow func(prefix []int64, lowest int64)
	grow = func(prefix []int64, lowest int64) {
		sets = append(sets, append([]int64(nil), prefix...))
		if len(prefix) == 4 {
			return
		}
		for t := lowest; t <= 5; t++ {
			grow(append(prefix, t), t)
		}
	}
	grow(nil, -5)
	for rate := int64(1); rate <= 3; rate++ {
		for window := int64(1); window <= 5; window++ {
			for burst := int64(1); burst <= 3; burst++ {
				l := algos.MustLimit(rate, window, burst)
				for _, times := range sets {
					cases++
					if d := judge(l, times); d != "" {
						return cases, fmt.Sprintf("%v, admits %v: %s", l, times, d)
					}
				}
			}
		}
	}
	return cases, ""
}

// Small scope, no sampling: on every admit set of up to 4 admits in 11 µs
// around 0 and every small limit, each fast check agrees with the brute
// force, and so does MostInAnyWindow for every span of 1 to 6 µs.
func TestFastCheckersAgreeWithBruteForceOnEverySmallAdmitSet(t *testing.T) {
	for _, k := range kinds {
		cases, d := everySmallCase(func(l algos.Limit, times []int64) string {
			return disagreement(k, k.fast(), l, times)
		})
		if d != "" {
			t.Errorf("%s promise, case %d: %s\n(no sampling: rerun with -run='^%s$' to see it again)", k.name, cases, d, t.Name())
		}
	}
	cases, d := everySmallCase(func(l algos.Limit, times []int64) string {
		for span := int64(1); span <= 6; span++ {
			if d := mostDisagreement(algos.MostInAnyWindow, times, span); d != "" {
				return d
			}
		}
		return ""
	})
	if d != "" {
		t.Errorf("MostInAnyWindow, case %d: %s\n(no sampling: rerun with -run='^%s$' to see it again)", cases, d, t.Name())
	}
	t.Logf("%d cases per promise", cases)
}

// requireCaught runs prop, written for a planted wrong check, and fails
// unless rapid finds a counterexample and shrinks it; the report (the
// failure and the draws that make it) goes to the test log.
func requireCaught(t *testing.T, prop func(*rapid.T)) {
	t.Helper()
	failed, report := properties.Fails(prop, 1000)
	if !failed {
		t.Fatal("the property passed 1000 cases: the planted bug went unnoticed")
	}
	for _, want := range []string{"[rapid] failed after", "[rapid] draw limit: algos.Limit{", "[rapid] draw admits: []int64{"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	t.Logf("caught:\n%s", report)
}

// A bucket check that judges [t_i, t_j] as if it were one µs shorter, and a
// sliding check whose window is one µs short, each disagree with the count.
func TestBruteForceCatchesACheckerOneMicrosecondShort(t *testing.T) {
	t.Run("bucket", func(t *testing.T) {
		requireCaught(t, agreesWithBruteForce(bucket, algos.PlantedCheckBucketOneMicrosecondShort))
	})
	t.Run("sliding window", func(t *testing.T) {
		requireCaught(t, agreesWithBruteForce(sliding, algos.PlantedCheckSlidingWindowOneMicrosecondShort))
	})
}

// An aligned check whose edges are one µs late, and one that rounds
// negative times toward zero, each disagree with the count.
func TestBruteForceCatchesAnAlignedCheckerOffByOne(t *testing.T) {
	t.Run("edge one µs late", func(t *testing.T) {
		requireCaught(t, agreesWithBruteForce(aligned, algos.PlantedCheckAlignedEdgeOneMicrosecondLate))
	})
	t.Run("negative times truncated", func(t *testing.T) {
		requireCaught(t, agreesWithBruteForce(aligned, algos.PlantedCheckAlignedTruncatesNegativeTimes))
	})
}

// A MostInAnyWindow that counts a closed window disagrees with the count.
func TestBruteForceCatchesAMostInAnyWindowOneMicrosecondLong(t *testing.T) {
	requireCaught(t, mostAgreesWithBruteForce(algos.PlantedMostInAnyWindowOneMicrosecondLong))
}

// The small-scope sweep catches every planted check too, without sampling.
func TestEverySmallAdmitSetCatchesEachPlantedChecker(t *testing.T) {
	for _, p := range []struct {
		name  string
		k     promiseKind
		check checkFunc
	}{
		{"bucket one µs short", bucket, algos.PlantedCheckBucketOneMicrosecondShort},
		{"sliding window one µs short", sliding, algos.PlantedCheckSlidingWindowOneMicrosecondShort},
		{"aligned edge one µs late", aligned, algos.PlantedCheckAlignedEdgeOneMicrosecondLate},
		{"aligned negative times truncated", aligned, algos.PlantedCheckAlignedTruncatesNegativeTimes},
	} {
		cases, d := everySmallCase(func(l algos.Limit, times []int64) string { return disagreement(p.k, p.check, l, times) })
		if d == "" {
			t.Errorf("%s: %d small cases, no disagreement", p.name, cases)
			continue
		}
		t.Logf("%s: caught at case %d: %s", p.name, cases, d)
	}
	cases, d := everySmallCase(func(l algos.Limit, times []int64) string {
		return mostDisagreement(algos.PlantedMostInAnyWindowOneMicrosecondLong, times, l.Window)
	})
	if d == "" {
		t.Errorf("most in any window one µs long: %d small cases, no disagreement", cases)
	} else {
		t.Logf("most in any window one µs long: caught at case %d: %s", cases, d)
	}
}
