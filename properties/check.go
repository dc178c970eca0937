package properties

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// Property is one claim about a limiter, ready for rapid.
type Property struct {
	Name   string // the subtest name, e.g. "promise-holds"
	Claim  string // what passing it shows, in one sentence
	Checks int    // how many cases Check runs, and Fails should run
	Prop   func(*rapid.T)
}

// Properties lists the contract for spec, any limiter.Spec, in the order
// Check runs it. The step-back claim of no double refill is included only
// with WithNoDoubleRefill, since the token bucket and the window counters
// break it by design. For a store-clock spec all the step-back claims are
// left out: the store's clock never steps back.
//
// Each Property's Checks is its default count of cases (a fifth of it,
// at least 1, under -short), or exactly the count given by WithChecks.
// WithChecks with a count below 1 is a mistake in the calling program, and
// Properties panics on it, saying so (Check fails the test instead).
func Properties(spec limiter.Spec, opts ...Option) []Property {
	c := configure(opts)
	if err := c.checkCount(); err != nil {
		panic(err.Error())
	}
	ps := []Property{
		{"promise-holds", "the algorithm's own promise holds on one node with a true clock", 5000, PromiseHolds(spec, opts...)},
		{"burst-from-idle", "from idle, one instant gets exactly the promised burst, then a deny", 2000, BurstFromIdle(spec, opts...)},
		{"retry-after-honest", "a retry at exactly now+RetryAfter is admitted (and, if ExactRetry, one µs earlier is not)", 2000, RetryAfterHonest(spec, opts...)},
		{"retry-loop-never-extends", "retrying while denied never moves the deadline now+RetryAfter later", 2000, RetryLoopNeverExtends(spec, opts...)},
		{"remaining-never-negative", "remaining, retry-after and reset are never negative, and a denial has remaining 0 and a retry-after", 3000, RemainingNeverNegative(spec, opts...)},
		{"remaining-is-exact", "exactly Remaining more requests are admitted at the same instant", 1000, RemainingIsExact(spec, opts...)},
		{"reset-reaches-idle", "at now+Reset the key grants a full burst again", 1000, ResetReachesIdle(spec, opts...)},
		{"refill-capped-after-idle", "after an hour or more idle, one admit leaves exactly the burst minus one", 3000, RefillCappedAfterIdle(spec, opts...)},
	}
	if resetNotPastIdleApplies(spec) {
		ps = append(ps, Property{"reset-not-past-idle", "no Reset is longer than any key of the promise needs to become idle, left alone", 1000, ResetNotPastIdle(spec, opts...)})
	}
	if _, pure := spec.Algorithm(); !pure {
		// A pure algorithm's keys each have their own state in
		// limiter.Memory, overshoot's store: isolated by construction.
		ps = append(ps, Property{"keys-isolated", "a key's answers are the same alone and among another key's calls, 1024 or 65536 above it", 1000, KeysIsolated(spec, opts...)})
	}
	if stepBackApplies(spec) {
		ps = append(ps,
			Property{"step-back-no-negative-refill", "a clock stepping back never makes remaining negative, nor leaves the key worse off than its own admits once the clock has caught up", 2000, StepBackNoNegativeRefill(spec, opts...)},
			Property{"step-back-no-long-lockout", "after a step back, a denial waits at most the step plus the longest wait from full to idle", 2000, StepBackNoLongLockout(spec, opts...)},
		)
		if c.noDoubleRefill {
			ps = append(ps, Property{"step-back-no-double-refill", "a node whose clock is behind never leaves the key better off once the clock has caught up", 2000, StepBackNoDoubleRefill(spec, opts...)})
		}
	}
	for i := range ps {
		switch {
		case c.checksSet:
			ps[i].Checks = c.checks
		case short():
			ps[i].Checks = max(1, ps[i].Checks/5)
		}
	}
	return ps
}

// stepBackApplies reports whether the step-back properties apply to spec:
// they do to a caller-clock limiter, whose callers' clocks may be behind,
// and not to a store-clock one, which reads only the store's clock, and
// that never steps back.
func stepBackApplies(spec limiter.Spec) bool { return spec.Clock != limiter.StoreClock }

// Check runs every property of Properties(spec, opts...) on spec, any
// limiter.Spec, each as a subtest, with exactly its Checks cases, and logs
// how many cases each ran. The subtests run GOMAXPROCS at a time (each
// property makes its own limiters, and Spec.New promises a fresh one; a
// generator given as an option is drawn from by several at once), and
// Check returns when all have ended. A property that breaks fails its
// subtest with rapid's shrunk counterexample; the others still run.
// Shrinking stops after DefaultShrinkTime (WithShrinkTime and
// -rapid.shrinktime change it) and reports the smallest case found by
// then: a bound never turns a failure into a pass. For a store-clock spec
// it logs that the step-back properties do not apply, and why.
func Check(t *testing.T, spec limiter.Spec, opts ...Option) {
	t.Helper()
	if err := spec.Validate(); err != nil {
		t.Fatalf("properties: %v", err)
	}
	c := configure(opts)
	if err := c.checkCount(); err != nil {
		t.Fatal(err)
	}
	if !stepBackApplies(spec) {
		t.Logf("%s %s", spec.Name, stepBackNotApplicable)
	}
	// t.Run may be called from several goroutines at once, so long as all
	// return before Check does: the subtests keep their names, and a
	// caller's code after Check runs after every property.
	slots := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for _, p := range Properties(spec, opts...) {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			t.Run(p.Name, func(t *testing.T) {
				r := newRunner(p.Prop, p.Checks, c.shrinkBound())
				q := quiet{T: t, r: r}
				for r.more() {
					before := r.ran
					withRapidFlags(func() { rapid.Check(q, r.run) })
					if r.ran == before {
						t.Fatalf("properties: rapid ran no case of %s (-rapid.checks=%s)", p.Name, flagValue("rapid.checks"))
					}
				}
				t.Logf("%s: %d cases: %s", spec.Name, r.ran, p.Claim)
			})
		})
	}
	wg.Wait()
}

// quiet is t as rapid's TB, without rapid's "OK, passed N tests" line,
// which would repeat once per run (Check logs the total instead), and
// telling r when rapid reports a failure.
type quiet struct {
	*testing.T
	r *runner
}

func (q quiet) Logf(format string, args ...any) {
	if strings.HasPrefix(format, "[rapid] OK") {
		return
	}
	q.T.Helper()
	q.T.Logf(format, args...)
}

func (q quiet) Errorf(format string, args ...any) {
	q.r.reported()
	q.T.Helper()
	q.T.Errorf(format, args...)
}

// short reports whether the tests run with -short, without testing.Short's
// panic outside a test binary, or before its flags are parsed.
func short() bool { return flag.Parsed() && flagValue("test.short") == "true" }

// flagValue is the value of the named flag, or "" if there is none.
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// checkCount is the error for a count of cases below 1.
func (c config) checkCount() error {
	if c.checksSet && c.checks < 1 {
		return fmt.Errorf("properties: WithChecks(%d): a property needs at least 1 case", c.checks)
	}
	return nil
}
