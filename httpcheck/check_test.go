package httpcheck_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httpcheck"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/limiter"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok\n"))
})

// local is alg enforcing l in this process, and the quota it advertises.
func local(t testing.TB, alg algos.Algorithm, l algos.Limit) (httplimit.Limiter, int64) {
	t.Helper()
	spec := limiter.FromAlgorithm(alg)
	lim, err := httplimit.Local(spec, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := httplimit.QuotaOf(spec, l)
	if err != nil {
		t.Fatal(err)
	}
	return lim, q
}

// behind is the reference middleware putting lim in front of ok.
func behind(t testing.TB, lim httplimit.Limiter, quota int64, policy httplimit.FailurePolicy) http.Handler {
	t.Helper()
	mw, err := httplimit.New(lim, httplimit.Options{Quota: quota, OnError: policy})
	if err != nil {
		t.Fatal(err)
	}
	return mw.Wrap(ok)
}

// reference is httplimit over alg enforcing l.
func reference(t testing.TB, alg algos.Algorithm, l algos.Limit) (http.Handler, int64) {
	lim, q := local(t, alg, l)
	return behind(t, lim, q, httplimit.FailClosed), q
}

// started runs a check of h in the background and returns a wait for its
// outcome. The tests start every check before judging any: a check spends
// its time waiting out a Retry-After, and t.Parallel alone would run them
// -parallel (GOMAXPROCS, 2 on a small machine) at a time.
func started(t *testing.T, h http.Handler, o httpcheck.Options) func() (*httpcheck.Report, error) {
	type outcome struct {
		r   *httpcheck.Report
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := httpcheck.CheckHandler(t.Context(), h, o)
		done <- outcome{r, err}
	}()
	return sync.OnceValues(func() (*httpcheck.Report, error) {
		o := <-done
		return o.r, o.err
	})
}

// finished waits for a check started began and returns its report,
// failing t when the check could not run to its end.
func finished(t testing.TB, check func() (*httpcheck.Report, error)) *httpcheck.Report {
	t.Helper()
	r, err := check()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// written is r's text report, as a failure shows it.
func written(t testing.TB, r *httpcheck.Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHeaderNamesAreHttplimits(t *testing.T) {
	for got, want := range map[string]string{
		httpcheck.HeaderLimit:      httplimit.HeaderLimit,
		httpcheck.HeaderRemaining:  httplimit.HeaderRemaining,
		httpcheck.HeaderReset:      httplimit.HeaderReset,
		httpcheck.HeaderRetryAfter: httplimit.HeaderRetryAfter,
	} {
		if got != want {
			t.Errorf("httpcheck says %q where httplimit says %q", got, want)
		}
	}
}

// The reference middleware keeps the contract over every limiter it is
// given, and the check counts what the limit implies: at least the quota
// admitted (a fresh key), at most what the limiter can admit in the time
// the burst took, the rest refused, and the retry after Retry-After
// admitted.
func TestTheReferenceMiddlewarePasses(t *testing.T) {
	refillBound := func(q int64, r *httpcheck.Report) int {
		return int(q + (q*int64(r.BurstTime)+int64(r.Window)-1)/int64(r.Window))
	}
	cases := []struct {
		name    string
		handler func(t testing.TB) (http.Handler, int64)
		opts    httpcheck.Options
		// maxAdmitted is the most of the burst the limiter may admit.
		maxAdmitted func(q int64, r *httpcheck.Report) int
	}{
		{
			name: "token bucket, 10 per 2s",
			handler: func(t testing.TB) (http.Handler, int64) {
				return reference(t, algos.TokenBucket, algos.MustLimit(10, 2*algos.Second, 10))
			},
			opts:        httpcheck.Options{Window: 2 * time.Second},
			maxAdmitted: refillBound,
		},
		{
			name: "leaky bucket, 10 per 2s",
			handler: func(t testing.TB) (http.Handler, int64) {
				return reference(t, algos.LeakyBucket, algos.MustLimit(10, 2*algos.Second, 10))
			},
			opts:        httpcheck.Options{Window: 2 * time.Second},
			maxAdmitted: refillBound,
		},
		{
			name: "GCRA, 10 per 2s, the limit stated",
			handler: func(t testing.TB) (http.Handler, int64) {
				return reference(t, algos.GCRA, algos.MustLimit(10, 2*algos.Second, 10))
			},
			opts:        httpcheck.Options{Window: 2 * time.Second, Limit: 10},
			maxAdmitted: refillBound,
		},
		{
			// The window may end mid-burst: a second full window then.
			name: "fixed window, 10 per 1s",
			handler: func(t testing.TB) (http.Handler, int64) {
				return reference(t, algos.FixedWindow, algos.MustLimit(10, algos.Second, 10))
			},
			opts: httpcheck.Options{Window: time.Second},
			maxAdmitted: func(q int64, r *httpcheck.Report) int {
				return int(q) * int(r.BurstTime/r.Window+2)
			},
		},
		{
			name: "sliding log, 10 per 1s",
			handler: func(t testing.TB) (http.Handler, int64) {
				return reference(t, algos.SlidingLog, algos.MustLimit(10, algos.Second, 10))
			},
			opts:        httpcheck.Options{Window: time.Second},
			maxAdmitted: refillBound,
		},
		{
			name: "token bucket shutting a key out for 1.9 s after each refusal",
			handler: func(t testing.TB) (http.Handler, int64) {
				lim, q := local(t, algos.TokenBucket, algos.MustLimit(2, 3_800_000, 2))
				return behind(t, blocking(lim, 1900*time.Millisecond), q, httplimit.FailClosed), q
			},
			opts:        httpcheck.Options{Window: 3800 * time.Millisecond},
			maxAdmitted: refillBound,
		},
		{
			name: "token bucket, GitHub's style: Reset in Unix seconds, Retry-After an HTTP-date",
			handler: func(t testing.TB) (http.Handler, int64) {
				h, q := reference(t, algos.TokenBucket, algos.MustLimit(10, 2*algos.Second, 10))
				return rewrite(h, func(_, _ int, h http.Header) {
					now := time.Now()
					h.Set("Date", now.UTC().Format(http.TimeFormat))
					if reset, err := strconv.ParseInt(h.Get(httplimit.HeaderReset), 10, 64); err == nil {
						h.Set(httplimit.HeaderReset, strconv.FormatInt(now.Unix()+reset, 10))
					}
					if ra, err := strconv.ParseInt(h.Get(httplimit.HeaderRetryAfter), 10, 64); err == nil {
						h.Set(httplimit.HeaderRetryAfter, now.Add(time.Duration(ra)*time.Second).UTC().Format(http.TimeFormat))
					}
				}), q
			},
			opts:        httpcheck.Options{Window: 2 * time.Second},
			maxAdmitted: refillBound,
		},
	}
	t.Parallel()
	quotas := make([]int64, len(cases))
	checks := make([]func() (*httpcheck.Report, error), len(cases))
	for i, c := range cases {
		var h http.Handler
		h, quotas[i] = c.handler(t)
		checks[i] = started(t, h, c.opts)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := quotas[i]
			r := finished(t, checks[i])
			if !r.OK() {
				t.Fatalf("a correct limiter breached the contract:\n%s", written(t, r))
			}
			if r.Limit != q {
				t.Errorf("judged against limit %d, the middleware advertises %d", r.Limit, q)
			}
			if most := c.maxAdmitted(q, r); r.Admitted < int(q) || r.Admitted > most {
				t.Errorf("the burst admitted %d in %v; the limit implies %d to %d:\n%s", r.Admitted, r.BurstTime, q, most, written(t, r))
			}
			if r.Denied != r.Burst-r.Admitted || r.Denied == 0 {
				t.Errorf("the burst of %d admitted %d and refused %d", r.Burst, r.Admitted, r.Denied)
			}
			if len(r.Exchanges) != r.Burst+1 || r.Exchanges[r.Burst].Status != http.StatusOK {
				t.Errorf("no admitted retry after the burst:\n%s", written(t, r))
			}
		})
	}
}

func TestBadOptionsAreClearErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(ok) // 127.0.0.1
	t.Cleanup(srv.Close)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		url  string
		opts httpcheck.Options
		want string
	}{
		{"no window", t.Context(), srv.URL, httpcheck.Options{}, "Window must be positive"},
		{"negative requests", t.Context(), srv.URL, httpcheck.Options{Window: time.Second, Requests: -1}, "Requests must not be negative"},
		{"negative limit", t.Context(), srv.URL, httpcheck.Options{Window: time.Second, Limit: -1}, "Limit must not be negative"},
		{"a burst that stays within the limit", t.Context(), srv.URL, httpcheck.Options{Window: time.Second, Limit: 10, Requests: 10}, "must go past Limit"},
		{"negative MaxWait", t.Context(), srv.URL, httpcheck.Options{Window: time.Second, MaxWait: -time.Second}, "MaxWait must not be negative"},
		{"not an HTTP URL", t.Context(), "ftp://127.0.0.1/", httpcheck.Options{Window: time.Second}, "must be http:// or https://"},
		{"a bad method", t.Context(), srv.URL, httpcheck.Options{Window: time.Second, Method: "GET IT"}, "invalid method"},
		{"an unreachable server", t.Context(), "http://127.0.0.1:1", httpcheck.Options{Window: time.Second}, "request 1 got no response"},
		{"a context already done", cancelled, srv.URL, httpcheck.Options{Window: time.Second}, "context canceled"},
	}
	for _, c := range cases {
		r, err := httpcheck.Check(c.ctx, c.url, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "httpcheck: ") {
			t.Errorf("%s: got error %v, want one saying %q", c.name, err, c.want)
		}
		if r != nil {
			t.Errorf("%s: a report from a check that could not run", c.name)
		}
	}
}

