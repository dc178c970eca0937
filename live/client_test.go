package live_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// bucketNow is a token bucket in this process on the wall clock, deciding
// each call at the instant it is made (inside [Sent, Answered]); halve
// makes it answer half the Retry-After it means.
func bucketNow(l algos.Limit, halve bool) live.Func {
	bucket := onWallClock(algos.TokenBucket, l)
	return func(ctx context.Context, key string) (algos.Decision, error) {
		d, err := bucket(ctx, key)
		if halve {
			d.RetryAfter /= 2
		}
		return d, err
	}
}

// A client that owns its key and honours every Retry-After, closed loop in
// real time: an honest bucket admits every retry it makes at its
// Retry-After and is clean; a bucket that names half the wait it means is
// caught denying those retries. Neither verdict depends on the machine's
// speed: a late retry only waits longer, and a retry is judged only when
// its records show it came after the wait.
func TestRetryAfterClientHoldsTheLimiterToItsWord(t *testing.T) {
	t.Parallel() // in process, judged from its records: no clock to share
	l := algos.MustLimit(20, algos.Second, 5)
	run := 1500 * time.Millisecond
	load := live.Load{Keys: []string{"a", "b"}, Duration: run, Loop: traffic.RetryAfterClient(0, run.Microseconds(), 2000)}
	for _, c := range []struct {
		name  string
		halve bool
	}{{"honest bucket", false}, {"bucket naming half its wait", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recs, err := live.Drive(context.Background(), bucketNow(l, c.halve), load)
			if err != nil {
				t.Fatal(err)
			}
			v := judge.Records(recs, algos.BucketPromise(l), l)
			t.Logf("%s, closed loop:\n%s", c.name, v)
			retries := 0 // denials answered by a request sent after their wait
			for i := 1; i < len(recs); i++ {
				for j := i - 1; j >= 0; j-- {
					if d := recs[j]; d.Key == recs[i].Key {
						if !d.Allowed && d.Known.Has(record.FieldRetryAfter) && recs[i].Sent >= d.Answered+d.RetryAfter {
							retries++
						}
						break
					}
				}
			}
			if retries < 10 || v.Failed > 0 {
				t.Fatalf("%d retries after a wait and %d failures: the client did not retry as it should", retries, v.Failed)
			}
			b, caught := v.Caught(breach.RetryDenied)
			switch {
			case !c.halve && !v.Clean():
				t.Errorf("the honest bucket was judged: %v", v)
			case c.halve && !caught:
				t.Errorf("the bucket naming half its wait was not caught")
			case c.halve:
				t.Logf("caught: %s\n  first: %s", b.Why, b.First)
			}
		})
	}
}

// onWallClock is a in this process on the wall clock, one state per key,
// deciding each call at the instant it is made (inside [Sent, Answered]).
func onWallClock(a algos.Algorithm, l algos.Limit) live.Func {
	var mu sync.Mutex
	states := map[string]*algos.State{}
	start := time.Now()
	return func(_ context.Context, key string) (algos.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		st, ok := states[key]
		if !ok {
			st = &algos.State{}
			states[key] = st
		}
		return a.Decide(st, time.Since(start).Microseconds(), l), nil
	}
}

// comebacks counts the requests of recs (sorted by Sent) sent after the
// Reset of the key's previous request, a denial: the runs AtReset makes.
func comebacks(recs []record.Record) int {
	last := map[string]record.Record{}
	n := 0
	for _, r := range recs {
		if d, ok := last[r.Key]; ok && d.Err == nil && !d.Allowed && d.Known.Has(record.FieldReset) && r.Sent >= d.Answered+d.Reset {
			n++
		}
		last[r.Key] = r
	}
	return n
}

// A client that owns its key and comes back at every Reset, closed loop in
// real time: an honest leaky bucket admits the burst it owes each time and
// is clean; one that names half its wait to idle is caught denying at
// it, and one that answers its Reset in milliseconds where µs are read
// is caught both ways. The verdicts are read from the records: a client
// that comes back late only finds more room.
func TestAtResetClientHoldsTheLimiterToItsReset(t *testing.T) {
	t.Parallel()                              // in process, judged from its records: no clock to share
	l := algos.MustLimit(10, algos.Second, 5) // idle 500 ms after a burst: a client late by half of it still finds half a bucket
	run := 2 * time.Second
	load := live.Load{Keys: []string{"a", "b"}, Duration: run, Loop: traffic.AtResetClient(0, run.Microseconds(), 2000)}
	for _, c := range []struct {
		a     algos.Algorithm
		kinds []breach.Kind // none: clean
	}{
		{algos.LeakyBucket, nil},
		{planted.ResetHalf, []breach.Kind{breach.ResetTooShort}},
		{planted.ResetInMillis, []breach.Kind{breach.ResetBeforeRetryAfter, breach.ResetTooShort}},
	} {
		t.Run(c.a.Name, func(t *testing.T) {
			t.Parallel()
			recs, err := live.Drive(context.Background(), onWallClock(c.a, l), load)
			if err != nil {
				t.Fatal(err)
			}
			v := judge.Records(recs, algos.BucketPromise(l), l)
			t.Logf("%s, closed loop at its Resets:\n%s", c.a.Name, v)
			if n := comebacks(recs); n < 2 || v.Failed > 0 {
				t.Fatalf("%d requests after a Reset and %d failures: the client did not come back as it should", n, v.Failed)
			}
			if c.kinds == nil && !v.Clean() {
				t.Errorf("the honest bucket was judged: %v", v)
			}
			for _, k := range c.kinds {
				if _, caught := v.Caught(k); !caught {
					t.Errorf("not caught as %s", k)
				}
			}
			if _, caught := v.Caught(breach.OverAdmission); caught {
				t.Errorf("over-admission, but only its Reset is planted")
			}
		})
	}
}
