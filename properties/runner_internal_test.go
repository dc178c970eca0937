package properties

import (
	"os"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// slowToShrink fails on any case whose 16 numbers add up to 1000 or more,
// and takes 5 ms a case: rapid shrinks it by trying each number smaller,
// keeping the sum, thousands of cases, over 10 s.
func slowToShrink(t *rapid.T) {
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
// message after "Failed test output"): a bound of 50 ms returns within a
// fraction of the 10 s and more that shrinking to the end takes.
func TestShrinkingStopsAtTheBound(t *testing.T) {
	start := time.Now()
	failed, report := fails(slowToShrink, 100, 50*time.Millisecond)
	took := time.Since(start)
	_, replay, _ := strings.Cut(report, "Failed test output:")
	if !failed || !strings.Contains(replay, "the sum is") || strings.Contains(report, "flaky") {
		t.Fatalf("failed %v; want the smallest case found replayed, failing:\n%s", failed, report)
	}
	if took > 3*time.Second {
		t.Errorf("took %v with a bound of 50 ms", took)
	}
	first, _, _ := strings.Cut(report, "\n")
	t.Logf("with a bound of 50 ms, %v: %s", took.Round(time.Millisecond), first)
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
