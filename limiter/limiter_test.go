package limiter_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

var l10 = algos.MustLimit(10, algos.Second, 10)

// A Spec missing a part, or a New that fails, returns nil or panics, is an
// error from Open that names the Spec, never a panic.
func TestOpenRefusesWhatCannotRun(t *testing.T) {
	ok := limiter.FromAlgorithm(algos.GCRA)
	cases := []struct {
		name string
		spec limiter.Spec
		lim  algos.Limit
		want string
	}{
		{"no name", limiter.Spec{Clock: limiter.CallerClock, Promise: algos.BucketPromise, New: ok.New}, l10, "needs a Name"},
		{"no clock", limiter.Spec{Name: "x", Promise: algos.BucketPromise, New: ok.New}, l10, "no Clock"},
		{"no promise", limiter.Spec{Name: "x", Clock: limiter.StoreClock, New: ok.New}, l10, "no Promise"},
		{"no new", limiter.Spec{Name: "x", Clock: limiter.StoreClock, Promise: algos.BucketPromise}, l10, "no New"},
		{"no decide", limiter.FromAlgorithm(algos.Algorithm{Name: "x", Promise: algos.BucketPromise}), l10, "no Decide"},
		{"zero limit", ok, algos.Limit{}, "invalid limit"},
		{"new fails", limiter.Spec{Name: "x", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
			New: func(algos.Limit) (limiter.Limiter, error) { return nil, errors.New("no store") }}, l10, "no store"},
		{"new returns nil", limiter.Spec{Name: "x", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
			New: func(algos.Limit) (limiter.Limiter, error) { return nil, nil }}, l10, "no limiter and no error"},
		{"new panics", limiter.Spec{Name: "x", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
			New: func(algos.Limit) (limiter.Limiter, error) { panic("boom") }}, l10, "panicked: boom"},
	}
	for _, c := range cases {
		if _, err := c.spec.Open(c.lim); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Open = %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := ok.Open(l10); err != nil {
		t.Errorf("a good Spec: %v", err)
	}
}

// Memory decides as the algorithm does on its own state, key by key, and
// drops a key at its KeyTTL: present 1 µs before, absent from then on.
func TestMemoryIsTheAlgorithmWithExpiry(t *testing.T) {
	a := algos.FixedWindow
	a.KeyTTL = func(algos.Decision, algos.Limit) int64 { return 3 * algos.Second }
	long := algos.MustLimit(10, 10*algos.Second, 10)
	m, err := limiter.NewMemory(a, long)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var st algos.State
	for i := range int64(12) { // 10 admits, then denials, on key 1 alone
		got, _ := m.Allow(ctx, 1, i)
		if want := algos.FixedWindow.Decide(&st, i, long); got != want {
			t.Fatalf("call %d: %+v, the algorithm %+v", i, got, want)
		}
	}
	if d, _ := m.Allow(ctx, 0, 11); !d.Allowed {
		t.Error("key 0 shares key 1's window")
	}
	// The window [0, 10 s) is full. The key written at 11 µs is still
	// there 1 µs before its expiry (a denial, which writes it again), and
	// gone 3 s after that write: a fresh key admits, with 9 remaining.
	at := 11 + 3*algos.Second - 1
	if d, _ := m.Allow(ctx, 1, at); d.Allowed {
		t.Errorf("1 µs before the expiry: %+v, want the full window's denial", d)
	}
	if d, _ := m.Allow(ctx, 1, at+3*algos.Second); !d.Allowed || d.Remaining != 9 {
		t.Errorf("at the expiry: %+v, want a fresh key's admit with 9 remaining", d)
	}
	if _, err := m.Allow(ctx, -1, 0); err == nil {
		t.Error("a negative key was accepted")
	}
	if got, want := limiter.ExpiresAt(algos.MaxTime, 5), algos.MaxTime+1; got != want {
		t.Errorf("ExpiresAt(MaxTime, 5) = %d, want %d", got, want)
	}
	if got := limiter.ExpiresAt(100, -7); got != 101 {
		t.Errorf("a TTL below 1 µs keeps the key %d µs, want 1", got-100)
	}
}

// PerKey makes one object per key, on the key's first request and told
// that request's time, and a panic in the object is an error through
// limiter.Allow.
func TestPerKeyMakesOneObjectPerKey(t *testing.T) {
	made := 0
	var firsts []int64
	newKey := func(_ algos.Limit, first int64) (limiter.Decider, error) {
		made++
		firsts = append(firsts, first)
		n := 0
		return limiter.DeciderFunc(func(now int64) algos.Decision {
			n++
			if now < 0 {
				panic("negative time")
			}
			return algos.Decision{Allowed: n <= 2}
		}), nil
	}
	lim, err := limiter.PerKey(newKey)(l10)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var got []bool
	for i, key := range []int{0, 0, 0, 3, 3} {
		d, err := limiter.Allow(ctx, lim, key, int64(10+i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Allowed)
	}
	if want := []bool{true, true, false, true, true}; made != 3 || !slices.Equal(got, want) {
		t.Errorf("made %d objects (want 3: one up front, one per key), decisions %v (want %v)", made, got, want)
	}
	if want := []int64{0, 10, 13}; !slices.Equal(firsts, want) {
		t.Errorf("objects built at %v µs, want %v: up front at 0, then each at its key's first call", firsts, want)
	}
	if _, err := limiter.Allow(ctx, lim, 0, -1); err == nil || !strings.Contains(err.Error(), "negative time") {
		t.Errorf("a panicking object: %v, want the panic as an error", err)
	}
}

// panicky panics on key 7 and answers a full Decision otherwise.
type panicky struct{}

func (panicky) Allow(_ context.Context, key int, now int64) (algos.Decision, error) {
	if key == 7 {
		panic("seven")
	}
	return algos.Decision{Allowed: true, Remaining: 1, RetryAfter: 2, Reset: now, Delay: 4}, nil
}

// TestAllowIntoIsAllow holds AllowInto to Allow: the whole answer copied,
// and a panic turned into a *Panic with the zero Decision, whatever *out
// held before.
func TestAllowIntoIsAllow(t *testing.T) {
	ctx := context.Background()
	out := algos.Decision{Allowed: true, Remaining: 9, RetryAfter: 9, Reset: 9, Delay: 9}
	if err := limiter.AllowInto(ctx, panicky{}, 1, 3, &out); err != nil || out != (algos.Decision{Allowed: true, Remaining: 1, RetryAfter: 2, Reset: 3, Delay: 4}) {
		t.Errorf("AllowInto: %+v, %v", out, err)
	}
	if d, err := limiter.Allow(ctx, panicky{}, 1, 3); err != nil || d != out {
		t.Errorf("Allow: %+v, %v, want %+v", d, err, out)
	}
	var p *limiter.Panic
	if err := limiter.AllowInto(ctx, panicky{}, 7, 3, &out); !errors.As(err, &p) || p.Key != 7 || p.Value != "seven" || out != (algos.Decision{}) {
		t.Errorf("AllowInto of a panic: %+v, %v", out, err)
	}
	if d, err := limiter.Allow(ctx, panicky{}, 7, 3); !errors.As(err, &p) || d != (algos.Decision{}) {
		t.Errorf("Allow of a panic: %+v, %v", d, err)
	}
}

// panickyInto is panicky that writes its decisions itself (limiter.Into),
// told apart from Allow's by a Delay of 5.
type panickyInto struct{ panicky }

func (p panickyInto) AllowInto(ctx context.Context, key int, now int64, out *algos.Decision) error {
	d, err := p.Allow(ctx, key, now)
	d.Delay = 5
	*out = d
	return err
}

// TestAllowIntoCallsInto: a limiter that is an Into writes the decision
// itself, and its panic is a *Panic with the zero Decision as Allow's.
func TestAllowIntoCallsInto(t *testing.T) {
	ctx := context.Background()
	var out algos.Decision
	if err := limiter.AllowInto(ctx, panickyInto{}, 1, 3, &out); err != nil || out != (algos.Decision{Allowed: true, Remaining: 1, RetryAfter: 2, Reset: 3, Delay: 5}) {
		t.Errorf("AllowInto of an Into: %+v, %v", out, err)
	}
	var p *limiter.Panic
	if err := limiter.AllowInto(ctx, panickyInto{}, 7, 3, &out); !errors.As(err, &p) || p.Key != 7 || out != (algos.Decision{}) {
		t.Errorf("AllowInto of an Into's panic: %+v, %v", out, err)
	}
}
