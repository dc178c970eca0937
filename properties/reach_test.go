package properties_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
	"pgregory.net/rapid"
)

// realLimits are limits as a library is configured, where the properties
// must reach past the burst: 10 a second with a burst of 20, and 100 a
// second with a burst of 150 (whose floods are past 64 calls at one
// instant, the most the arrivals drew before).
var realLimits = []algos.Limit{algos.MustLimit(10, algos.Second, 20), algos.MustLimit(100, algos.Second, 150)}

// reach is what a set of cases of Arrivals(l) showed, played on the token
// bucket under l.
type reach struct {
	cases     int
	flooded   int   // cases with max(L, B)+2 calls at one instant
	denied    int   // cases in which the token bucket denied a call
	recovered int   // cases in which it admitted a call after a denial
	pastIdle  int   // cases that wait at least DefaultMaxWait(l) between two calls
	most      int   // the most calls at one instant
	longest   int   // the most calls in a case
	span      int64 // the longest span from first call to last
}

func (m *reach) add(t *rapid.T, l algos.Limit, times []int64) {
	m.cases++
	m.longest = max(m.longest, len(times))
	lim, err := limiter.NewMemory(algos.TokenBucket, l)
	if err != nil {
		t.Fatal(err)
	}
	flooded, denied, recovered, pastIdle := false, false, false, false
	run := 0
	for i, now := range times {
		if i > 0 && times[i-1] == now {
			run++
		} else {
			run = 1
		}
		m.most = max(m.most, run)
		flooded = flooded || int64(run) >= max(l.Rate, l.Burst)+2
		pastIdle = pastIdle || i > 0 && now-times[i-1] >= properties.DefaultMaxWait(l)
		d, err := lim.Allow(context.Background(), 0, now)
		if err != nil {
			t.Fatal(err)
		}
		recovered = recovered || denied && d.Allowed
		denied = denied || !d.Allowed
	}
	if len(times) > 0 {
		m.span = max(m.span, times[len(times)-1]-times[0])
	}
	for _, c := range []struct {
		seen bool
		n    *int
	}{{flooded, &m.flooded}, {denied, &m.denied}, {recovered, &m.recovered}, {pastIdle, &m.pastIdle}} {
		if c.seen {
			*c.n++
		}
	}
}

func (m reach) String() string {
	return fmt.Sprintf("of %d cases, %d flood the key at one instant, %d are denied, %d recover after a denial, %d wait past the idle time; at most %d calls at one instant, %d in a case, a span of %v",
		m.cases, m.flooded, m.denied, m.recovered, m.pastIdle, m.most, m.longest, time.Duration(m.span)*time.Microsecond)
}

// At a real limit the arrivals reach it: of rapid's default 100 cases (a
// fiftieth of promise-holds' default), more than a third each flood the
// key with max(L, B)+2 calls at one instant, are denied, see the key
// recover, and wait past its idle time (DefaultMaxWait), and no case has
// more calls than 64 plus four floods.
func TestArrivalsFloodTheLimitUnderTest(t *testing.T) {
	for _, l := range realLimits {
		t.Run(l.String(), func(t *testing.T) {
			var m reach
			rapid.Check(t, func(rt *rapid.T) { m.add(rt, l, properties.Arrivals(l).Draw(rt, "arrivals")) })
			t.Log(m)
			flood := int(max(l.Rate, l.Burst) + 2)
			if m.most < flood || m.longest > 64+4*flood {
				t.Errorf("at most %d calls at one instant and %d in a case; want the flood of %d, and at most %d in a case", m.most, m.longest, flood, 64+4*flood)
			}
			for _, c := range []struct {
				what string
				n    int
			}{{"flood the key", m.flooded}, {"are denied", m.denied}, {"recover after a denial", m.recovered}, {"wait past the idle time", m.pastIdle}} {
				if 3*c.n < m.cases {
					t.Errorf("only %d of %d cases %s", c.n, m.cases, c.what)
				}
			}
		})
	}
}

// At 10,000 a second a case stays bounded: no case has more than
// MaxArrivals calls, and its bursts are those of a limit of MaxBurst-2, so
// a burst reaches MaxBurst calls at one instant (and steps with no wait
// between them add up to more).
func TestArrivalsAreBoundedAtALargeLimit(t *testing.T) {
	l := algos.MustLimit(10_000, algos.Second, 10_000)
	var m reach
	rapid.Check(t, func(rt *rapid.T) { m.add(rt, l, properties.Arrivals(l).Draw(rt, "arrivals")) })
	t.Log(m)
	if m.most < properties.MaxBurst || m.longest > properties.MaxArrivals {
		t.Errorf("%d calls at one instant (want at least %d), %d in a case (at most %d)", m.most, properties.MaxBurst, m.longest, properties.MaxArrivals)
	}
}

