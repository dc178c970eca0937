package drift_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/drift"
	"github.com/overshoot-go/overshoot/limiter"
)

// catalog is the service's routes as its code configures them: the one
// list that both serves (drift.Handler) and is gated (drift.Configured).
// searchRate is the search's limit a minute; testdata/api.yaml documents
// 100.
func catalog(searchRate int64) []drift.Route {
	const minute, hour = 60 * algos.Second, 3600 * algos.Second
	return []drift.Route{
		{Operation: drift.Operation{Method: "GET", Path: "/v1/search"},
			Spec: limiter.FromAlgorithm(algos.SlidingLog), Limit: algos.MustLimit(searchRate, minute, searchRate)},
		{Operation: drift.Operation{Method: "GET", Path: "/v1/items/{id}"},
			Spec: limiter.FromAlgorithm(algos.TokenBucket), Limit: algos.MustLimit(600, hour, 600)},
		{Operation: drift.Operation{Method: "PUT", Path: "/v1/items/{id}"},
			Spec: limiter.FromAlgorithm(algos.GCRA), Limit: algos.MustLimit(5, minute, 10)},
	}
}

// The gate on a planted mismatch: testdata/api.yaml documents the search
// at 100 a minute, the code configures 120, and the service, measured
// over loopback, admits a fresh key 120 at once. Every other operation's
// three numbers agree. The measured column is the same on every run: each
// of these limiters admits exactly its burst to a fresh key until its
// refill (a sliding log's minute, a bucket's 6 s, GCRA's 12 s) comes due.
func Example() {
	routes := catalog(120) // the planted drift: 120 a minute, documented 100

	documented, err := drift.DocumentedFile("testdata/api.yaml")
	if err != nil {
		log.Fatal(err)
	}
	configured, err := drift.Configured(routes)
	if err != nil {
		log.Fatal(err)
	}
	handler, err := drift.Handler(routes, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if err != nil {
		log.Fatal(err)
	}
	service := httptest.NewServer(handler) // your service: e.g. a staging URL
	defer service.Close()
	ops := []drift.Operation{}
	for _, r := range routes {
		ops = append(ops, r.Operation)
	}
	measured, err := drift.Measure(context.Background(), drift.Probe{Base: service.URL}, ops)
	if err != nil {
		log.Fatal(err)
	}

	err = drift.Gate(os.Stdout, documented, configured, measured, drift.Tolerance{})
	fmt.Println(err)
	// Output:
	// operation           documented      configured      measured     verdict
	// GET /v1/items/{id}  600/1h          600/1h          600 at once  ok
	// PUT /v1/items/{id}  5/1m, burst 10  5/1m, burst 10  10 at once   ok
	// GET /v1/search      100/1m          120/1m          120 at once  DRIFT: configured 120/1m ≠ documented 100/1m; measured 120 ≠ documented burst 100
	// drift: 1 of 3 operations: the documented, configured and measured limits disagree
}