// A burst too short for the limit the server advertises cannot check it.
func TestABurstWithinTheAdvertisedLimitIsAnError(t *testing.T) {
	t.Parallel()
	h, _ := reference(t, algos.TokenBucket, algos.MustLimit(10, 2*algos.Second, 10))
	_, err := httpcheck.CheckHandler(t.Context(), h, httpcheck.Options{Window: 2 * time.Second, Requests: 5})
	if err == nil || !strings.Contains(err.Error(), "does not go past the advertised limit 10") {
		t.Errorf("got %v", err)
	}
}

// An hourly quota asks for a wait no test should sit through: the check
// reports it instead of waiting.
func TestARetryAfterLongerThanMaxWaitIsABreachNotAHang(t *testing.T) {
	t.Parallel()
	h, _ := reference(t, algos.TokenBucket, algos.MustLimit(10, 3600*algos.Second, 10))
	r, err := httpcheck.CheckHandler(t.Context(), h, httpcheck.Options{Window: time.Hour, MaxWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Broken(); len(got) != 1 || got[0] != httpcheck.RuleRetryHonoured || len(r.Exchanges) != r.Burst {
		t.Errorf("broke %v with %d exchanges after a burst of %d:\n%s", got, len(r.Exchanges), r.Burst, written(t, r))
	}
	// The wait is an hour's token less the time the burst took (rounded up
	// to the second): 360 s on time, less on a busy machine.
	out := written(t, r)
	m := regexp.MustCompile(`Retry-After (\d+) s is longer than MaxWait 2s: not waited`).FindStringSubmatch(out)
	lo := 360 - int(math.Ceil(r.BurstTime.Seconds()))
	if m == nil {
		t.Fatalf("the report does not say why it did not wait:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < lo || n > 360 {
		t.Errorf("Retry-After %d s after a burst of %v, want %d to 360:\n%s", n, r.BurstTime, lo, out)
	}
}

// failures records what Assert would report instead of failing the test.
type failures struct {
	testing.TB
	got []string
}

func (f *failures) Helper()                   {}
func (f *failures) Error(args ...any)         { f.got = append(f.got, fmt.Sprint(args...)) }
func (f *failures) Errorf(s string, a ...any) { f.got = append(f.got, fmt.Sprintf(s, a...)) }

func TestAssertFailsWithTheReportAndTheKey(t *testing.T) {
	t.Parallel()
	good, _ := reference(t, algos.GCRA, algos.MustLimit(10, 2*algos.Second, 10))
	srv := httptest.NewServer(good)
	t.Cleanup(srv.Close)
	httpcheck.Assert(t, srv.URL, httpcheck.Options{Window: 2 * time.Second})

	lim, q := local(t, algos.TokenBucket, algos.MustLimit(10, 10*algos.Second, 10))
	bad := httptest.NewServer(dryRun(behind(t, lim, q, httplimit.FailClosed)))
	t.Cleanup(bad.Close)
	f := &failures{TB: t}
	httpcheck.Assert(f, bad.URL, httpcheck.Options{Window: 10 * time.Second, Key: "the-key"})
	if len(f.got) != 1 || !strings.Contains(f.got[0], "X-API-Key: the-key") || !strings.Contains(f.got[0], "limit-enforced") {
		t.Errorf("Assert on a limiter that never refuses reported %q", f.got)
	}

	f = &failures{TB: t}
	httpcheck.Assert(f, "http://127.0.0.1:1", httpcheck.Options{Window: time.Second})
	if len(f.got) != 1 || !strings.Contains(f.got[0], `key "httpcheck-`) || !strings.Contains(f.got[0], "got no response") {
		t.Errorf("Assert on an unreachable server reported %q", f.got)
	}
}
