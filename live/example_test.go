package live_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/live"
)

// yourService stands for the nodes of a deployed service: here three
// instances of the reference middleware, each with a bucket of its own.
func yourService() []string {
	l := algos.MustLimit(10, algos.Second, 10)
	var urls []string
	for range 3 {
		lim, _ := httplimit.Local(limiter.FromAlgorithm(algos.TokenBucket), l, nil)
		m, _ := httplimit.New(lim, httplimit.Options{Quota: 10})
		urls = append(urls, httptest.NewServer(m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))).URL)
	}
	return urls
}

// The lines a user writes to judge an HTTP service that promises 10
// requests a second per API key, with bursts of 10: drive one key at 50 a
// second for two seconds through its nodes, judge what came back, print
// the row. This service keeps a bucket per node, and is caught.
func Example() {
	nodes := yourService() // e.g. []string{"http://10.0.0.1:8080", "http://10.0.0.2:8080"}
	fmt.Print(judgeService(nodes))
}

// judgeService is the example's lines: the target, the load, the judge.
func judgeService(nodes []string) judge.Verdict {
	target := live.HTTP{Nodes: nodes, Path: "/v1/search", KeyHeader: "X-API-Key"}
	load := live.Load{Rate: 50, Duration: 2 * time.Second}
	records, err := live.Drive(context.Background(), target, load)
	if err != nil {
		log.Fatal(err)
	}
	limit := algos.MustLimit(10, algos.Second, 10)
	return judge.Records(records, algos.BucketPromise(limit), limit)
}

// The example's lines catch the service it stands for (a bucket per node
// behind three nodes): its numbers vary from run to run, its verdict does
// not, so the example has no Output comment and this test holds the
// verdict.
func TestExample(t *testing.T) {
	t.Parallel()
	v := judgeService(yourService())
	if _, caught := v.Caught(breach.OverAdmission); !caught {
		t.Errorf("three nodes with a bucket each, 50/s against 10/s, were not caught:\n%s", v)
	}
}
