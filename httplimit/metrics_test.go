package httplimit_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The middleware's metrics, registered with a registry of the caller's and
// served by promhttp, scrape over HTTP to exactly its Stats: admitted,
// denied, fail_open and fail_closed, every result present from the
// start (at 0), and a latency histogram with one observation per decision
// in the right buckets. Two middlewares share the registry under a label
// each; registering one twice is refused.
func TestMetricsScrapeToTheStats(t *testing.T) {
	local, err := httplimit.Local(limiter.FromAlgorithm(algos.TokenBucket), algos.MustLimit(1, algos.Second, 2), func() int64 { return 5 * algos.Second })
	if err != nil {
		t.Fatal(err)
	}
	// "down" is a store that does not answer: 2 ms, then an error.
	store := httplimit.LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
		if key == "h:down" { // ByHeader("X-API-Key")
			time.Sleep(2 * time.Millisecond)
			return algos.Decision{}, errors.New("store unreachable")
		}
		return local.Allow(ctx, key)
	})
	open := mustNew(t, store, httplimit.Options{Quota: 2, OnError: httplimit.FailOpen})
	closed := mustNew(t, store, httplimit.Options{Quota: 2})

	reg := prometheus.NewRegistry()
	for name, m := range map[string]*httplimit.Middleware{"open": open, "closed": closed} {
		if err := m.Register(prometheus.WrapRegistererWith(prometheus.Labels{"limiter": name}, reg)); err != nil {
			t.Fatalf("registering %s: %v", name, err)
		}
	}
	var already prometheus.AlreadyRegisteredError
	if err := open.Register(prometheus.WrapRegistererWith(prometheus.Labels{"limiter": "open"}, reg)); !errors.As(err, &already) {
		t.Errorf("registering the same middleware twice: %v, want an AlreadyRegisteredError", err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	// Before any request every result is there, at 0.
	fams := scrape(t, srv.URL)
	for _, lim := range []string{"open", "closed"} {
		for _, r := range []string{httplimit.ResultAdmitted, httplimit.ResultDenied, httplimit.ResultFailedOpen, httplimit.ResultFailedClosed} {
			if v, ok := sample(fams, httplimit.MetricDecisions, "limiter", lim, "result", r); !ok || v != 0 {
				t.Errorf("before any request, %s{limiter=%q,result=%q} = %v (present %v), want 0", httplimit.MetricDecisions, lim, r, v, ok)
			}
		}
	}

	// open: 2 admitted, 1 denied, 4 failed open; closed: 1 admitted
	// ("bob", a key of its own), 3 failed closed.
	for _, key := range []string{"alice", "alice", "alice", "down", "down", "down", "down"} {
		serve(t, open, key)
	}
	for _, key := range []string{"bob", "down", "down", "down"} {
		serve(t, closed, key)
	}

	want := `
# HELP httplimit_decisions_total Requests answered by the rate-limit middleware, by result: admitted, denied (429), fail_open (served undecided) or fail_closed (503).
# TYPE httplimit_decisions_total counter
httplimit_decisions_total{limiter="closed",result="admitted"} 1
httplimit_decisions_total{limiter="closed",result="denied"} 0
httplimit_decisions_total{limiter="closed",result="fail_closed"} 3
httplimit_decisions_total{limiter="closed",result="fail_open"} 0
httplimit_decisions_total{limiter="open",result="admitted"} 2
httplimit_decisions_total{limiter="open",result="denied"} 1
httplimit_decisions_total{limiter="open",result="fail_closed"} 0
httplimit_decisions_total{limiter="open",result="fail_open"} 4
`
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(want), httplimit.MetricDecisions); err != nil {
		t.Error(err)
	}

	// The counters are Stats, and the histogram counts every decision,
	// the failed ones (2 ms at least) above the 1 ms bucket.
	fams = scrape(t, srv.URL)
	for name, m := range map[string]*httplimit.Middleware{"open": open, "closed": closed} {
		st := m.Stats()
		for r, n := range map[string]int64{
			httplimit.ResultAdmitted: st.Admitted, httplimit.ResultDenied: st.Denied,
			httplimit.ResultFailedOpen: st.FailedOpen, httplimit.ResultFailedClosed: st.FailedClosed,
		} {
			got, _ := sample(fams, httplimit.MetricDecisions, "limiter", name, "result", r)
			h := histogram(fams, httplimit.MetricDecisionSeconds, "limiter", name, "result", r)
			if got != float64(n) || h == nil || h.GetSampleCount() != uint64(n) {
				t.Errorf("%s, %s: counter %v, histogram count %d, Stats %d", name, r, got, h.GetSampleCount(), n)
				continue
			}
			// The parsed text format has the +Inf bucket as well.
			var bounds []float64
			for _, b := range h.GetBucket() {
				bounds = append(bounds, b.GetUpperBound())
			}
			if want := append(httplimit.DecisionBuckets(), math.Inf(1)); !slices.Equal(bounds, want) {
				t.Errorf("%s, %s: buckets %v, want %v", name, r, bounds, want)
			}
			if r == httplimit.ResultFailedOpen || r == httplimit.ResultFailedClosed {
				for _, b := range h.GetBucket() {
					if b.GetUpperBound() <= 0.001 && b.GetCumulativeCount() != 0 {
						t.Errorf("%s, %s: %d decisions of at most %v s, but each slept 2 ms", name, r, b.GetCumulativeCount(), b.GetUpperBound())
					}
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("scraped:\n%s", scrapeText(t, srv.URL))
	}
}

// scrapeText GETs url and returns the body.
func scrapeText(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	return string(b)
}

// scrape GETs url and parses the text exposition format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(scrapeText(t, url)))
	if err != nil {
		t.Fatalf("parsing the scrape of %s: %v", url, err)
	}
	return fams
}

// find is the metric of family name whose labels include the name-value
// pairs kv, or nil.
func find(fams map[string]*dto.MetricFamily, name string, kv ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(kv); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == kv[i] && l.GetValue() == kv[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// sample is the value of a counter, and whether it is there.
func sample(fams map[string]*dto.MetricFamily, name string, kv ...string) (float64, bool) {
	m := find(fams, name, kv...)
	if m == nil || m.GetCounter() == nil {
		return 0, false
	}
	return m.GetCounter().GetValue(), true
}

// histogram is a histogram's value, or nil.
func histogram(fams map[string]*dto.MetricFamily, name string, kv ...string) *dto.Histogram {
	if m := find(fams, name, kv...); m != nil {
		return m.GetHistogram()
	}
	return nil
}
