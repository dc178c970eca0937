package httplimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Script pings a store that did not answer a call: once, however many
// calls fail together; not again while its ping is under way, nor for as
// long as an answered ping took, once it is answered (its connection is
// the calls'); again after that; and never for an error the store
// answered.
func TestScriptPingsAStoreThatDidNotAnswerOneAtATime(t *testing.T) {
	script, err := lua.New(algos.TokenBucket.Name)
	if err != nil {
		t.Fatal(err)
	}
	limit := algos.MustLimit(10, algos.Second, 10)
	open := func(t *testing.T, store *storeDown) httplimit.Limiter {
		t.Helper()
		lim, err := httplimit.Script(store, script, "p:", limit)
		if err != nil {
			t.Fatal(err)
		}
		return lim
	}
	fail := func(t *testing.T, lim httplimit.Limiter, n int) {
		t.Helper()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := lim.Allow(context.Background(), "k"); err == nil {
					t.Error("a call to a store that does not answer was decided")
				}
			})
		}
		wg.Wait()
	}

	t.Run("not answered", func(t *testing.T) {
		store := &storeDown{err: context.DeadlineExceeded, release: make(chan struct{})}
		lim := open(t, store)
		fail(t, lim, 5)
		waitFor(t, "the first ping", func() bool { return store.pings.Load() == 1 })
		fail(t, lim, 5)
		if n := store.pings.Load(); n != 1 {
			t.Fatalf("%d pings while the first was under way, want 1", n)
		}
		const held = 500 * time.Millisecond // the ping's time, and so its quiet time
		time.Sleep(held)
		close(store.release)
		waitFor(t, "the ping's answer", func() bool { return store.answered.Load() == 1 })
		fail(t, lim, 5)
		if n := store.pings.Load(); n != 1 {
			t.Fatalf("%d pings right after an answered one that took %v, want still 1", n, held)
		}
		time.Sleep(held + 100*time.Millisecond)
		fail(t, lim, 1)
		waitFor(t, "a ping after the quiet time", func() bool { return store.pings.Load() == 2 })
	})

	t.Run("answered with an error", func(t *testing.T) {
		store := &storeDown{err: answeredError("ERR the store said no"), release: make(chan struct{})}
		close(store.release)
		lim := open(t, store)
		fail(t, lim, 5)
		time.Sleep(100 * time.Millisecond)
		if n := store.pings.Load(); n != 0 {
			t.Errorf("%d pings after errors the store answered, want none", n)
		}
	})
}

// storeDown is a Redis client whose every script call fails with err and
// whose pings are answered once release is closed.
type storeDown struct {
	err             error
	release         chan struct{}
	pings, answered atomic.Int32
}

func (s *storeDown) failed() *redis.Cmd { return redis.NewCmdResult(nil, s.err) }

func (s *storeDown) Eval(_ context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return s.failed()
}

func (s *storeDown) EvalSha(_ context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return s.failed()
}

func (s *storeDown) EvalRO(_ context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return s.failed()
}

func (s *storeDown) EvalShaRO(_ context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return s.failed()
}

func (s *storeDown) ScriptExists(context.Context, ...string) *redis.BoolSliceCmd {
	return redis.NewBoolSliceResult(nil, s.err)
}

func (s *storeDown) ScriptLoad(context.Context, string) *redis.StringCmd {
	return redis.NewStringResult("", s.err)
}

func (s *storeDown) Ping(ctx context.Context) *redis.StatusCmd {
	s.pings.Add(1)
	select {
	case <-s.release:
		s.answered.Add(1)
		return redis.NewStatusResult("PONG", nil)
	case <-ctx.Done():
		return redis.NewStatusResult("", ctx.Err())
	}
}

// answeredError is an error the store answered (go-redis's redis.Error).
type answeredError string

func (e answeredError) Error() string { return string(e) }

// RedisError marks e as the store's answer.
func (answeredError) RedisError() {}

// waitFor polls cond for up to 5 s, failing the test with what it waited
// for if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}
