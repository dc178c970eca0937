package drills_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
)

// The scrape drill's settings.
const (
	// scrapeTimeout is the middleware's Options.Timeout. Generous: the
	// drill judges the counters, not the latency (the blackhole drill
	// does), and a decision on the healthy store must not fail open on a
	// loaded machine.
	scrapeTimeout = 200 * time.Millisecond
	// scrapeWorkers goroutines each send at most one request per
	// scrapePace on one key: 160 a second offered to a limit of 20
	// (blackholeLimit), so the healthy store admits and denies.
	scrapeWorkers = 4
	scrapePace    = 25 * time.Millisecond
	// scrapeWait bounds each wait for the counters or the clients to move:
	// a liveness bound, far above what each takes (tens to hundreds of
	// ms), not a measured margin.
	scrapeWait = 5 * time.Second
	// Each phase ends on counts: scrapeDecided decided responses before
	// the blackhole and after it (then as many more, none degraded), and
	// scrapeFailed failed-open decisions in it, in two steps.
	scrapeDecided = 10
	scrapeFailed  = 20
)

// The guide's drill, on the metrics an operator scrapes: the middleware
// (FailOpen, a 200 ms decision timeout) in front of the token bucket's
// script on a shared Redis, through toxiproxy in this process, its
// Prometheus metrics served by promhttp on loopback and scraped over HTTP.
// Before the blackhole, httplimit_decisions_total counts admits and
// denials and no result="fail_open". While every byte to and from the
// store is swallowed, result="fail_open" climbs from one scrape to the
// next and no decision is counted. Once the blackhole is lifted, the
// requests sent into it are all answered and the clients have seen ten
// decided responses sent after it (the requests in flight at the restore
// still fail open meanwhile), result="fail_open" stops: over the next
// ten requests it does not move while admitted and denied do. At the end the
// scraped counters are exactly Stats and exactly what the clients saw
// (200s, 429s, responses marked X-RateLimit-Degraded). Every phase ends
// on counts, not on a duration.
func TestBlackholedStoreFailOpenIsScraped(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()

	proxy := drillProxy(t, "redis-scrape", s.Addr)

	script := drillTokenBucket(t)
	if err := script.Load(ctx, s.Client(t)); err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{
		Addr: proxy.Listen, Password: s.Password, DisableIdentity: true,
		// As in the blackhole drill: the decision's deadline bounds the
		// sockets, idle connections are dialled outside any request, and
		// nothing is retried into the blackhole.
		ContextTimeoutEnabled: true,
		DialTimeout:           2 * scrapeTimeout,
		ReadTimeout:           2 * scrapeTimeout,
		WriteTimeout:          2 * scrapeTimeout,
		PoolTimeout:           2 * scrapeTimeout,
		PoolSize:              2 * scrapeWorkers,
		MinIdleConns:          scrapeWorkers,
		MaxRetries:            -1,
	})
	t.Cleanup(func() { client.Close() })
	lim, err := httplimit.Script(client, script, s.Prefix(t), blackholeLimit)
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(lim, httplimit.Options{Quota: blackholeLimit.Burst, OnError: httplimit.FailOpen, Timeout: scrapeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := mw.Register(reg); err != nil {
		t.Fatal(err)
	}
	metricsSrv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(metricsSrv.Close)
	appSrv := httptest.NewServer(mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})))
	t.Cleanup(appSrv.Close)
	c := &scrapeClients{url: appSrv.URL, http: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 2 * scrapeWorkers},
		Timeout:   5 * time.Second,
	}}
	t.Cleanup(c.http.CloseIdleConnections)
	scraper := &http.Client{Timeout: 5 * time.Second}
	scrape := func(name string) scrapeSample {
		t.Helper()
		sm, err := scrapeMetrics(scraper, metricsSrv.URL)
		if err != nil {
			t.Fatalf("scraping %s (%s): %v", metricsSrv.URL, name, err)
		}
		sm.name = name
		return sm
	}
	// waitFor polls every 10 ms until cond holds, or fails the test.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(scrapeWait); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within %v: %s; clients %s", scrapeWait, what, c.summary(time.Time{}))
			}
		}
	}

	// Warm the pool outside the middleware, so that its counters start
	// with the store answering: each worker's connection decides once.
	var warm sync.WaitGroup
	for range scrapeWorkers {
		warm.Go(func() {
			for deadline := time.Now().Add(scrapeWait); ; {
				if _, err := lim.Allow(ctx, "warm"); err == nil || time.Now().After(deadline) {
					return
				}
			}
		})
	}
	warm.Wait()

	stop := make(chan struct{})
	halt := sync.OnceFunc(func() { close(stop) })
	var wg sync.WaitGroup
	t.Cleanup(func() { halt(); wg.Wait() }) // before the servers close, on a Fatal too
	c.drive(&wg, stop)

	// Before: the store decides.
	waitFor("decided responses before the blackhole", func() bool {
		ok, no, _ := c.counts(time.Time{}, time.Time{})
		return ok+no >= scrapeDecided && ok > 0 && no > 0
	})
	before := scrape("before")

	// During: a timeout toxic with timeout 0 drops every byte, both ways.
	cutAt := time.Now()
	for _, stream := range []string{"upstream", "downstream"} {
		spec := fmt.Sprintf(`{"name":"scrape_%s","type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, stream, stream)
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
			t.Fatalf("adding the %s blackhole: %v", stream, err)
		}
	}
	cutDone := time.Now()
	var during1, during2 scrapeSample
	// Once every request sent before the cut is answered, no decision the
	// store made can still be counted.
	waitFor("the requests sent before the blackhole answered", func() bool { return c.pending(cutDone) == 0 })
	waitFor("fail_open to climb in the blackhole", func() bool {
		during1 = scrape("during")
		return during1.failedOpen >= before.failedOpen+scrapeFailed/2
	})
	waitFor("fail_open to climb on in the blackhole", func() bool {
		during2 = scrape("during, later")
		return during2.failedOpen >= during1.failedOpen+scrapeFailed/2
	})

	// After: the blackhole lifted (toxiproxy closes the connections it
	// held; the pool dials anew).
	restoreAt := time.Now()
	for _, stream := range []string{"upstream", "downstream"} {
		if err := proxy.Toxics.RemoveToxic(ctx, "scrape_"+stream); err != nil {
			t.Fatalf("removing the %s blackhole: %v", stream, err)
		}
	}
	restoreDone := time.Now()
	waitFor("the requests sent into the blackhole answered, and decided responses after it", func() bool {
		ok, no, _ := c.counts(restoreDone, time.Time{})
		return c.pending(restoreAt) == 0 && ok+no >= scrapeDecided
	})
	after1 := scrape("after")
	after1At := time.Now()
	waitFor("more requests answered after the recovery", func() bool {
		ok, no, degraded := c.counts(after1At, time.Time{})
		return ok+no+degraded >= scrapeDecided && ok+no > 0
	})
	after2 := scrape("after, later")
	halt()
	wg.Wait()
	final := scrape("final")
	st := mw.Stats()

	for _, sm := range []scrapeSample{before, during1, during2, after1, after2, final} {
		t.Logf("scraped %s:\n%s", sm.name, sm.lines())
	}
	t.Logf("clients: healthy %s; blackhole %s; recovering %s; recovered %s",
		c.summary(time.Time{}, cutAt), c.summary(cutDone, restoreAt), c.summary(restoreDone, after1At), c.summary(after1At, time.Time{}))

	// Before: decisions, no failure.
	if before.failedOpen != 0 || before.admitted == 0 || before.denied == 0 {
		t.Errorf("before the blackhole: %s, want admits and denials and no fail_open", before)
	}
	// During: fail_open climbs, nothing is decided.
	if !(before.failedOpen < during1.failedOpen && during1.failedOpen < during2.failedOpen) {
		t.Errorf("fail_open did not climb in the blackhole: %v, %v, %v", before.failedOpen, during1.failedOpen, during2.failedOpen)
	}
	if during2.admitted != during1.admitted || during2.denied != during1.denied {
		t.Errorf("decisions counted in the blackhole: %s, then %s", during1, during2)
	}
	for _, o := range c.outcomes() {
		if !o.start.Before(cutDone) && o.end.Before(restoreAt) && o.err == nil && o.degraded == "" {
			t.Errorf("a request sent %v into the blackhole was answered %d undegraded", o.start.Sub(cutDone), o.status)
			break
		}
	}
	// After: fail_open stops, decisions resume.
	if after2.failedOpen != after1.failedOpen || after2.admitted+after2.denied <= after1.admitted+after1.denied {
		t.Errorf("after the recovery: %s, then %s; want fail_open unchanged and decisions counted", after1, after2)
	}
	if _, _, degraded := c.counts(after1At, time.Time{}); degraded != 0 {
		t.Errorf("after the recovery the clients saw %d degraded responses", degraded)
	}
	// The whole run: the scrape is Stats, and Stats is what the clients saw.
	ok, no, degraded := c.counts(time.Time{}, time.Time{})
	if final.admitted != st.Admitted || final.denied != st.Denied || final.failedOpen != st.FailedOpen || final.failedClosed != st.FailedClosed {
		t.Errorf("final scrape %s, but Stats %+v", final, st)
	}
	if st.Admitted != ok || st.Denied != no || st.FailedOpen != degraded || st.FailedClosed != 0 {
		t.Errorf("Stats %+v, but the clients saw %d admitted, %d denied, %d degraded", st, ok, no, degraded)
	}
	if n := final.failedOpenLatency; n != uint64(final.failedOpen) {
		t.Errorf("httplimit_decision_seconds_count{result=\"fail_open\"} %d, want %d", n, final.failedOpen)
	}
	if errs := c.errors(); errs != 0 {
		t.Errorf("%d requests failed at the client", errs)
	}
	t.Logf("measured: blackholed store behind a fail-open middleware (%v timeout): fail_open %v before, +%v in the blackhole (scraped %v then %v), +%v while it drained and the pool redialled, +%v over the %d requests after; decisions %v then %v after",
		scrapeTimeout, before.failedOpen, during2.failedOpen-before.failedOpen, during1.failedOpen, during2.failedOpen,
		after1.failedOpen-during2.failedOpen, after2.failedOpen-after1.failedOpen, c.answeredSince(after1At),
		after1.admitted+after1.denied, after2.admitted+after2.denied)
}

// scrapeSample is one scrape of the middleware's metrics.
type scrapeSample struct {
	name                     string
	text                     string
	admitted, denied         int64
	failedOpen, failedClosed int64
	failedOpenLatency        uint64 // the histogram's count for fail_open
}

func (s scrapeSample) String() string {
	return fmt.Sprintf("admitted %d denied %d fail_open %d fail_closed %d", s.admitted, s.denied, s.failedOpen, s.failedClosed)
}

// lines is the scrape's httplimit_decisions_total samples and the
// histogram's _count samples, as served.
func (s scrapeSample) lines() string {
	var out []string
	for _, l := range strings.Split(s.text, "\n") {
		if strings.HasPrefix(l, httplimit.MetricDecisions+"{") || strings.HasPrefix(l, httplimit.MetricDecisionSeconds+"_count{") {
			out = append(out, "\t"+l)
		}
	}
	return strings.Join(out, "\n")
}

// scrapeMetrics GETs url and reads the middleware's metrics from the text
// exposition format.
func scrapeMetrics(c *http.Client, url string) (scrapeSample, error) {
	var s scrapeSample
	res, err := c.Get(url)
	if err != nil {
		return s, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return s, err
	}
	if res.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s", res.Status)
	}
	s.text = string(body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(s.text))
	if err != nil {
		return s, err
	}
	dec, lat := fams[httplimit.MetricDecisions], fams[httplimit.MetricDecisionSeconds]
	if dec == nil || lat == nil {
		return s, fmt.Errorf("no %s or %s in:\n%s", httplimit.MetricDecisions, httplimit.MetricDecisionSeconds, s.text)
	}
	counters := map[string]*int64{
		httplimit.ResultAdmitted: &s.admitted, httplimit.ResultDenied: &s.denied,
		httplimit.ResultFailedOpen: &s.failedOpen, httplimit.ResultFailedClosed: &s.failedClosed,
	}
	seen := 0
	for _, m := range dec.GetMetric() {
		for _, l := range m.GetLabel() {
			if p := counters[l.GetValue()]; l.GetName() == httplimit.LabelResult && p != nil {
				*p = int64(m.GetCounter().GetValue())
				seen++
			}
		}
	}
	if seen != len(counters) {
		return s, fmt.Errorf("%d of the %d results in:\n%s", seen, len(counters), s.text)
	}
	for _, m := range lat.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == httplimit.LabelResult && l.GetValue() == httplimit.ResultFailedOpen {
				s.failedOpenLatency = m.GetHistogram().GetSampleCount()
			}
		}
	}
	return s, nil
}

// scrapeClients drives the middleware and records every request.
type scrapeClients struct {
	url  string
	http *http.Client

	mu       sync.Mutex
	outs     []blackholeOutcome
	inflight map[*time.Time]struct{} // the start of each request not yet answered
}

// drive starts the workers, each sending at most one request per
// scrapePace until stop closes.
func (c *scrapeClients) drive(wg *sync.WaitGroup, stop <-chan struct{}) {
	for range scrapeWorkers {
		wg.Go(func() {
			tick := time.NewTicker(scrapePace)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				c.do("steady")
			}
		})
	}
}

// do sends one request for key and records it.
func (c *scrapeClients) do(key string) {
	start := time.Now()
	c.mu.Lock()
	if c.inflight == nil {
		c.inflight = map[*time.Time]struct{}{}
	}
	c.inflight[&start] = struct{}{}
	c.mu.Unlock()
	o := blackholeOutcome{key: key, start: start}
	req, err := http.NewRequest(http.MethodGet, c.url, nil)
	if err == nil {
		req.Header.Set("X-API-Key", key)
		var resp *http.Response
		if resp, err = c.http.Do(req); err == nil {
			resp.Body.Close()
			o.status, o.header = resp.StatusCode, resp.Header
			o.degraded = resp.Header.Get(httplimit.HeaderDegraded)
		}
	}
	o.err = err
	o.end = time.Now()
	c.mu.Lock()
	delete(c.inflight, &start)
	c.outs = append(c.outs, o)
	c.mu.Unlock()
}

// pending is how many requests sent before t are not yet answered.
func (c *scrapeClients) pending(t time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for s := range c.inflight {
		if s.Before(t) {
			n++
		}
	}
	return n
}

func (c *scrapeClients) outcomes() []blackholeOutcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]blackholeOutcome(nil), c.outs...)
}

// counts is the answered requests sent in [from, to) (zero times: no
// bound) by what the middleware did: admitted (200), denied (429) and
// degraded (fail-open).
func (c *scrapeClients) counts(from, to time.Time) (ok, no, degraded int64) {
	for _, o := range c.outcomes() {
		if o.err != nil || o.start.Before(from) || (!to.IsZero() && !o.start.Before(to)) {
			continue
		}
		switch {
		case o.degraded != "":
			degraded++
		case o.status == http.StatusOK:
			ok++
		case o.status == http.StatusTooManyRequests:
			no++
		}
	}
	return ok, no, degraded
}

func (c *scrapeClients) answeredSince(from time.Time) int64 {
	ok, no, degraded := c.counts(from, time.Time{})
	return ok + no + degraded
}

func (c *scrapeClients) errors() int {
	n := 0
	for _, o := range c.outcomes() {
		if o.err != nil {
			n++
		}
	}
	return n
}

// summary is the answered requests sent in [from, to), by outcome.
func (c *scrapeClients) summary(from time.Time, to ...time.Time) string {
	var end time.Time
	if len(to) > 0 {
		end = to[0]
	}
	ok, no, degraded := c.counts(from, end)
	return fmt.Sprintf("%d admitted, %d denied, %d degraded", ok, no, degraded)
}
