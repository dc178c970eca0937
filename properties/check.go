package properties

import (
	"flag"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// Property is one claim about a limiter, ready for rapid.
type Property struct {
	Name   string // the subtest name, e.g. "promise-holds"
	Claim  string // what passing it shows, in one sentence
	Checks int    // how many cases Check runs by default
	Prop   func(*rapid.T)
}

// Properties lists the contract for spec, any limiter.Spec, in the order
// Check runs it. The step-back claim of no double refill is included only
// with WithNoDoubleRefill, since the token bucket and the window counters
// break it by design. For a store-clock spec all the step-back claims are
// left out: the store's clock never steps back.
func Properties(spec limiter.Spec, opts ...Option) []Property {
	c := configure(opts)
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
		if c.checks > 0 {
			ps[i].Checks = c.checks
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
// limiter.Spec, each as a subtest, with its Checks cases (rounded up to
// whole runs of -rapid.checks, default 100; -short runs a fifth), and logs
// how many cases each ran. A property that breaks fails its subtest with
// rapid's shrunk counterexample; the others still run. For a store-clock
// spec it logs that the step-back properties do not apply, and why.
func Check(t *testing.T, spec limiter.Spec, opts ...Option) {
	t.Helper()
	if err := spec.Validate(); err != nil {
		t.Fatalf("properties: %v", err)
	}
	if !stepBackApplies(spec) {
		t.Logf("%s %s", spec.Name, stepBackNotApplicable)
	}
	for _, p := range Properties(spec, opts...) {
		t.Run(p.Name, func(t *testing.T) {
			cases := 0
			counted := func(rt *rapid.T) { cases++; p.Prop(rt) }
			for range rounds(p.Checks) {
				rapid.Check(quiet{t}, counted)
			}
			t.Logf("%s: %d cases: %s", spec.Name, cases, p.Claim)
		})
	}
}

// quiet is t without rapid's "OK, passed N tests" line, which would repeat
// once per run; Check logs the total instead.
type quiet struct{ *testing.T }

func (q quiet) Logf(format string, args ...any) {
	if strings.HasPrefix(format, "[rapid] OK") {
		return
	}
	q.T.Helper()
	q.T.Logf(format, args...)
}

// rounds is how many calls of rapid.Check make at least checks cases.
func rounds(checks int) int {
	per := 100
	if f := flag.Lookup("rapid.checks"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if n, ok := g.Get().(int); ok && n > 0 {
				per = n
			}
		}
	}
	return max(1, (checks+per-1)/per)
}
