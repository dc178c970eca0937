package properties_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
)

// bucket is one key's integer token bucket as a Go object that is told the
// time, written apart from algos: tokens in scaled units (a request costs
// l.Unit, a µs refills l.Refill), and a last refill time that only moves
// forward, so a caller whose clock is behind waits the gap too. It starts
// full at the time it is built, as such objects do (limiter.PerKey builds
// it at its key's first call).
type bucket struct {
	l            algos.Limit
	tokens, last int64
}

func newBucket(l algos.Limit, first int64) (limiter.Decider, error) {
	return &bucket{l: l, tokens: l.Burst * l.Unit, last: first}, nil
}

func (b *bucket) Decide(now int64) algos.Decision {
	capacity := b.l.Burst * b.l.Unit
	if elapsed := now - b.last; elapsed > 0 {
		if room := capacity - b.tokens; elapsed >= (room+b.l.Refill-1)/b.l.Refill {
			b.tokens = capacity
		} else {
			b.tokens += elapsed * b.l.Refill
		}
		b.last = now
	}
	behind := b.last - now
	var d algos.Decision
	if b.tokens >= b.l.Unit {
		b.tokens -= b.l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = behind + (b.l.Unit-b.tokens+b.l.Refill-1)/b.l.Refill
	}
	d.Remaining = b.tokens / b.l.Unit
	d.Reset = behind + (capacity-b.tokens+b.l.Refill-1)/b.l.Refill
	return d
}

// A Go object per key (limiter.PerKey) that is a correct token bucket keeps
// the whole contract, no double refill included: the properties need no
// algos.Algorithm. (300 cases a property: the six cover the default counts.)
func TestPerKeyLimiterKeepsTheContract(t *testing.T) {
	t.Parallel()
	spec := limiter.Spec{
		Name:       "per-key-bucket",
		Clock:      limiter.CallerClock,
		Promise:    algos.BucketPromise,
		New:        limiter.PerKey(newBucket),
		ExactRetry: true,
	}
	if _, ok := spec.Algorithm(); ok {
		t.Fatal("the per-key spec claims to be an algorithm")
	}
	properties.Check(t, spec, properties.WithNoDoubleRefill(), properties.WithChecks(300))
}

// storeBuckets is a store-clock limiter: the buckets of its keys, in
// memory, on a store whose one clock is the time it is called at. A store's
// clock never goes back, so it panics if one call comes earlier than the
// last on the same limiter (on any key).
type storeBuckets struct {
	l      algos.Limit
	clock  int64
	keys   map[int]*bucket
	closed *atomic.Int64
	done   bool
}

func (s *storeBuckets) Allow(_ context.Context, key int, now int64) (algos.Decision, error) {
	if s.done {
		panic("called after Close")
	}
	if now < s.clock {
		panic(fmt.Sprintf("the store's clock went back from %d to %d", s.clock, now))
	}
	s.clock = now
	b := s.keys[key]
	if b == nil {
		d, _ := newBucket(s.l, now)
		b = d.(*bucket)
		s.keys[key] = b
	}
	return b.Decide(now), nil
}

func (s *storeBuckets) Close() error {
	if s.done {
		return errors.New("closed twice")
	}
	s.done = true
	s.closed.Add(1)
	return nil
}

// A store-clock limiter keeps every property but the step-back ones, which
// Check leaves out (and which, asked for all the same, fail saying why),
// and the properties call each of its limiters in order of time and close
// every one they open.
func TestStoreClockLimiterKeepsTheContract(t *testing.T) {
	t.Parallel()
	var opened, closed atomic.Int64
	spec := limiter.Spec{
		Name:    "store-clock-bucket",
		Clock:   limiter.StoreClock,
		Promise: algos.BucketPromise,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			opened.Add(1)
			return &storeBuckets{l: l, keys: map[int]*bucket{}, closed: &closed}, nil
		},
		ExactRetry: true,
	}
	for _, p := range properties.Properties(spec, properties.WithNoDoubleRefill()) {
		if strings.HasPrefix(p.Name, "step-back") {
			t.Errorf("Properties lists %s for a store-clock spec", p.Name)
		}
	}
	properties.Check(t, spec, properties.WithNoDoubleRefill(), properties.WithChecks(300))
	if opened.Load() == 0 || closed.Load() != opened.Load() {
		t.Errorf("opened %d limiters, closed %d", opened.Load(), closed.Load())
	}
	t.Logf("%d limiters opened and closed", opened.Load())

	failed, report := properties.Fails(properties.StepBackNoLongLockout(spec), 100)
	if !failed || !strings.Contains(report, "do not apply to a store-clock limiter") {
		t.Errorf("StepBackNoLongLockout on a store-clock spec: failed %v:\n%s", failed, report)
	}
}

