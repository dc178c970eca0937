package properties_test

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
	"pgregory.net/rapid"
)

// countingLimits draws the one limit l and counts its draws: every
// property draws its limit once a case (Check runs the properties at once).
func countingLimits(l algos.Limit, n *atomic.Int64) *rapid.Generator[algos.Limit] {
	return rapid.Custom(func(t *rapid.T) algos.Limit { n.Add(1); return rapid.Just(l).Draw(t, "l") })
}

// WithChecks(7) runs exactly 7 cases of every property, not a whole run of
// rapid's 100, and every Property's Checks is 7.
func TestWithChecksRunsExactlyThatMany(t *testing.T) {
	spec := limiter.FromAlgorithm(algos.GCRA)
	l := algos.MustLimit(3, 20, 4)
	var drawn atomic.Int64
	opts := []properties.Option{properties.WithLimits(countingLimits(l, &drawn)), properties.WithChecks(7)}
	props := properties.Properties(spec, opts...)
	for _, p := range props {
		if p.Checks != 7 {
			t.Errorf("%s: Checks %d, want 7", p.Name, p.Checks)
		}
	}
	drawn.Store(0)
	properties.Check(t, spec, opts...)
	if n := drawn.Load(); n != int64(7*len(props)) {
		t.Errorf("Check ran %d cases of %d properties, want 7 each (%d)", n, len(props), 7*len(props))
	}
}

// Fails runs exactly the count it is given, below, at and above rapid's
// run of 100, and a case rapid skips (t.Skip, for invalid data) is not
// counted, as rapid does not count it.
func TestFailsRunsExactlyThatMany(t *testing.T) {
	for _, n := range []int{1, 7, 100, 250} {
		ran := 0
		if failed, report := properties.Fails(func(*rapid.T) { ran++ }, n); failed || ran != n {
			t.Errorf("Fails(prop, %d) ran %d cases (failed %v: %s)", n, ran, failed, report)
		}
	}
	ran, skipped := 0, 0
	skipOdd := func(t *rapid.T) {
		if rapid.IntRange(0, 1).Draw(t, "odd") == 1 {
			skipped++
			t.Skip("odd")
		}
		ran++
	}
	if failed, report := properties.Fails(skipOdd, 50); failed || ran != 50 || skipped == 0 {
		t.Errorf("Fails(prop, 50) ran %d cases, skipped %d (failed %v: %s)", ran, skipped, failed, report)
	}
}

// A count below 1 is a mistake, said so: Fails and Properties panic with
// a message naming it.
func TestACountBelowOneIsAnError(t *testing.T) {
	spec := limiter.FromAlgorithm(algos.GCRA)
	for _, n := range []int{0, -3} {
		for what, call := range map[string]func(){
			"Fails":      func() { properties.Fails(properties.PromiseHolds(spec), n) },
			"Properties": func() { properties.Properties(spec, properties.WithChecks(n)) },
		} {
			func() {
				defer func() {
					p := recover()
					if msg, _ := p.(string); !strings.Contains(msg, "at least 1 case") {
						t.Errorf("%s with a count of %d: panic %v, want one saying a property needs at least 1 case", what, n, p)
					}
				}()
				call()
			}()
		}
	}
}

// A property that fails is reported by Fails whatever the case it fails
// on: the last of the count (the 150th, in rapid's second run of 100, or
// its eighth of 20 under -short, where rapid runs a fifth of its checks), a
// panic of its own (not a flaky test), an error in a cleanup.
func TestFailsReportsEveryKindOfFailure(t *testing.T) {
	perRun, err := strconv.Atoi(flag.Lookup("rapid.checks").Value.String())
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		perRun /= 5
	}
	ran := 0
	lastFails := func(t *rapid.T) {
		ran++
		if ran >= 150 {
			t.Fatal("the 150th case")
		}
	}
	var nilMap map[int]int
	for name, c := range map[string]struct {
		prop func(*rapid.T)
		want string
	}{
		"the last case":     {lastFails, fmt.Sprintf("[rapid] failed after %d tests: the 150th case", (150-1)%perRun)},
		"a panic":           {func(t *rapid.T) { nilMap[rapid.IntRange(0, 9).Draw(t, "key")] = 1 }, "[rapid] panic after 0 tests: assignment to entry in nil map"},
		"a failing cleanup": {func(t *rapid.T) { t.Cleanup(func() { t.Fatal("cleanup failed") }) }, "[rapid] failed after 0 tests: cleanup failed"},
	} {
		ran = 0
		failed, report := properties.Fails(c.prop, 150)
		if !failed || !strings.Contains(report, c.want) || strings.Contains(report, "flaky") {
			t.Errorf("%s: failed %v, want %q:\n%s", name, failed, c.want, report)
		}
	}
}
