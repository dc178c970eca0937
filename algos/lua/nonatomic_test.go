package lua

// The GET/SET client is the scripts' layout without their atomicity, and
// both refuse a key they did not write.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
)

// TestNonAtomicSharesTheScriptsLayout: called one at a time, the GET/SET
// client decides exactly as the Go code does, and it and the script can take
// turns on the same key (same layout, same sliding-log members), so the
// only thing wrong with it is the race.
func TestNonAtomicSharesTheScriptsLayout(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()
	const n = 1000
	for ai, a := range algos.All() {
		l, err := New(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		na, err := NewNonAtomic(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		diffs := 0
		suite := Suite{Calls: n, Seed: uint64(100 + ai)}
		for k, sk := range SuiteKeys {
			lim := sk.Limit
			times, err := suite.KeyCalls(k)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("%sturns:%s:%d", prefix, a.Name, k)
			var state algos.State
			for i, now := range times {
				req := Args{Key: key, Limit: lim, Now: now}
				want := a.Decide(&state, now, lim)
				var got Reply
				if i%2 == 0 {
					got, err = l.Do(ctx, c, req)
				} else {
					var r NonAtomicReply
					r, err = na.Do(ctx, c, req)
					got = r.Reply
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.Decision != want || !slices.Equal(got.Stored, state.Stored()) {
					if diffs++; diffs <= 3 {
						t.Errorf("%s key %d call %d (%s) at %d: go %+v %s, redis %+v %s", a.Name, k, i, map[bool]string{true: "script", false: "GET/SET"}[i%2 == 0],
							now, want, shortInts(state.Stored()), got.Decision, shortInts(got.Stored))
					}
				}
			}
		}
	}
}

// TestLuaBadStateIsAnError: a key holding something no script wrote is an
// error from the script and from the GET/SET client, not a guess.
func TestLuaBadStateIsAnError(t *testing.T) {
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
		na, _ := NewNonAtomic(name)
		if _, err := na.Do(ctx, c, Args{Key: key, Limit: lim, Now: 5}); err == nil || !strings.Contains(err.Error(), "three integers") {
			t.Errorf("%s GET/SET on a bad key: %v", name, err)
		}
	}
}