// failingOnThird is a limiter whose connection breaks on its third call.
type failingOnThird struct{ calls int }

var errThird = errors.New("connection reset by the store on the 3rd call")

func (f *failingOnThird) Allow(_ context.Context, _ int, now int64) (algos.Decision, error) {
	f.calls++
	if f.calls == 3 {
		return algos.Decision{}, errThird
	}
	return algos.Decision{Allowed: true, Reset: 1}, nil
}

// An error from Allow fails the property, saying which call it was and
// what the error is: it is never taken for a denial.
func TestAnErrorFailsTheProperty(t *testing.T) {
	spec := limiter.Spec{
		Name:  "fails-on-third",
		Clock: limiter.CallerClock,
		Promise: func(algos.Limit) algos.Promise {
			return algos.NewPromise("anything", func([]int64) *algos.Violation { return nil })
		},
		New: func(algos.Limit) (limiter.Limiter, error) { return &failingOnThird{}, nil },
	}
	failed, report := properties.Fails(properties.PromiseHolds(spec), 100)
	if !failed {
		t.Fatal("PromiseHolds passed a limiter whose third call fails")
	}
	for _, want := range []string{"fails-on-third", "the call on key 0 at", errThird.Error()} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	t.Logf("an error, shrunk:\n%s", report)
}

// tokenBucketTTL is the token bucket whose store drops its key reset+extra
// µs after each call, as a Redis script that SETs its state with PX does.
func tokenBucketTTL(name string, extra int64) limiter.Spec {
	a := algos.TokenBucket
	a.Name = name
	a.KeyTTL = func(d algos.Decision, _ algos.Limit) int64 { return d.Reset + extra }
	return limiter.FromAlgorithm(a)
}

// keyTTLLimits are the limits the key TTL is judged at, and the
// properties that catch a TTL one second short at each. PromiseHolds does
// at both: Arrivals floods the key past its burst and then waits about its
// idle time, and a second flood just short of it gets a fresh burst. At 100
// per second with a burst of 100 the state is never more than 1 s from idle
// (a full burst refills in 1 s), so the key lives 1 µs, and RetryAfterHonest
// catches it too: the retry 1 µs before the deadline finds the key gone and
// is admitted.
var keyTTLLimits = []struct {
	l       algos.Limit
	catches []property
	names   []string
}{
	{algos.MustLimit(10, algos.Second, 20), []property{properties.PromiseHolds}, []string{"promise-holds"}},
	{algos.MustLimit(100, algos.Second, 100), []property{properties.PromiseHolds, properties.RetryAfterHonest}, []string{"promise-holds", "retry-after-honest"}},
}

// The properties see a store's key expiry (limiter.Memory honours KeyTTL):
// a key dropped one second before its state is idle hands out a fresh
// burst, which the contract catches at both limits.
func TestKeyTTLOneSecondShortIsCaught(t *testing.T) {
	short := tokenBucketTTL("token-bucket-ttl-1s-short", -algos.Second)
	for _, k := range keyTTLLimits {
		t.Run(k.l.String(), func(t *testing.T) {
			for i, prop := range k.catches {
				failed, report := properties.Fails(prop(short, properties.WithLimit(k.l)), 1000)
				if !failed {
					t.Fatalf("%s missed %s at %v", k.names[i], short.Name, k.l)
				}
				first, _, _ := strings.Cut(report, "\n")
				t.Logf("%s at %v: %s", k.names[i], k.l, first)
			}
		})
	}
}

// A key kept exactly until its state is idle changes no decision: the
// token bucket with that TTL keeps the whole contract at both limits (each
// property of Properties, as Check runs them, for 200 cases, through Fails
// so that a failure leaves no fail file behind).
func TestKeyTTLExactlyToIdleKeepsTheContract(t *testing.T) {
	t.Parallel()
	exact := tokenBucketTTL("token-bucket-ttl-to-idle", 0)
	for _, k := range keyTTLLimits {
		t.Run(k.l.String(), func(t *testing.T) {
			for _, p := range properties.Properties(exact, properties.WithLimit(k.l), properties.WithChecks(200)) {
				if failed, report := properties.Fails(p.Prop, p.Checks); failed {
					t.Errorf("%s breaks %s at %v:\n%s", exact.Name, p.Name, k.l, report)
				}
			}
		})
	}
}
