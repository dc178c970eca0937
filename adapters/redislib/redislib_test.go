package redislib_test

import (
	"context"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/overshoot-go/overshoot/adapters/redislib"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/properties"
)

// contract runs the example's script through the whole of properties.Check
// (about 12 s on simredis); the default run holds it to the quick half.
var contract = flag.Bool("redislib.contract", false, "TestAScriptOfYoursIsJudgedInSimulatedTime runs properties.Check whole")

// quick are the properties the default run holds the example's script to:
// the promise, a burst from idle, Remaining never negative, a retry loop
// that never pushes its own deadline, and the refill capped after idle.
var quick = []string{"promise-holds", "burst-from-idle", "remaining-never-negative", "retry-loop-never-extends", "refill-capped-after-idle"}

// The example's script, wrapped in a few lines, keeps its contract under
// the properties, in simulated time on simredis; the same script admitting
// one request too many breaks its promise.
func TestAScriptOfYoursIsJudgedInSimulatedTime(t *testing.T) {
	t.Parallel()
	l := algos.MustLimit(10, algos.Second, 10)
	good := redislib.Spec(firstHitWindowLibrary("first-hit window (Lua)", func(n, limit int64) bool { return n <= limit }))
	if *contract {
		properties.Check(t, good, properties.WithLimit(l), properties.WithChecks(100))
	} else {
		held := 0
		for _, p := range properties.Properties(good, properties.WithLimit(l)) {
			if !slices.Contains(quick, p.Name) {
				continue
			}
			held++
			if failed, report := properties.Fails(p.Prop, 100); failed {
				t.Errorf("%s breaks %s:\n%s", good.Name, p.Name, report)
			}
		}
		if held != len(quick) {
			t.Errorf("held %s to %d of the %d quick properties: a name in quick is not a property's", good.Name, held, len(quick))
		}
	}

	bad := redislib.Spec(firstHitWindowLibrary("first-hit window, one too many (Lua)", func(n, limit int64) bool { return n <= limit+1 }))
	caught := ""
	for _, p := range properties.Properties(bad, properties.WithLimit(l)) {
		if p.Name != "promise-holds" {
			continue
		}
		if failed, report := properties.Fails(p.Prop, 100); failed {
			caught, _, _ = strings.Cut(report, "\n")
		}
	}
	if caught == "" {
		t.Errorf("promise-holds did not catch %s", bad.Name)
	} else {
		t.Logf("%s breaks promise-holds: %s", bad.Name, caught)
	}
}

// Bad input is an error naming the library, never a panic or a denial.
func TestSpecErrors(t *testing.T) {
	ctx := context.Background()
	spec := redislib.Spec(firstHitWindowLibrary("lua", func(n, limit int64) bool { return n <= limit }))
	if spec.Clock != limiter.StoreClock {
		t.Errorf("Clock %v; want the store's", spec.Clock)
	}
	if _, err := spec.New(algos.Limit{Rate: 0, Window: algos.Second, Burst: 1}); err == nil || !strings.HasPrefix(err.Error(), "lua: ") {
		t.Errorf("a limit of 0: %v; want an error naming the library", err)
	}
	failing := redislib.Spec(redislib.Library{Name: "refuses", New: func(*redis.Client, algos.Limit) (redislib.AllowFunc, error) {
		return nil, errors.New("no such limit")
	}})
	if _, err := failing.New(algos.MustLimit(10, algos.Second, 10)); err == nil || err.Error() != "refuses: no such limit" {
		t.Errorf("a library that cannot be built: %v; want its own error, naming it", err)
	}
	if _, err := redislib.Spec(redislib.Library{Name: "none"}).New(algos.MustLimit(1, algos.Second, 1)); err == nil {
		t.Error("a Library without New made a limiter")
	}
	lim, err := spec.New(algos.MustLimit(10, algos.Second, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer lim.(interface{ Close() error }).Close()
	if _, err := lim.Allow(ctx, -1, 0); err == nil {
		t.Error("a negative key was decided")
	}
	if _, err := lim.Allow(ctx, 0, algos.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Allow(ctx, 0, 0); err == nil {
		t.Error("a call back in time was decided (the store's clock cannot go back)")
	}
	if _, err := redislib.Open(-1); err == nil {
		t.Error("Open(-1): no error")
	}
}

// The store's clock is the epoch plus the simulated time: TIME reads it.
func TestStoreClockIsEpochPlusNow(t *testing.T) {
	st, err := redislib.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.At(1_500_000); err != nil {
		t.Fatal(err)
	}
	got, err := st.Client.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := redislib.DefaultEpoch + 1_500_000; got.UnixMicro() != want {
		t.Errorf("TIME reads %d µs; want %d", got.UnixMicro(), want)
	}
}

// A library is handed limiter.KeyName of each key: the number's old name
// below 1024, and above it the long names that collide with it (in one
// Redis Cluster slot, sharing their first 256 bytes).
func TestSpecHandsTheLibraryKeyNames(t *testing.T) {
	var got []string
	spec := redislib.Spec(redislib.Library{Name: "recorder", Promise: algos.BucketPromise,
		New: func(*redis.Client, algos.Limit) (redislib.AllowFunc, error) {
			return func(_ context.Context, key string) (algos.Decision, error) {
				got = append(got, key)
				return algos.Decision{Allowed: true}, nil
			}, nil
		}})
	lim, err := spec.New(algos.MustLimit(10, algos.Second, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer lim.(interface{ Close() error }).Close()
	keys := []int{7, 0, 1023, 1027, 65539}
	for _, k := range keys {
		if _, err := lim.Allow(context.Background(), k, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range keys {
		if want := limiter.KeyName(k); got[i] != want {
			t.Errorf("key %d reached the library as %q; want %q", k, got[i], want)
		}
	}
	if got[0] != redislib.KeyPrefix+"7" {
		t.Errorf("key 7 reached the library as %q; want %q", got[0], redislib.KeyPrefix+"7")
	}
	if !strings.HasPrefix(got[4], got[3][:256]) || len(got[3]) <= 256 {
		t.Errorf("keys 1027 and 65539 reached it as %d and %d bytes sharing fewer than 256", len(got[3]), len(got[4]))
	}
}
