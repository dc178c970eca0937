package drift_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/drift"
	"github.com/overshoot-go/overshoot/limiter"
)

// gateLive serves routes with the reference middleware on loopback (next
// answering each admitted request), measures them and runs the gate
// against testdata/api.yaml.
func gateLive(t *testing.T, routes []drift.Route, next http.Handler, tol drift.Tolerance) (string, map[drift.Operation]drift.Measurement, error) {
	t.Helper()
	documented, err := drift.DocumentedFile("testdata/api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	configured, err := drift.Configured(routes)
	if err != nil {
		t.Fatal(err)
	}
	h, err := drift.Handler(routes, nil, next)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var ops []drift.Operation
	for _, r := range routes {
		ops = append(ops, r.Operation)
	}
	measured, err := drift.Measure(context.Background(), drift.Probe{Base: srv.URL}, ops)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	err = drift.Gate(&table, documented, configured, measured, tol)
	return table.String(), measured, err
}

var ok200 = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// The consistent setup: the description, the routes and the service they
// serve agree, and the gate passes.
func TestGatePassesWhenTheThreeAgree(t *testing.T) {
	table, measured, err := gateLive(t, catalog(100), ok200, drift.Tolerance{})
	if err != nil {
		t.Fatalf("%v\n%s", err, table)
	}
	if n := strings.Count(table, " ok\n"); n != 3 {
		t.Errorf("want 3 rows ok:\n%s", table)
	}
	for o, want := range map[drift.Operation]int64{op("GET", "/v1/search"): 100, op("GET", "/v1/items/{id}"): 600, op("PUT", "/v1/items/{id}"): 10} {
		m := measured[o]
		if !m.Limited || m.Admitted != want || m.Advertised != want || int64(len(m.Records)) != want+1 {
			t.Errorf("%s: measured %+v (of %d records), want %d admitted, then a denial", o, m.String(), len(m.Records), want)
		}
	}
}

// The planted mismatch: the code configures 120 a minute where the
// description says 100. The gate fails, and its table says where.
func TestGateFailsOnThePlantedMismatch(t *testing.T) {
	table, _, err := gateLive(t, catalog(120), ok200, drift.Tolerance{})
	if !errors.Is(err, drift.ErrDrift) {
		t.Fatalf("got %v, want ErrDrift\n%s", err, table)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "operation ") {
		t.Fatalf("want a header and three rows:\n%s", table)
	}
	want := "GET /v1/search      100/1m          120/1m          120 at once  DRIFT: configured 120/1m ≠ documented 100/1m; measured 120 ≠ documented burst 100"
	if lines[3] != want {
		t.Errorf("the search's row:\n got %q\nwant %q", lines[3], want)
	}
	for _, l := range lines[1:3] {
		if !strings.HasSuffix(l, " ok") {
			t.Errorf("an operation that agrees is flagged: %q", l)
		}
	}
	// A 20 % rate tolerance and 20 requests of burst tolerance let it pass.
	if _, _, err := gateLive(t, catalog(120), ok200, drift.Tolerance{Rate: 0.2, Burst: 20}); err != nil {
		t.Errorf("within tolerance: %v", err)
	}
}

// A limiter that refills during the probe admits more than its burst: on
// a slow service (every request 20 ms) a bucket of 10 a second admits a
// dozen or more, and the gate allows exactly the refill the recorded span
// permits, so a slow machine does not invent a drift.
func TestGateAllowsTheRefillTheSpanPermits(t *testing.T) {
	slow := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(20 * time.Millisecond) })
	routes := []drift.Route{{Operation: op("PUT", "/v1/items/{id}"), Spec: limiter.FromAlgorithm(algos.TokenBucket), Limit: algos.MustLimit(10, algos.Second, 10)}}
	documented := map[drift.Operation]drift.Policy{op("PUT", "/v1/items/{id}"): {Quota: 10, Window: algos.Second, Burst: 10}}
	configured, err := drift.Configured(routes)
	if err != nil {
		t.Fatal(err)
	}
	h, err := drift.Handler(routes, nil, slow)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	measured, err := drift.Measure(context.Background(), drift.Probe{Base: srv.URL, Params: map[string]string{"id": "42"}}, []drift.Operation{op("PUT", "/v1/items/{id}")})
	if err != nil {
		t.Fatal(err)
	}
	m := measured[op("PUT", "/v1/items/{id}")]
	if m.Admitted <= 10 || m.Admitted > 10+m.Allowance(documented[op("PUT", "/v1/items/{id}")]) {
		t.Errorf("admitted %d in %d µs: want more than the burst of 10, within its allowance %d", m.Admitted, m.Span, m.Allowance(documented[op("PUT", "/v1/items/{id}")]))
	}
	var table strings.Builder
	if err := drift.Gate(&table, documented, configured, measured, drift.Tolerance{}); err != nil {
		t.Errorf("%v\n%s", err, table.String())
	}
}

