package httplimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Script pings a store that did not answer a call: once, however many
// calls fail together; never two at a time; not again, once one is
// answered, for as long as that ping took (its connection is the calls');
// again after that; and never for an error the store answered. The quiet
// time is judged on the times the store recorded, not on how fast this
// machine ran the test: a ping Script starts after another was answered
// must start no earlier than the answer plus the answered ping's length.
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
	// failUntil makes one failing call every millisecond until cond holds
	// (5 s at the most).
	failUntil := func(t *testing.T, lim httplimit.Limiter, what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 5 s for %s", what)
			}
			fail(t, lim, 1)
		}
	}

	t.Run("not answered", func(t *testing.T) {
		store := &storeDown{err: context.DeadlineExceeded, release: make(chan struct{})}
		lim := open(t, store)
		fail(t, lim, 5)
		waitFor(t, "the first ping", func() bool { return store.pingCount() == 1 })
		fail(t, lim, 5)
		// Read in this order, a first ping not yet ended means none other
		// could have started before the count was read.
		if n, first := store.pingCount(), store.ping(0); first.ended.IsZero() && n != 1 {
			t.Fatalf("%d pings while the first was under way, want 1", n)
		}
		time.Sleep(500 * time.Millisecond) // the held ping's length, and so its quiet time
		close(store.release)
		// A busy machine may have let the held ping reach its budget
		// (RewarmTimeout) first: then the next failing call pings again,
		// and that ping is answered.
		failUntil(t, lim, "an answered ping", func() bool { return store.answeredPing() >= 0 })
		i := store.answeredPing()
		answered := store.ping(i)
		quietUntil := answered.ended.Add(answered.ended.Sub(answered.started))
		failUntil(t, lim, "a ping after the quiet time", func() bool { return store.pingCount() > i+1 })
		if next := store.ping(i + 1); next.started.Before(quietUntil) {
			t.Errorf("a ping started %v after the answer to one that took %v: want no ping for as long as it took",
				next.started.Sub(answered.ended), answered.ended.Sub(answered.started))
		}
		store.mu.Lock()
		most := store.mostAtOnce
		store.mu.Unlock()
		if most != 1 {
			t.Errorf("%d pings under way at once, want 1", most)
		}
	})

	t.Run("answered with an error", func(t *testing.T) {
		store := &storeDown{err: answeredError("ERR the store said no"), release: make(chan struct{})}
		close(store.release)
		lim := open(t, store)
		fail(t, lim, 5)
		time.Sleep(100 * time.Millisecond)
		if n := store.pingCount(); n != 0 {
			t.Errorf("%d pings after errors the store answered, want none", n)
		}
	})
}

// storeDown is a Redis client whose every script call fails with err and
// whose pings are answered once release is closed; it records when each
// ping started and ended, and whether it was answered.
type storeDown struct {
	err        error
	release    chan struct{}
	mu         sync.Mutex
	pings      []pingTimes
	mostAtOnce int // the most pings under way at once
}

// pingTimes is one ping as the store saw it.
type pingTimes struct {
	started, ended time.Time // ended is zero while it is under way
	answered       bool
}

func (s *storeDown) pingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pings)
}

func (s *storeDown) ping(i int) pingTimes {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pings[i]
}

// answeredPing is the index of the first answered ping, or -1.
func (s *storeDown) answeredPing() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pings {
		if p.answered {
			return i
		}
	}
	return -1
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
	s.mu.Lock()
	i := len(s.pings)
	s.pings = append(s.pings, pingTimes{started: time.Now()})
	underWay := 0
	for _, p := range s.pings {
		if p.ended.IsZero() {
			underWay++
		}
	}
	s.mostAtOnce = max(s.mostAtOnce, underWay)
	s.mu.Unlock()
	end := func(answered bool) {
		s.mu.Lock()
		s.pings[i].ended, s.pings[i].answered = time.Now(), answered
		s.mu.Unlock()
	}
	select {
	case <-s.release:
		end(true)
		return redis.NewStatusResult("PONG", nil)
	case <-ctx.Done():
		end(false)
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