// firstBroken runs each property of Properties(spec, opts...) with its
// default count, through Fails, as Check would, and returns the first that
// breaks, with rapid's report.
func firstBroken(spec limiter.Spec, opts ...properties.Option) (name, report string) {
	for _, p := range properties.Properties(spec, opts...) {
		if failed, report := properties.Fails(p.Prop, p.Checks); failed {
			return p.Name, report
		}
	}
	return "", ""
}

// casesBefore is how many cases rapid ran before the one that failed.
var casesBefore = regexp.MustCompile(`failed after (\d+) tests`)

// halfTTLBucket is the token bucket on a store that drops its key half
// way to idle (Reset/2 after each call), as a script that SETs its state
// with a PX too short does: a key drained at t is gone at t+B/2L with half
// its burst still owed, and the next call finds a full bucket.
func halfTTLBucket() limiter.Spec {
	a := algos.TokenBucket
	a.Name = "token-bucket-ttl-half-idle"
	a.KeyTTL = func(d algos.Decision, _ algos.Limit) int64 { return d.Reset / 2 }
	return limiter.FromAlgorithm(a)
}

// A key that expires at half its idle time, at 10 a second with a burst of
// 20, is caught by the default Check at that limit, by its first property,
// promise-holds: a flood drains the key, and a second one after it has
// expired, within its idle time, gets a fresh burst of 20 where at most 19
// are promised.
func TestKeyExpiringAtHalfItsIdleTimeIsCaught(t *testing.T) {
	t.Parallel()
	l := algos.MustLimit(10, algos.Second, 20)
	spec := halfTTLBucket()
	name, report := firstBroken(spec, properties.WithLimit(l))
	if name != "promise-holds" {
		t.Fatalf("the default Check at %v: %s breaks %q, want promise-holds:\n%s", l, spec.Name, name, report)
	}
	t.Logf("the default Check: %s breaks %s after %s cases, shrunk:\n%s", spec.Name, name, casesBefore.FindStringSubmatch(report)[1], report)
}

// past64 is a token bucket (bucket, in limiter_test.go) with a fast path
// gone wrong: from the 65th call at one instant on, a denial becomes an
// admit. Nothing below 65 calls at one instant shows it, so at a burst of
// 150 only a flood past 64 calls does.
type past64 struct {
	b     limiter.Decider
	at    int64
	calls int
}

func (p *past64) Decide(now int64) algos.Decision {
	if p.calls == 0 || now != p.at {
		p.at, p.calls = now, 0
	}
	p.calls++
	d := p.b.Decide(now)
	if p.calls > 64 && !d.Allowed {
		d = algos.Decision{Allowed: true, Reset: d.Reset}
	}
	return d
}

var past64Bucket = limiter.Spec{
	Name:    "token-bucket-admits-past-64-at-one-instant",
	Clock:   limiter.CallerClock,
	Promise: algos.BucketPromise,
	New: limiter.PerKey(func(l algos.Limit, first int64) (limiter.Decider, error) {
		b, err := newBucket(l, first)
		return &past64{b: b}, err
	}),
	ExactRetry: true,
}

// A limiter that misbehaves only past 64 calls at one instant is caught at
// 100 a second with a burst of 150 by the default Check, by its first
// property, promise-holds, whose counterexample floods the key with more
// than 64 calls at one instant.
func TestMisbehavingPast64CallsIsCaught(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 150)
	name, report := firstBroken(past64Bucket, properties.WithLimit(l))
	if name != "promise-holds" {
		t.Fatalf("the default Check at %v: %s breaks %q, want promise-holds:\n%s", l, past64Bucket.Name, name, report)
	}
	m := regexp.MustCompile(`draw arrivals: \[\]int64\{([^}]*)\}`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no arrivals in the report:\n%s", report)
	}
	most, run, prev := 0, 0, ""
	for _, s := range strings.Split(m[1], ", ") {
		if s == prev {
			run++
		} else {
			run, prev = 1, s
		}
		most = max(most, run)
	}
	if most <= 64 {
		t.Errorf("the counterexample has at most %d calls at one instant:\n%s", most, report)
	}
	head, _, _ := strings.Cut(report, "\n")
	t.Logf("the default Check: %s breaks %s after %s cases, shrunk to %d calls at one instant: %s", past64Bucket.Name, name, casesBefore.FindStringSubmatch(report)[1], most, head)
}