func TestGateVerdicts(t *testing.T) {
	p := drift.Policy{Quota: 10, Window: algos.Second, Burst: 10}
	a, b := op("GET", "/a"), op("GET", "/b")
	measuredOK := drift.Measurement{Admitted: 10, Limited: true, Span: 1000}
	for _, c := range []struct {
		name                   string
		documented, configured map[drift.Operation]drift.Policy
		measured               map[drift.Operation]drift.Measurement
		tol                    drift.Tolerance
		says                   string // "" passes
	}{
		{"agree", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: measuredOK}, drift.Tolerance{}, ""},
		{"no measured column", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, nil, drift.Tolerance{}, ""},
		{"not documented", nil, map[drift.Operation]drift.Policy{a: p}, nil, drift.Tolerance{}, "not documented"},
		{"not configured", map[drift.Operation]drift.Policy{a: p, b: p}, map[drift.Operation]drift.Policy{a: p}, nil, drift.Tolerance{}, "GET /b     10/1s       -           (not run)  DRIFT: not configured"},
		{"not measured", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{}, drift.Tolerance{}, "not measured"},
		{"same rate, other window", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: {Quota: 600, Window: 60 * algos.Second, Burst: 10}}, nil, drift.Tolerance{}, ""},
		{"rate off by 4 %, 5 % allowed", map[drift.Operation]drift.Policy{a: {Quota: 100, Window: algos.Second, Burst: 100}}, map[drift.Operation]drift.Policy{a: {Quota: 104, Window: algos.Second, Burst: 100}}, nil, drift.Tolerance{Rate: 0.05}, ""},
		{"rate off by 6 %, 5 % allowed", map[drift.Operation]drift.Policy{a: {Quota: 100, Window: algos.Second, Burst: 100}}, map[drift.Operation]drift.Policy{a: {Quota: 106, Window: algos.Second, Burst: 100}}, nil, drift.Tolerance{Rate: 0.05}, "configured 106/1s, burst 100 ≠ documented 100/1s"},
		{"burst off by 2, 1 allowed", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: {Quota: 10, Window: algos.Second, Burst: 12}}, nil, drift.Tolerance{Burst: 1}, "configured 10/1s, burst 12 ≠ documented 10/1s"},
		{"measured below the burst", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: {Admitted: 9, Limited: true}}, drift.Tolerance{}, "measured 9 ≠ documented burst 10; measured 9 ≠ configured burst 10"},
		{"measured within the refill", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: {Admitted: 12, Limited: true, Span: 250_000}}, drift.Tolerance{}, ""},
		{"measured beyond the refill", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: {Admitted: 13, Limited: true, Span: 250_000}}, drift.Tolerance{}, "measured 13 ≠ documented burst 10"},
		{"measured beyond the refill, within tolerance", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: {Admitted: 13, Limited: true, Span: 250_000}}, drift.Tolerance{Burst: 1}, ""},
		{"never denied", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: {Admitted: 50}}, drift.Tolerance{}, "none of 50 denied  DRIFT: measured unlimited ≠ documented burst 10"},
		{"advertises another limit", map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Policy{a: p}, map[drift.Operation]drift.Measurement{a: {Admitted: 10, Limited: true, Advertised: 100}}, drift.Tolerance{}, "advertises a limit of 100 ≠ configured burst 10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var table strings.Builder
			err := drift.Gate(&table, c.documented, c.configured, c.measured, c.tol)
			switch {
			case c.says == "" && err != nil:
				t.Errorf("got %v, want a pass\n%s", err, table.String())
			case c.says != "" && !errors.Is(err, drift.ErrDrift):
				t.Errorf("got %v, want ErrDrift\n%s", err, table.String())
			case !strings.Contains(table.String(), c.says):
				t.Errorf("the table does not say %q:\n%s", c.says, table.String())
			}
		})
	}
}

func TestAllowance(t *testing.T) {
	p := drift.Policy{Quota: 10, Window: algos.Second, Burst: 10}
	for span, want := range map[int64]int64{0: 0, 99_999: 0, 100_000: 1, 250_000: 2, 3*algos.Second + 150_000: 31} {
		if got := (drift.Measurement{Span: span}).Allowance(p); got != want {
			t.Errorf("Allowance over %d µs = %d, want %d", span, got, want)
		}
	}
}

func TestConfiguredAndHandlerRefuseBadRoutes(t *testing.T) {
	bucket := limiter.FromAlgorithm(algos.TokenBucket)
	good := drift.Route{Operation: op("GET", "/a"), Spec: bucket, Limit: algos.MustLimit(1, algos.Second, 1)}
	for name, routes := range map[string][]drift.Route{
		"twice":         {good, good},
		"a bad limit":   {{Operation: op("GET", "/a"), Spec: bucket, Limit: algos.Limit{Rate: 1, Window: 1, Burst: 1}}},
		"a bad pattern": {{Operation: op("GET", "no-slash"), Spec: bucket, Limit: good.Limit}},
	} {
		_, err1 := drift.Configured(routes)
		_, err2 := drift.Handler(routes, nil, ok200)
		if err2 == nil || (err1 == nil && name != "a bad pattern") {
			t.Errorf("%s: Configured %v, Handler %v; want errors", name, err1, err2)
		}
	}
}

func TestMeasureReportsWhatIsNotADecision(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	defer broken.Close()
	_, err := drift.Measure(context.Background(), drift.Probe{Base: broken.URL}, []drift.Operation{op("GET", "/a")})
	if err == nil || !strings.Contains(err.Error(), "GET /a") || !strings.Contains(err.Error(), "500") {
		t.Errorf("a 500: got %v, want an error naming the operation and the status", err)
	}
	if _, err := drift.Measure(context.Background(), drift.Probe{Base: "localhost:80"}, nil); err == nil {
		t.Error("a base that is not a URL: no error")
	}
	unlimited := httptest.NewServer(ok200)
	defer unlimited.Close()
	m, err := drift.Measure(context.Background(), drift.Probe{Base: unlimited.URL, Max: 25}, []drift.Operation{op("GET", "/a")})
	if err != nil || m[op("GET", "/a")].Limited || m[op("GET", "/a")].Admitted != 25 {
		t.Errorf("an unlimited service: got %+v, %v; want 25 admitted, no denial", m, err)
	}
}
