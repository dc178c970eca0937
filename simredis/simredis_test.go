package simredis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// start is a Server and a client of it, both closed when t ends.
func start(t testing.TB) (*Server, *redis.Client) {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return s, c
}

func setClock(t testing.TB, s *Server, us int64) {
	t.Helper()
	if err := s.SetClock(us); err != nil {
		t.Fatal(err)
	}
}

// timeOf reads TIME from c and from a script, which must agree, as µs.
func timeOf(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	ctx := context.Background()
	got, err := c.Do(ctx, "TIME").StringSlice()
	if err != nil || len(got) != 2 {
		t.Fatalf("TIME: %v %v", got, err)
	}
	inScript, err := c.Eval(ctx, "local t = redis.call('TIME') return t[1] .. ' ' .. t[2]", nil).Text()
	if err != nil {
		t.Fatal(err)
	}
	if want := got[0] + " " + got[1]; inScript != want {
		t.Fatalf("TIME in a script is %q, TIME is %q", inScript, want)
	}
	var sec, us int64
	fmt.Sscan(got[0], &sec)
	fmt.Sscan(got[1], &us)
	if us < 0 || us > 999_999 {
		t.Fatalf("TIME's microseconds are %d", us)
	}
	return sec*1_000_000 + us
}

// TestSimredisTimeIsTheClock: TIME (from a client and from a script) is
// exactly the clock, to the µs, from the epoch at Start to the last µs
// SetClock accepts, and after StepBack; the machine's clock never shows.
func TestSimredisTimeIsTheClock(t *testing.T) {
	s, c := start(t)
	checks := 0
	check := func(want int64) {
		t.Helper()
		if got := timeOf(t, c); got != want {
			t.Fatalf("TIME = %d µs, clock %d µs", got, want)
		}
		if s.Clock() != want {
			t.Fatalf("Clock() = %d, want %d", s.Clock(), want)
		}
		checks++
	}
	check(0)
	for _, us := range []int64{0, 1, 999_999, 1_000_000, 1_700_000_000_123_456, 1_700_000_000_123_456, 1_700_000_000_999_999, 3_187_296_000_000_000, MaxClock} {
		setClock(t, s, us)
		check(us)
	}
	if err := s.StepBack(1_700_000_000_000_001); err != nil {
		t.Fatal(err)
	}
	check(1_700_000_000_000_001)
	time.Sleep(3 * time.Millisecond) // the machine's clock moves; the store's does not
	check(1_700_000_000_000_001)
	t.Logf("measured: %d TIME checks, each exactly the clock", checks)
	if checks != 12 {
		t.Fatalf("%d TIME checks, want 12", checks)
	}
}

// TestSimredisClockRejects: a clock that goes backwards, below 0 or past
// MaxClock is an error that changes nothing; StepBack does not go forward;
// nothing works after Close.
func TestSimredisClockRejects(t *testing.T) {
	s, c := start(t)
	setClock(t, s, 5_000_000)
	ctx := context.Background()
	c.Set(ctx, "k", "v", 10*time.Millisecond)
	err := s.SetClock(4_999_999)
	if !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("SetClock backwards: %v, want ErrClockBackwards", err)
	}
	for _, bad := range []int64{-1, MaxClock + 1} {
		if err := s.SetClock(bad); err == nil || errors.Is(err, ErrClockBackwards) {
			t.Errorf("SetClock(%d): %v, want an out-of-range error", bad, err)
		}
	}
	if err := s.StepBack(5_000_001); err == nil {
		t.Error("StepBack forward: no error")
	}
	if s.Clock() != 5_000_000 || timeOf(t, c) != 5_000_000 {
		t.Fatalf("a refused clock moved it: %d", s.Clock())
	}
	if pttl := c.PTTL(ctx, "k").Val(); pttl != 10*time.Millisecond {
		t.Fatalf("a refused clock changed a PTTL: %v", pttl)
	}
	s.Close()
	s.Close()
	if err := s.SetClock(6_000_000); !errors.Is(err, ErrClosed) {
		t.Fatalf("SetClock after Close: %v", err)
	}
}

