package lua

// The GET/SET client is the scripts' layout without their atomicity, and
// both refuse a key they did not write.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestGetSetSharesTheScriptsLayout: called one at a time, the GET/SET
// client decides exactly as the Go code does, and it and the script can take
// turns on the same key (same layout, same sliding-log members), so the
// only thing wrong with it is the race.
func TestGetSetSharesTheScriptsLayout(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	const n = 1000
	// Each call waits for its round trip, one at a time on each key, so the
	// keys take their turns at once, each on its own connection (go-redis's
	// pool): the order on every key is the same.
	var wg sync.WaitGroup
	for ai, a := range algos.All() {
		suite := Suite{Calls: n, Seed: uint64(100 + ai)}
		for k := range SuiteKeys {
			wg.Go(func() {
				if err := takeTurns(ctx, t, c, prefix, a, suite, k); err != nil {
					t.Errorf("%s key %d: %v", a.Name, k, err)
				}
			})
		}
	}
	wg.Wait()
}

// takeTurns runs suite's calls of key k on a's script and its GET/SET
// client in turn, and reports (t.Errorf, up to 3) every call that does not
// decide and store what a's Go code does. It returns what stops it.
func takeTurns(ctx context.Context, t *testing.T, c redis.Cmdable, prefix string, a algos.Algorithm, suite Suite, k int) error {
	l, err := New(a.Name)
	if err != nil {
		return err
	}
	na, err := NewGetSet(a.Name)
	if err != nil {
		return err
	}
	times, err := suite.KeyCalls(k)
	if err != nil {
		return err
	}
	lim := SuiteKeys[k].Limit
	key := fmt.Sprintf("%sturns:%s:%d", prefix, a.Name, k)
	var state algos.State
	diffs := 0
	expires := int64(math.MaxInt64) // when the key expires on the store's clock, to the ms
	for i, now := range times {
		req := Args{Key: key, Limit: lim, Told: now}
		want := a.Decide(&state, now, lim)
		var got ScriptReply
		read := int64(0) // the store's clock when the call read the key
		if i%2 == 0 {
			got, err = l.Do(ctx, c, req)
			read = got.RedisTime
		} else {
			var r GetSetReply
			r, err = na.Do(ctx, c, req)
			got, read = r.ScriptReply, r.ReadTime
		}
		if err != nil {
			return err
		}
		if got.Decision != want || !slices.Equal(got.Stored, state.Stored()) {
			// Real time runs on while the told times stand still: a machine
			// that pauses this test for longer than the key had to live
			// lets the store expire it, by its clock.
			var fresh algos.State
			if read >= expires-int64(time.Millisecond/time.Microsecond) {
				if d := a.Decide(&fresh, now, lim); d == got.Decision && slices.Equal(got.Stored, fresh.Stored()) {
					t.Logf("%s key %d call %d: the store's clock passed the key's expiry (%d µs ≥ %d µs), and the call found it absent, as it should", a.Name, k, i, read, expires)
					state, want = fresh, d
				}
			}
		}
		expires = got.RedisTime + TTL(want).Microseconds()
		if got.Decision != want || !slices.Equal(got.Stored, state.Stored()) {
			if diffs++; diffs <= 3 {
				t.Errorf("%s key %d call %d (%s) at %d: go %+v %s, redis %+v %s", a.Name, k, i, map[bool]string{true: "script", false: "GET/SET"}[i%2 == 0],
					now, want, shortInts(state.Stored()), got.Decision, shortInts(got.Stored))
			}
		}
	}
	return nil
}

// TestLuaBadStateIsAnError: a key holding something no script wrote is an
// error from the script and from the GET/SET client, not a guess.
func TestLuaBadStateIsAnError(t *testing.T) {
	t.Parallel() // keys of its own (Prefix); overlaps the binary's other tests
	s := redistest.Start(t)
	c := s.Client(t)
	key := s.Prefix(t) + "garbage"
	ctx := context.Background()
	if err := c.Set(ctx, key, "not:three:ints", 0).Err(); err != nil {
		t.Fatal(err)
	}
	lim := algos.MustLimit(10, algos.Second, 10)
	for _, name := range []string{"token-bucket", "fixed-window"} {
		l, _ := New(name)
		if _, err := l.Call(ctx, c, key, lim, 5); err == nil || !strings.Contains(err.Error(), "three integers") {
			t.Errorf("%s script on a bad key: %v", name, err)
		}
		na, _ := NewGetSet(name)
		if _, err := na.Do(ctx, c, Args{Key: key, Limit: lim, Told: 5}); err == nil || !strings.Contains(err.Error(), "three integers") {
			t.Errorf("%s GET/SET on a bad key: %v", name, err)
		}
	}
}
