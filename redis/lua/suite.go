package lua

import (
	"context"
	"fmt"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

// SuiteKey is one key of a Suite: the limit its calls run under and the
// time origin they start from.
type SuiteKey struct {
	Limit  algos.Limit
	Origin int64
}

// SuiteKeys are the keys a Suite holds a script to. The odd limits exercise
// the scaled arithmetic: 7 per 3 s makes a token worth 3,000,000 units
// refilled 7 at a time, and GCRA's emission interval a fraction of a µs; the
// origins go from small to near algos.MaxTime, so that doubles carry 16
// digits.
var SuiteKeys = []SuiteKey{
	{algos.MustLimit(7, 3*algos.Second, 5), 1_700_000_000_000_000},
	{algos.MustLimit(100, algos.Second, 100), 123_456_789},
	{algos.MustLimit(3, 1000, 1), 3_100_000_000_000_007},
	{algos.MustLimit(13, 60*algos.Second, 20), 999_999_999_999},
	{algos.MustLimit(250, 7*algos.Second, 40), 2_251_799_813_685_247},
}

// Suite is the differential every script is held to, built-in, planted or
// a user's: Differential on each of SuiteKeys, key k on its own Redis key
// with its own calls, told the time and reading TIME.
type Suite struct {
	// Calls is how many calls in all, shared evenly among the keys (the
	// first Calls mod len(SuiteKeys) keys take one more).
	Calls int
	// Seed chooses the calls: key k's are traffic.DifferentialCalls(Seed<<8 | k, …),
	// so that every seed and every key has calls of its own.
	Seed uint64
	// Then, if any, are appended to every key's calls: times a test wants
	// each key to meet after the generated ones (for example steps of a
	// century back and forth).
	Then []int64
	// Clock, when set, is the store's clock, which every key's
	// store-clock path sets to that key's times (DiffOptions.Clock): a
	// simredis.Server. Without it the store-clock path reads a real
	// Redis's own clock.
	Clock ClockedStore
}

// SuiteRun is one key's calls and what Differential reported on them:
// Report is the told path's, Report.OnStoreClock the store-clock path's.
// With Suite.Clock, Times are the store-clock path's TIMEs as well.
type SuiteRun struct {
	Times  []int64
	Report DiffReport
}

// SuiteReport is a Suite's report on one script: one run per SuiteKeys key,
// in that order.
type SuiteReport struct {
	Algorithm string
	Runs      []SuiteRun
}

// share is how many of the generated calls key k of SuiteKeys takes.
func (s Suite) share(k int) int {
	n := s.Calls / len(SuiteKeys)
	if k < s.Calls%len(SuiteKeys) {
		n++
	}
	return n
}

// KeyCalls returns key k's calls: its generated share, then Then.
func (s Suite) KeyCalls(k int) ([]int64, error) {
	if k < 0 || k >= len(SuiteKeys) {
		return nil, fmt.Errorf("lua: suite key %d outside [0, %d)", k, len(SuiteKeys))
	}
	sk := SuiteKeys[k]
	times, err := traffic.DifferentialCalls(s.Seed<<8|uint64(k), sk.Limit, sk.Origin, s.share(k))
	if err != nil {
		return nil, err
	}
	return append(times, s.Then...), nil
}

// Run holds l to its Go twin on every key of SuiteKeys, on both paths
// (Differential), under Redis keys prefix + ":0" to prefix + ":4" and
// each of those + StoreClockKeySuffix, which must not exist. An error is
// Redis unreachable, a key already there or a clock that cannot be set;
// everything a script can get wrong is in the report.
func (s Suite) Run(ctx context.Context, c redis.Cmdable, l *Script, prefix string) (SuiteReport, error) {
	if s.Calls < len(SuiteKeys) {
		return SuiteReport{}, fmt.Errorf("lua: a suite of %d calls leaves a key without any (want at least %d)", s.Calls, len(SuiteKeys))
	}
	out := SuiteReport{Algorithm: l.Algorithm().Name}
	for k, sk := range SuiteKeys {
		times, err := s.KeyCalls(k)
		if err != nil {
			return SuiteReport{}, err
		}
		rep, err := DifferentialWith(ctx, c, l, fmt.Sprintf("%s:%d", prefix, k), sk.Limit, times, DiffOptions{Clock: s.Clock})
		if err != nil {
			return SuiteReport{}, err
		}
		out.Runs = append(out.Runs, SuiteRun{Times: times, Report: rep})
	}
	return out, nil
}

// OK reports whether every key's report is OK, on both paths, and every
// key's limit was reached on both (the twin denied at least one call): a
// suite that never denied compared only the easy half of the decisions.
func (r SuiteReport) OK() bool {
	for _, run := range r.Runs {
		if !run.Report.OK() || neverDenied(run.Report) || neverDenied(*run.Report.OnStoreClock) {
			return false
		}
	}
	return len(r.Runs) == len(SuiteKeys)
}

// neverDenied reports whether the twin admitted every call of r: the limit
// was never reached there.
func neverDenied(r DiffReport) bool { return r.Admitted == r.Calls }

// paths are a run's reports: the told path's, and the store-clock path's
// when it ran.
func (run SuiteRun) paths() []DiffReport {
	if s := run.Report.OnStoreClock; s != nil {
		return []DiffReport{run.Report, *s}
	}
	return []DiffReport{run.Report}
}

// Totals sums the keys' reports on both paths: calls, admits, differences,
// and the expiries read that were within bound.
func (r SuiteReport) Totals() (calls, admitted, differences, ttlsWithin int) {
	for _, p := range []limiter.Clock{limiter.CallerClock, limiter.StoreClock} {
		c, a, d, t := r.TotalsOn(p)
		calls, admitted, differences, ttlsWithin = calls+c, admitted+a, differences+d, ttlsWithin+t
	}
	return calls, admitted, differences, ttlsWithin
}

// TotalsOn is Totals on one path.
func (r SuiteReport) TotalsOn(p limiter.Clock) (calls, admitted, differences, ttlsWithin int) {
	for _, run := range r.Runs {
		for _, rep := range run.paths() {
			if rep.Clock == p {
				calls += rep.Calls
				admitted += rep.Admitted
				differences += rep.Differences
				ttlsWithin += rep.TTLChecks - rep.TTLDifferences
			}
		}
	}
	return calls, admitted, differences, ttlsWithin
}

// Summary is one line: the script, and on each path its calls, admits and
// differences, and its expiries within bound.
func (r SuiteReport) Summary() string {
	line := fmt.Sprintf("%-16s", r.Algorithm)
	for i, path := range []struct {
		clock limiter.Clock
		words string
	}{{limiter.CallerClock, "told the time"}, {limiter.StoreClock, "reading TIME"}} {
		calls, admitted, differences, ttls := r.TotalsOn(path.clock)
		if i > 0 {
			line += ";"
		}
		line += fmt.Sprintf(" %6d calls %s (%d admitted), %d differences, %d TTLs within bound", calls, path.words, admitted, differences, ttls)
	}
	return line
}

// String is the summary, then every key that was not OK: its report in
// words, or that its limit was never reached.
func (r SuiteReport) String() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	for _, run := range r.Runs {
		if !run.Report.OK() {
			fmt.Fprintf(&b, "\n%v", run.Report)
			continue
		}
		for _, rep := range run.paths() {
			if neverDenied(rep) {
				fmt.Fprintf(&b, "\n%s, %v, %s: no call denied, so the limit was never reached", rep.Key, rep.Limit, rep.Clock)
			}
		}
	}
	return b.String()
}
