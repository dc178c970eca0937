package lua

import (
	"context"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/redis/go-redis/v9"
)

// TestEveryAlgorithmHasAScript: each registered algorithm loads, as the
// prelude followed by its own file, and nothing else does.
func TestEveryAlgorithmHasAScript(t *testing.T) {
	prelude, err := sources.ReadFile("prelude.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range algos.All() {
		l, err := New(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := Source(a.Name)
		if !strings.HasPrefix(src, string(prelude)) || len(src) == len(prelude) {
			t.Errorf("%s: the source is not the prelude followed by the script", a.Name)
		}
		if l.Name() != a.Name || l.Algorithm().Name != a.Name || len(l.SHA()) != 40 {
			t.Errorf("%s: Name %q, Algorithm %q, SHA %q", a.Name, l.Name(), l.Algorithm().Name, l.SHA())
		}
	}
	for _, bad := range []string{"prelude", "no-such", ""} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
	if _, err := NewGetSet("no-such"); err == nil {
		t.Error(`NewGetSet("no-such") succeeded`)
	}
}

// TestTTL is the bound every script states: reset rounded up to the ms,
// plus the margin.
func TestTTL(t *testing.T) {
	for _, c := range []struct {
		reset int64
		want  time.Duration
	}{
		{0, time.Second},
		{-5, time.Second},
		{1, time.Second + time.Millisecond},
		{1000, time.Second + time.Millisecond},
		{1001, time.Second + 2*time.Millisecond},
		{3 * algos.Second, 4 * time.Second},
		{math.MaxInt64, math.MaxInt64}, // saturates, never wraps
	} {
		if got := TTL(algos.Decision{Reset: c.reset}); got != c.want {
			t.Errorf("TTL(reset %d µs) = %v, want %v", c.reset, got, c.want)
		}
	}
	// The scripts' own margin is the same constant.
	prelude, _ := sources.ReadFile("prelude.lua")
	if !strings.Contains(string(prelude), "local MARGIN_MS = 1000\n") || TTLMargin != time.Second {
		t.Error("prelude.lua's MARGIN_MS and TTLMargin disagree")
	}
}

// TestBadRepliesAreErrors: a reply of the wrong shape is an error that says
// what was wrong, never a panic.
func TestBadRepliesAreErrors(t *testing.T) {
	l, _ := New("gcra")
	for _, v := range []any{
		nil,
		"OK",
		int64(1),
		[]any{int64(1), int64(2)},
		[]any{int64(1), int64(0), int64(0), int64(0), int64(0), "x"},
		[]any{int64(2), int64(0), int64(0), int64(0), int64(0), int64(0)},
		[]any{int64(1), int64(0), int64(0), int64(0), int64(0), int64(0), nil},
	} {
		if _, err := l.parse("k", v); err == nil || !strings.Contains(err.Error(), "bad reply") {
			t.Errorf("parse(%#v) = %v, want a bad reply error", v, err)
		}
	}
	r, err := l.parse("k", []any{int64(1), int64(4), int64(0), int64(10), int64(17), int64(3), int64(100), int64(7), int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	want := ScriptReply{Decision: algos.Decision{Allowed: true, Remaining: 4, Reset: 10}, RedisTime: 17, Seq: 3, Stored: []int64{100, 7, 0}}
	if r.Decision != want.Decision || r.RedisTime != want.RedisTime || r.Seq != want.Seq || len(r.Stored) != 3 || r.Stored[0] != 100 || r.Stored[1] != 7 {
		t.Errorf("parse = %+v, want %+v", r, want)
	}
}

// TestUnreachableRedisIsAnError: every client of the package returns an
// error naming the key when Redis does not answer; an invalid limit is an
// error before anything is sent.
func TestUnreachableRedisIsAnError(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second, DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	lim := algos.MustLimit(1, algos.Second, 1)
	l, _ := New("token-bucket")
	if _, err := l.Call(ctx, c, "k", lim, -1); err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("Call on a closed port: %v", err)
	}
	if _, err := l.DoAll(ctx, c, []Args{{Key: "k", Limit: lim}}); err == nil {
		t.Error("DoAll on a closed port succeeded")
	}
	n, _ := NewGetSet("sliding-log")
	if _, err := n.Do(ctx, c, Args{Key: "k", Limit: lim, Told: 5}); err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("GetSet.Do on a closed port: %v", err)
	}
	if _, err := GetThenIncr(ctx, c, "k", lim, 5); err == nil {
		t.Error("GetThenIncr on a closed port succeeded")
	}
	for _, bad := range []algos.Limit{{}, {Rate: 1, Window: 1, Burst: 1}} {
		if _, err := l.Call(ctx, c, "k", bad, 5); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("Call with limit %+v: %v, want a limit error", bad, err)
		}
	}
	if _, err := l.Call(ctx, c, "", lim, 5); err == nil {
		t.Error("Call with an empty key succeeded")
	}
}

// TestBenchShUsesTheBenchmarkLimit: bench.sh passes the ARGV that
// benchLimit derives, so that it and BenchmarkLua measure the same work.
func TestBenchShUsesTheBenchmarkLimit(t *testing.T) {
	sh, err := os.ReadFile("bench.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^limit="(.*)"$`).FindSubmatch(sh)
	l := benchLimit
	want := strings.Join([]string{"-1", strconv.FormatInt(l.Rate, 10), strconv.FormatInt(l.Window, 10), strconv.FormatInt(l.Burst, 10),
		strconv.FormatInt(l.Unit, 10), strconv.FormatInt(l.Refill, 10)}, " ")
	if m == nil || string(m[1]) != want {
		t.Errorf("bench.sh limit line is %q, want %q", m, want)
	}
}
