package metrics

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/record"
)

// The reports are checked on the runs of the six algorithms over one fixed
// traffic: nine keys, 30 s, each key limited to 10 a second with a burst of
// 10, one request in 50 failing in the limiter, the state sampled each
// second. (Only this test imports algos; the package itself does not.)

var trafficKeys = []string{"alice", "bob", "carol", "dave", "mallory", "erin", "frank", "grace", "idle"}

// request is one request of the fixed traffic.
type request struct {
	at  int64
	key int
}

func traffic() []request {
	var rs []request
	every := func(key int, period, from, to int64) {
		for t := from; t < to; t += period {
			rs = append(rs, request{t, key})
		}
	}
	const end = 30 * second
	every(0, 125*ms, 0, end) // alice: a steady 8 a second
	every(1, 66667, 0, end)  // bob: a steady 15 a second
	for b := int64(0); b < end; b += 5 * second {
		every(2, 5*ms, b+4900*ms, b+5100*ms) // carol: 40 in 200 ms across each 5 s boundary
	}
	g := rng(7)
	for t := g.intn(166 * ms); t < end; t += 1 + g.intn(166*ms) {
		rs = append(rs, request{t, 3}) // dave: about 12 a second, at random
	}
	every(4, 10*ms, 10*second, 20*second) // mallory: 100 a second for 10 s
	every(5, second, 0, end)              // erin, frank, grace: light
	every(6, 500*ms, 250*ms, end)
	every(7, 2*second, 100*ms, end)
	slices.SortFunc(rs, func(a, b request) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key, b.key))
	})
	return rs
}

// simulate runs alg over the traffic and measures the run.
func simulate(t *testing.T, alg algos.Algorithm) Run {
	t.Helper()
	limit := algos.MustLimit(10, algos.Second, 10)
	states := make([]algos.State, len(trafficKeys))
	var records []record.Record
	var samples []StateSample
	next := int64(0)
	for i, req := range traffic() {
		for ; next <= req.at; next += second {
			var cells int64
			for _, s := range states {
				cells += int64(len(s.Stored()))
			}
			samples = append(samples, StateSample{At: next, Cells: cells})
		}
		o := record.Record{Key: trafficKeys[req.key], Sent: req.at, Decided: req.at, Answered: req.at, Seen: record.SeenDecided}
		if i%50 == 49 {
			o.Err = errFailed // the limiter failed; the state is untouched
		} else {
			o.Answer = record.Answer{Decision: alg.Decide(&states[req.key], req.at, limit), Known: record.FieldsDecision}
		}
		records = append(records, o)
	}
	r, err := Measure(slices.Values(records), Options{Keys: trafficKeys, Window: second, StateSamples: samples})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reports renders the three reports of the fixed traffic.
func reports(t *testing.T) map[string][]byte {
	t.Helper()
	var named []Named
	var series []AcceptedSeries
	for _, alg := range algos.All() {
		r := simulate(t, alg)
		named = append(named, Named{Name: alg.Name, Run: r})
		series = append(series, r.Series(alg.Name, 60))
	}
	var run, comparison, chart bytes.Buffer
	if err := WriteRun(&run, named[3].Run, TextOptions{Top: 5}); err != nil { // the fixed window
		t.Fatal(err)
	}
	if err := WriteComparison(&comparison, named); err != nil {
		t.Fatal(err)
	}
	if err := WriteSVG(&chart, "Admitted per second by six limiters, <10/s> & a burst of 10", series); err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"run.txt": run.Bytes(), "comparison.txt": comparison.Bytes(), "chart.svg": chart.Bytes()}
}

func TestReportsAreDeterministicAndMatchTestdata(t *testing.T) {
	once, again := reports(t), reports(t)
	for _, name := range []string{"run.txt", "comparison.txt", "chart.svg"} {
		if !bytes.Equal(once[name], again[name]) {
			t.Errorf("%s: two renderings of the same runs differ:\n%s", name, golden.Diff(name, once[name], again[name]))
		}
		golden.Check(t, "metrics-"+name, once[name])
	}
}

// A run where requests were held reports their wait: a line of WriteRun
// and a column of WriteComparison, which the six, holding nothing, leave
// out (their reports above are unchanged by it).
func TestHeldRequestsAddTheWaitToTheReports(t *testing.T) {
	queue, err := algos.QueueingGCRA(200 * ms)
	if err != nil {
		t.Fatal(err)
	}
	q := simulate(t, queue)
	if q.Held == 0 || q.Wait.Max <= 0 || q.Wait.Max > 200*ms || q.Wait.N != q.Accepted {
		t.Fatalf("the queueing GCRA held %d, wait %+v over %d admits; want some held, at most 200ms, over every admit", q.Held, q.Wait, q.Accepted)
	}
	var run, comparison bytes.Buffer
	if err := WriteRun(&run, q, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("wait         p50 %s, p90 %s, p99 %s, max %s (held before being let through; nearest rank over %d admits, %d held)",
		fmtDur(q.Wait.P50), fmtDur(q.Wait.P90), fmtDur(q.Wait.P99), fmtDur(q.Wait.Max), q.Wait.N, q.Held)
	if !strings.Contains(strings.ReplaceAll(run.String(), "\n"+strings.Repeat(" ", 13), " "), line) { // unwrapped
		t.Errorf("the run's report lacks %q:\n%s", line, run.String())
	}
	gcra := simulate(t, algos.GCRA)
	if err := WriteComparison(&comparison, []Named{{"gcra", gcra}, {queue.Name, q}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(comparison.String(), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "limiter ") })
	if at < 0 || at+3 >= len(lines) {
		t.Fatalf("no table in the comparison:\n%s", comparison.String())
	}
	head, gcraRow, queueRow := lines[at], lines[at+2], lines[at+3]
	if !strings.HasSuffix(head, "wait p99") || !strings.HasSuffix(gcraRow, " 0s") || !strings.HasSuffix(queueRow, " "+fmtDur(q.Wait.P99)) {
		t.Errorf("the comparison's wait column: heads %q, rows %q and %q", head, gcraRow, queueRow)
	}
	if gcra.Wait.N != 0 || q.Accepted < gcra.Accepted {
		t.Errorf("gcra: wait %+v, %d admitted; the queue %d: want no wait, and the queue admitting at least as many", gcra.Wait, gcra.Accepted, q.Accepted)
	}
}
