package planted_test

import (
	"context"
	"flag"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/adapters/redislib"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// keyfoldSeeds is how many of HuntOptions' 200 seeds the default run
// hunts the two libraries on. Each seed plays 12 s of nine clients on
// simredis three times (the run, the keys moved, the clocks apart), about
// 1.5 s of CPU a library (a Lua call costs some 40 µs), so one seed keeps
// the test near 3 s; all 200 took 734 s on two cores and caught the
// truncation on every one: -planted.keyfold.seeds=200 runs them.
var keyfoldSeeds = flag.Int("planted.keyfold.seeds", 1, "seeds of HuntOptions the key-truncating library is hunted on")

// truncatedKeys and wholeKeys are the planted library and its correct twin
// as redislib takes them, on simredis.
var (
	truncatedKeys = redislib.Spec(redislib.Library{Name: planted.KeysTruncatedName,
		Promise: algos.BucketPromise, ExactRetry: true, New: planted.KeysTruncated})
	wholeKeys = redislib.Spec(redislib.Library{Name: "token-bucket (Lua, whole keys)",
		Promise: algos.BucketPromise, ExactRetry: true, New: planted.KeysWhole})
)

// The truncation is the only bug: on keys below 1024, whose names are
// short, the truncating library decides as the token bucket does, call for
// call; on the isolation checks' i+1024 and i+65536 it spends one bucket,
// and its twin keeps two.
func TestKeysTruncatedSharesOneBucketOnlyBetweenLongNames(t *testing.T) {
	ctx := context.Background()
	l := algos.MustLimit(10, algos.Second, 10)
	lims := map[string]limiter.Limiter{}
	for _, s := range []limiter.Spec{truncatedKeys, wholeKeys} {
		lim, err := s.Open(l)
		if err != nil {
			t.Fatal(err)
		}
		defer limiter.Close(lim)
		lims[s.Name] = lim
	}
	// Short names: each key's bucket is its own and is algos.TokenBucket's.
	ref, err := limiter.FromAlgorithm(algos.TokenBucket).Open(l)
	if err != nil {
		t.Fatal(err)
	}
	for i, now := range []int64{0, 0, 1, 5, 99_999, 100_000, 100_001, 250_000, 999_999, 3 * algos.Second} {
		for key := range 3 {
			for range 2 + i%5 {
				want, _ := ref.Allow(ctx, key, now)
				for name, lim := range lims {
					got, err := lim.Allow(ctx, key, now)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("%s, key %d at %d: %+v; algos.TokenBucket %+v", name, key, now, got, want)
					}
				}
			}
		}
	}
	// Long names sharing their first 256 bytes: a burst on 1027 at 10 s
	// empties 65539's bucket in the truncating library only.
	now := 10 * algos.Second
	for name, lim := range lims {
		for range 10 {
			if _, err := lim.Allow(ctx, 1027, now); err != nil {
				t.Fatal(err)
			}
		}
		d, err := lim.Allow(ctx, 65539, now)
		if err != nil {
			t.Fatal(err)
		}
		if shared := !d.Allowed; shared != (name == planted.KeysTruncatedName) {
			t.Errorf("%s: key 65539 after a burst of 10 on key 1027: %+v", name, d)
		}
	}
}

// The default hunt catches the truncating library by keys share state on
// at least 95% of the seeds, and its twin keeps the whole contract on
// every seed.
func TestKeysTruncatedIsCaughtByTheHunt(t *testing.T) {
	t.Parallel() // beside the property's shrinking, which waits more than it works
	o := scenarios.HuntOptions()
	o.Seeds = o.Seeds[:min(*keyfoldSeeds, len(o.Seeds))]
	start := time.Now()
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{
		{Limiter: truncatedKeys, Deployment: model.StoreClock},
		{Limiter: wholeKeys, Deployment: model.StoreClock},
	}, o)
	if err != nil {
		t.Fatal(err)
	}
	bad, good := verdicts[0], verdicts[1]
	t.Logf("measured: %s caught by keys share state on %d of %d seeds (first seed %d, %s client: %v); %s caught on %d; %.1f s",
		bad.Suspect, bad.SeedsBy[breach.KeysShareState], bad.Seeds, bad.FirstSeed, bad.FirstClient, bad.First,
		good.Suspect, good.SeedsCaught, time.Since(start).Seconds())
	if 100*bad.SeedsBy[breach.KeysShareState] < 95*bad.Seeds {
		t.Errorf("%s: keys share state on %d of %d seeds; want at least 95%%", bad.Suspect, bad.SeedsBy[breach.KeysShareState], bad.Seeds)
	}
	if bad.SeedsCaught != bad.SeedsBy[breach.KeysShareState] {
		t.Errorf("%s: caught on %d seeds, by keys share state on %d: it breaks only key isolation", bad.Suspect, bad.SeedsCaught, bad.SeedsBy[breach.KeysShareState])
	}
	if good.Caught {
		t.Errorf("%s: caught on %d of %d seeds, first seed %d, %s client, %s: %v", good.Suspect, good.SeedsCaught, good.Seeds,
			good.FirstSeed, good.FirstClient, good.FirstBreach, good.First)
	}
}

// properties.KeysIsolated catches it by the long names (the second pair of
// its family); its twin holds. Finding it takes a case or two; shrinking
// it on simredis would run until properties.DefaultShrinkTime (10 s), so
// the shrinking is bounded at one second: the claim is the catch.
func TestKeysTruncatedBreaksKeysIsolated(t *testing.T) {
	t.Parallel()
	if failed, report := properties.Fails(properties.KeysIsolated(wholeKeys), 100); failed {
		t.Errorf("keys-isolated fails the correct twin:\n%s", report)
	}
	failed, report := properties.FailsWithin(properties.KeysIsolated(truncatedKeys), 100, time.Second)
	if !failed {
		t.Fatalf("keys-isolated did not catch %s", planted.KeysTruncatedName)
	}
	t.Logf("%s breaks keys-isolated:\n%s", planted.KeysTruncatedName, report)
	// The pair that folds is the two long names, never key i's short one.
	first, _, _ := strings.Cut(report, "\n")
	m := regexp.MustCompile(`key (\d+)'s call .* among key (\d+)'s`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("no pair of keys in %q", first)
	}
	for _, k := range m[1:] {
		if n, _ := strconv.Atoi(k); n < 1024 {
			t.Errorf("caught on key %s, whose name is short: %s", k, first)
		}
	}
}