// expiryProbe is one way of setting an expiry, at the clock, that Redis
// turns into the absolute expiry want (ms), read back by PEXPIRETIME.
type expiryProbe struct {
	name string
	set  func(ctx context.Context, c *redis.Client, key string, clock int64) (want int64)
}

var expiryProbes = []expiryProbe{
	{"SET PX 250", func(ctx context.Context, c *redis.Client, key string, clock int64) int64 {
		c.Do(ctx, "SET", key, "v", "PX", 250)
		return clock/1000 + 250
	}},
	{"PEXPIRE 1", func(ctx context.Context, c *redis.Client, key string, clock int64) int64 {
		c.Do(ctx, "SET", key, "v")
		c.Do(ctx, "PEXPIRE", key, 1)
		return clock/1000 + 1
	}},
	{"EXPIRE 2", func(ctx context.Context, c *redis.Client, key string, clock int64) int64 {
		c.Do(ctx, "HSET", key, "f", "1")
		c.Do(ctx, "EXPIRE", key, 2)
		return clock/1000 + 2000
	}},
	{"PEXPIREAT +3", func(ctx context.Context, c *redis.Client, key string, clock int64) int64 {
		c.Do(ctx, "ZADD", key, 1, "m")
		c.Do(ctx, "PEXPIREAT", key, clock/1000+3)
		return clock/1000 + 3
	}},
	{"script SET PX 7", func(ctx context.Context, c *redis.Client, key string, clock int64) int64 {
		c.Eval(ctx, "redis.call('SET', KEYS[1], 'v', 'PX', 7) return 1", []string{key})
		return clock/1000 + 7
	}},
	{"script INCR, PEXPIRE 1000", func(ctx context.Context, c *redis.Client, key string, clock int64) int64 {
		c.Eval(ctx, "redis.call('INCR', KEYS[1]) redis.call('PEXPIRE', KEYS[1], 1000) return 1", []string{key})
		return clock/1000 + 1000
	}},
}

// TestSimredisExpiryFollowsTheClock: for each way of setting an expiry, at
// clocks on and off the ms: PEXPIRETIME is Redis's absolute expiry T, PTTL
// counts down T - ⌊clock/1000⌋ as the clock moves (in steps of 1 µs to
// whole ms, and with the same value set twice), the key is there at the
// last µs of ms T with PTTL 0 and TTL 0, and gone at (T+1)·1000 µs: not
// 1 ms early (miniredis's own rule) and not late.
func TestSimredisExpiryFollowsTheClock(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	checks, keys := 0, 0
	clock := int64(1_700_000_000_000_000)
	for _, off := range []int64{0, 1, 500, 999} {
		for _, p := range expiryProbes {
			clock = (clock/1000+10_000)*1000 + off // a fresh ms, then off µs into it
			setClock(t, s, clock)
			key := fmt.Sprintf("k:%d:%s", off, p.name)
			want := p.set(ctx, c, key, clock)
			keys++
			gone := (want + 1) * 1000 // the first µs at which Redis has dropped it
			steps := []int64{clock, clock, clock + 1, (clock/1000 + 1) * 1000, (clock+gone)/2 - 1, (clock + gone) / 2, gone - 1000, gone - 1, gone - 1}
			for _, at := range steps {
				if at < s.Clock() {
					continue
				}
				setClock(t, s, at)
				if et := c.PExpireTime(ctx, key).Val(); et != time.Duration(want)*time.Millisecond {
					t.Fatalf("%s at %d µs: PEXPIRETIME %v, want %d ms", key, at, et, want)
				}
				wantPTTL := want - at/1000
				if pttl := c.PTTL(ctx, key).Val(); pttl != time.Duration(wantPTTL)*time.Millisecond {
					t.Fatalf("%s at %d µs (expiry %d ms): PTTL %v, want %d ms", key, at, want, pttl, wantPTTL)
				}
				if ttl := c.TTL(ctx, key).Val(); ttl != time.Duration((wantPTTL+500)/1000)*time.Second {
					t.Fatalf("%s at %d µs: TTL %v, want %d s (Redis rounds)", key, at, ttl, (wantPTTL+500)/1000)
				}
				checks++
			}
			setClock(t, s, gone)
			if n := c.Exists(ctx, key).Val(); n != 0 {
				t.Fatalf("%s: still there at %d µs, expiry %d ms", key, gone, want)
			}
			if pttl := c.PTTL(ctx, key).Val(); pttl != -2 {
				t.Fatalf("%s: PTTL %v after expiry, want -2", key, pttl)
			}
			checks++
			clock = gone
		}
	}
	t.Logf("measured: %d keys, %d expiry checks (PEXPIRETIME, PTTL, TTL or gone), all on Redis's rule", keys, checks)
	if keys != 4*len(expiryProbes) || checks < 30*len(expiryProbes) {
		t.Fatalf("%d keys, %d checks: fewer than planned", keys, checks)
	}
}

