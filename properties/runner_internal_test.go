package properties

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// slowToShrink fails on any case whose 16 numbers add up to 1000 or more,
// and takes 5 ms a case: rapid shrinks it by trying each number smaller,
// keeping the sum, to a sum of exactly 1000 in some 470 cases and 3 s
// (measured). slowCases counts the cases it ran.
var slowCases atomic.Int64

func slowToShrink(t *rapid.T) {
	slowCases.Add(1)
	sum := 0
	for range 16 {
		sum += rapid.IntRange(0, 1_000_000).Draw(t, "x")
	}
	time.Sleep(5 * time.Millisecond)
	if sum >= 1000 {
		t.Fatalf("the sum is %d", sum)
	}
}

// The bound stops shrinking, and the failure is still reported, neither
// lost nor flaky, with the smallest case found by then replayed (its own
// message after "Failed test output"): a bound of 50 ms stops it after a
// fraction of the cases that shrinking to the end runs. The
// claim is judged on the cases run, which a busy machine can only lower
// (each takes longer, so fewer fit the bound), and not on the time taken:
// under make test -p 4 with both cores busy, the same 50 ms once took 4 s.
func TestShrinkingStopsAtTheBound(t *testing.T) {
	const mostCases = 200 // under half of shrinking to the end (some 470); 29 measured
	start := time.Now()
	before := slowCases.Load()
	failed, report := fails(slowToShrink, 100, 50*time.Millisecond)
	took, cases := time.Since(start), slowCases.Load()-before
	_, replay, _ := strings.Cut(report, "Failed test output:")
	if !failed || !strings.Contains(replay, "the sum is") || strings.Contains(report, "flaky") {
		t.Fatalf("failed %v; want the smallest case found replayed, failing:\n%s", failed, report)
	}
	if cases > mostCases {
		t.Errorf("%d cases run with a bound of 50 ms (in %v), want at most %d", cases, took, mostCases)
	}
	first, _, _ := strings.Cut(report, "\n")
	t.Logf("with a bound of 50 ms, %d cases in %v: %s", cases, took.Round(time.Millisecond), first)
}

// Without -rapid.shrinktime or RAPID_SHRINKTIME the bound is
// DefaultShrinkTime, and WithShrinkTime sets it for Check.
func TestShrinkTimeDefault(t *testing.T) {
	if flagValue("rapid.shrinktime") != "30s" {
		t.Skip("-rapid.shrinktime is given")
	}
	if _, ok := os.LookupEnv("RAPID_SHRINKTIME"); ok {
		t.Skip("RAPID_SHRINKTIME is set")
	}
	if got := configure(nil).shrinkBound(); got != DefaultShrinkTime {
		t.Errorf("the bound is %v, want DefaultShrinkTime (%v)", got, DefaultShrinkTime)
	}
	if got := configure([]Option{WithShrinkTime(time.Minute)}).shrinkBound(); got != time.Minute {
		t.Errorf("WithShrinkTime(time.Minute): the bound is %v", got)
	}
}
