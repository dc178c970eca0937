package httplimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/limiter"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })

// fixed is a limiter that answers d, or err, whatever the key.
func fixed(d algos.Decision, err error) httplimit.Limiter {
	return httplimit.LimiterFunc(func(context.Context, string) (algos.Decision, error) { return d, err })
}

func serve(t *testing.T, m *httplimit.Middleware, key string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if key != "" {
		r.Header.Set("X-API-Key", key)
	}
	w := httptest.NewRecorder()
	m.Wrap(ok).ServeHTTP(w, r)
	return w.Result()
}

func mustNew(t *testing.T, lim httplimit.Limiter, o httplimit.Options) *httplimit.Middleware {
	t.Helper()
	m, err := httplimit.New(lim, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A denial's Retry-After is the limiter's wait rounded UP to whole seconds
// and never 0, so a client that waits exactly that long is not early.
func TestRetryAfterRoundsUpAndIsNeverZero(t *testing.T) {
	for _, c := range []struct {
		retryUS int64
		want    string
	}{
		{0, "1"}, {1, "1"}, {999_999, "1"}, {1_000_000, "1"}, {1_000_001, "2"}, {1_500_000, "2"}, {60_000_000, "60"},
	} {
		m := mustNew(t, fixed(algos.Decision{RetryAfter: c.retryUS, Reset: c.retryUS}, nil), httplimit.Options{Quota: 10})
		res := serve(t, m, "k")
		if res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("retry %d µs: status %d, want 429", c.retryUS, res.StatusCode)
		}
		if got := res.Header.Get("Retry-After"); got != c.want {
			t.Errorf("retry %d µs: Retry-After %q, want %q", c.retryUS, got, c.want)
		}
	}
}

// Every decided response carries the triplet; a success carries no
// Retry-After.
func TestEveryDecidedResponseCarriesTheTriplet(t *testing.T) {
	lim, err := httplimit.Local(limiter.FromAlgorithm(algos.TokenBucket), algos.MustLimit(3, algos.Second, 3), func() int64 { return 5 * algos.Second })
	if err != nil {
		t.Fatal(err)
	}
	m := mustNew(t, lim, httplimit.Options{Quota: 3})
	wantRemaining := []string{"2", "1", "0", "0"}
	for i, want := range wantRemaining {
		res := serve(t, m, "alice")
		h := res.Header
		if h.Get("X-RateLimit-Limit") != "3" || h.Get("X-RateLimit-Remaining") != want || h.Get("X-RateLimit-Reset") == "" {
			t.Errorf("request %d: Limit %q Remaining %q Reset %q, want 3, %s and a Reset", i, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), want)
		}
		if allowed := res.StatusCode == http.StatusOK; allowed != (i < 3) {
			t.Errorf("request %d: status %d", i, res.StatusCode)
		}
		if (res.StatusCode == http.StatusOK) == (h.Get("Retry-After") != "") {
			t.Errorf("request %d: status %d with Retry-After %q", i, res.StatusCode, h.Get("Retry-After"))
		}
	}
	if res := serve(t, m, "bob"); res.StatusCode != http.StatusOK {
		t.Errorf("another key was refused: %d", res.StatusCode)
	}
	if s := m.Stats(); s.Admitted != 4 || s.Denied != 1 {
		t.Errorf("stats %+v, want 4 admitted and 1 denied", s)
	}
}