// TestSimredisStepBackKeepsAbsoluteExpiry: stepping the clock back keeps
// each key's PEXPIRETIME, so PTTL grows by the step, and the key still goes
// at the same µs when the clock comes forward again.
func TestSimredisStepBackKeepsAbsoluteExpiry(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	setClock(t, s, 10_000_500)
	c.Set(ctx, "k", "v", 20*time.Millisecond) // expiry 10_020 ms: gone at 10_021_000 µs
	if err := s.StepBack(9_950_000); err != nil {
		t.Fatal(err)
	}
	if got := c.PTTL(ctx, "k").Val(); got != 70*time.Millisecond {
		t.Fatalf("PTTL after a 50.5 ms step back: %v, want 70ms", got)
	}
	if got := c.PExpireTime(ctx, "k").Val(); got != 10_020*time.Millisecond {
		t.Fatalf("PEXPIRETIME after a step back: %v", got)
	}
	setClock(t, s, 10_020_999)
	if c.Exists(ctx, "k").Val() != 1 || c.PTTL(ctx, "k").Val() != 0 {
		t.Fatal("gone before the end of its last ms")
	}
	setClock(t, s, 10_021_000)
	if c.Exists(ctx, "k").Val() != 0 {
		t.Fatal("there after its last ms")
	}
}

// TestSimredisWipe: Wipe drops every key of every database and every
// script, as a restart without persistence; EVALSHA answers NOSCRIPT, a
// go-redis Script runs again through EVAL, and the clock stays.
func TestSimredisWipe(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	setClock(t, s, 42_000_000)
	script := redis.NewScript("return redis.call('INCR', KEYS[1])")
	c.Set(ctx, "a", "1", 0)
	c.Set(ctx, "b", "1", time.Second)
	c.Do(ctx, "SELECT", "3") // on one pooled connection, which is all the pool has yet
	if n, err := script.Run(ctx, c, []string{"c"}).Int64(); err != nil || n != 1 {
		t.Fatalf("script before Wipe: %v %v", n, err)
	}
	s.Wipe()
	if n := c.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("%d keys after Wipe", n)
	}
	for db := range Databases {
		if keys := s.m.DB(db).Keys(); len(keys) != 0 {
			t.Fatalf("database %d holds %v after Wipe", db, keys)
		}
	}
	if err := c.EvalSha(ctx, script.Hash(), []string{"c"}).Err(); err == nil || err.Error()[:8] != "NOSCRIPT" {
		t.Fatalf("EVALSHA after Wipe: %v, want NOSCRIPT", err)
	}
	if n, err := script.Run(ctx, c, []string{"c"}).Int64(); err != nil || n != 1 {
		t.Fatalf("script after Wipe: %v %v, want 1 (the counter was wiped)", n, err)
	}
	if s.Clock() != 42_000_000 || timeOf(t, c) != 42_000_000 {
		t.Fatal("Wipe moved the clock")
	}
}