// A limiter that fails is settled by the policy, and the response and the
// counters both say so: failing open is never silent.
func TestFailuresAreCountedAndVisible(t *testing.T) {
	down := fixed(algos.Decision{}, errors.New("dial tcp 127.0.0.1:6379: connection refused"))
	open := mustNew(t, down, httplimit.Options{Quota: 10, OnError: httplimit.FailOpen})
	closed := mustNew(t, down, httplimit.Options{Quota: 10, OnError: httplimit.FailClosed})
	for range 3 {
		if res := serve(t, open, "k"); res.StatusCode != http.StatusOK || res.Header.Get("X-RateLimit-Degraded") != "fail-open" {
			t.Errorf("fail-open: status %d, degraded %q", res.StatusCode, res.Header.Get("X-RateLimit-Degraded"))
		}
		res := serve(t, closed, "k")
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("X-RateLimit-Degraded") != "fail-closed" || res.Header.Get("Retry-After") != "1" {
			t.Errorf("fail-closed: status %d, degraded %q, Retry-After %q", res.StatusCode, res.Header.Get("X-RateLimit-Degraded"), res.Header.Get("Retry-After"))
		}
	}
	if s := open.Stats(); s != (httplimit.Stats{FailedOpen: 3}) {
		t.Errorf("fail-open stats %+v, want 3 failed open", s)
	}
	if s := closed.Stats(); s != (httplimit.Stats{FailedClosed: 3}) {
		t.Errorf("fail-closed stats %+v, want 3 failed closed", s)
	}
}

// A store that stops answering costs a request the Timeout, not longer.
func TestTimeoutBoundsADecision(t *testing.T) {
	hang := httplimit.LimiterFunc(func(ctx context.Context, _ string) (algos.Decision, error) {
		<-ctx.Done()
		return algos.Decision{}, ctx.Err()
	})
	m := mustNew(t, hang, httplimit.Options{Quota: 1, Timeout: 20 * time.Millisecond, OnError: httplimit.FailOpen})
	start := time.Now()
	res := serve(t, m, "k")
	if took := time.Since(start); took > 2*time.Second || res.StatusCode != http.StatusOK {
		t.Errorf("took %v with status %d; want fail-open after ~20ms", took, res.StatusCode)
	}
}

func TestKeys(t *testing.T) {
	key := httplimit.FirstOf(httplimit.ByHeader("X-API-Key"), httplimit.ByIP)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	if k, err := key(r); err != nil || k != "ip:127.0.0.1" {
		t.Errorf("no header: %q, %v", k, err)
	}
	r.Header.Set("X-API-Key", "abc")
	if k, err := key(r); err != nil || k != "h:abc" {
		t.Errorf("header: %q, %v", k, err)
	}
	r.RemoteAddr = ""
	if _, err := httplimit.ByHeader("X-Other")(r); !errors.Is(err, httplimit.ErrNoKey) {
		t.Errorf("absent header: %v, want ErrNoKey", err)
	}
	m := mustNew(t, fixed(algos.Decision{Allowed: true}, nil), httplimit.Options{Quota: 1, Key: httplimit.ByHeader("X-Other")})
	if res := serve(t, m, "k"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a request without its key: status %d, want 400", res.StatusCode)
	}
}

func TestBadOptionsAreRefused(t *testing.T) {
	lim := fixed(algos.Decision{Allowed: true}, nil)
	for _, c := range []struct {
		lim  httplimit.Limiter
		o    httplimit.Options
		want string
	}{
		{nil, httplimit.Options{Quota: 1}, "no limiter"},
		{lim, httplimit.Options{}, "Quota must be positive, got 0"},
		{lim, httplimit.Options{Quota: 1, OnError: 7}, "unknown policy"},
		{lim, httplimit.Options{Quota: 1, Timeout: -1}, "negative Timeout"},
	} {
		if _, err := httplimit.New(c.lim, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := httplimit.Local(limiter.FromAlgorithm(algos.TokenBucket), algos.Limit{}, nil); err == nil {
		t.Error("Local took a zero limit")
	}
}

func TestQuotaIsWhatAFreshKeyIsAdmittedAtOnce(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 20)
	for _, a := range algos.All() {
		q, err := httplimit.QuotaOf(limiter.FromAlgorithm(a), l)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := limiter.NewMemory(a, l)
		admitted := int64(0)
		for {
			d, _ := m.Allow(context.Background(), 0, 7*algos.Second)
			if !d.Allowed {
				break
			}
			admitted++
		}
		if q != admitted {
			t.Errorf("%s: quota %d, but a fresh key was admitted %d at once", a.Name, q, admitted)
		}
	}
}
