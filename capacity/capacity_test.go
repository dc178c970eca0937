package capacity_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/capacity"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/metrics"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

func poisson(t testing.TB, rate float64, keys int, seconds int64, seed uint64) traffic.Trace {
	t.Helper()
	tr, err := traffic.TraceSpec{Profile: traffic.Poisson{Rate: rate}, Duration: seconds * algos.Second, Keys: traffic.Uniform(keys), Seed: seed}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A run's totals are those of the algorithm deciding the same requests by
// itself, request by request.
func TestRunDecidesEachRequestAsTheAlgorithmDoes(t *testing.T) {
	tr := poisson(t, 40, 3, 20, 1)
	l := algos.MustLimit(10, algos.Second, 5)
	for _, a := range algos.All() {
		r, err := capacity.Run(tr, limiter.FromAlgorithm(a), l)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := limiter.NewMemory(a, l)
		var accepted int64
		for i, req := range tr.Requests {
			d, _ := m.Allow(context.Background(), req.Key, req.Sent)
			if d.Allowed != r.Allowed[i] {
				t.Fatalf("%s: request %d decided %v by the run, %v by the algorithm", a.Name, i, r.Allowed[i], d.Allowed)
			}
			if d.Allowed {
				accepted++
			}
		}
		if r.Run.Accepted != accepted || r.AcceptedCost != accepted || r.OfferedCost != int64(len(tr.Requests)) {
			t.Errorf("%s: accepted %d (cost %d of %d), want %d", a.Name, r.Run.Accepted, r.AcceptedCost, r.OfferedCost, accepted)
		}
		if r.Run.State.Cells < 1 {
			t.Errorf("%s: no state was sampled", a.Name)
		}
	}
}

// A request of cost n spends n units whole: a bucket of 10 admits a cost-6
// request, refuses the next cost-6 one (4 left), and admits a cost-4 one.
func TestRunSpendsEachRequestsCostWhole(t *testing.T) {
	tr := traffic.Trace{Keys: []string{"k"}, Requests: []traffic.TraceRequest{
		{Sent: 0, Cost: 6}, {Sent: 1, Cost: 6}, {Sent: 2, Cost: 4}, {Sent: 3, Cost: 1},
	}}
	for _, a := range algos.All() {
		r, err := capacity.Run(tr, limiter.FromAlgorithm(a), algos.MustLimit(10, algos.Second, 10))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(r.Allowed); got != "[true false true false]" {
			t.Errorf("%s: decided %s, want [true false true false]", a.Name, got)
		}
		if r.AcceptedCost != 10 || r.OfferedCost != 17 {
			t.Errorf("%s: accepted cost %d of %d, want 10 of 17", a.Name, r.AcceptedCost, r.OfferedCost)
		}
	}
}

// A limiter that takes no cost is refused a trace with costs, by name,
// before anything runs.
func TestRunRefusesCostsALimiterCannotTake(t *testing.T) {
	plain := limiter.Spec{
		Name: "plain", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
		New: limiter.PerKey(func(algos.Limit, int64) (limiter.Decider, error) {
			return limiter.DeciderFunc(func(int64) algos.Decision { return algos.Decision{Allowed: true} }), nil
		}),
	}
	tr := traffic.Trace{Keys: []string{"k"}, Requests: []traffic.TraceRequest{{Sent: 0, Cost: 1}, {Sent: 5, Cost: 3}}}
	_, err := capacity.Run(tr, plain, algos.MustLimit(1, algos.Second, 1))
	if err == nil || !strings.Contains(err.Error(), `"plain" is not a limiter.Weighed`) || !strings.Contains(err.Error(), "request 2 of cost 3") {
		t.Fatalf("got %v, want an error naming the limiter and request 2 of cost 3", err)
	}
}

// Errors from the limiter are counted apart, with the first one kept.
func TestRunCountsTheLimitersErrors(t *testing.T) {
	boom := errors.New("store down")
	failing := limiter.Spec{
		Name: "failing", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
		New: func(algos.Limit) (limiter.Limiter, error) { return failingLimiter{boom}, nil },
	}
	r, err := capacity.Run(poisson(t, 10, 1, 2, 3), failing, algos.MustLimit(1, algos.Second, 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Run.Errors != r.Run.Requests || r.Run.Accepted != 0 || !errors.Is(r.FirstError, boom) {
		t.Errorf("errors %d of %d, accepted %d, first %v", r.Run.Errors, r.Run.Requests, r.Run.Accepted, r.FirstError)
	}
	if r.RejectShare() != 1 {
		t.Errorf("a limiter that always fails rejects a share of %v, want 1", r.RejectShare())
	}
}

type failingLimiter struct{ err error }

func (f failingLimiter) Allow(context.Context, int, int64) (algos.Decision, error) {
	return algos.Decision{}, f.err
}

// The same inputs give the same report, byte for byte.
func TestComparisonIsDeterministic(t *testing.T) {
	tr := poisson(t, 50, 4, 10, 9)
	var reports [2]bytes.Buffer
	for i := range reports {
		rs, err := capacity.Compare(tr, limiter.FromAlgorithms(algos.All()...), algos.MustLimit(20, algos.Second, 20))
		if err != nil {
			t.Fatal(err)
		}
		if err := capacity.WriteComparison(&reports[i], tr, rs); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(reports[0].Bytes(), reports[1].Bytes()) {
		t.Fatal("two runs of the same comparison differ")
	}
}

// recorder is a capacity.TB that remembers a failure instead of stopping.
type recorder struct {
	failed bool
	msg    string
	logs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Logf(f string, a ...any) {
	r.logs = append(r.logs, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) { r.failed, r.msg = true, fmt.Sprintf(f, a...) }

// The gate passes with the tightest limit that fits, and fails, with the
// table, when no limit in the range does.
func TestRequireFitsIsAGateThatCanFail(t *testing.T) {
	tr := poisson(t, 40, 4, 60, 5)
	sweep := capacity.Sweep{
		Trace:     tr,
		Parameter: "limit",
		Setting:   capacity.Limits(limiter.FromAlgorithm(algos.SlidingCounter), algos.Second),
		Values:    capacity.Range(8, 24, 4),
		Budget:    0.01,
	}
	var pass recorder
	row := capacity.RequireFits(&pass, sweep)
	if pass.failed {
		t.Fatalf("the gate failed on a range that holds a fitting limit:\n%s", pass.msg)
	}
	if row.Result.RejectShare() > 0.01 || !row.Meets {
		t.Errorf("the gate chose limit %d, which rejects %v", row.Value, row.Result.RejectShare())
	}
	// Every tighter value in the range must not fit: the chosen one is the tightest.
	res, err := sweep.Run()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Value < row.Value && r.Meets {
			t.Errorf("limit %d fits too, and is tighter than the chosen %d", r.Value, row.Value)
		}
	}

	sweep.Values = capacity.Range(8, 16, 4)
	var fail recorder
	capacity.RequireFits(&fail, sweep)
	if !fail.failed || !strings.Contains(fail.msg, "no limit from 8 to 16 keeps rejects within 1.0%") {
		t.Fatalf("the gate did not fail with the verdict on a range where nothing fits: failed %v\n%s", fail.failed, fail.msg)
	}
}

// A sweep that cannot run says why.
func TestSweepRefusesBadInput(t *testing.T) {
	tr := poisson(t, 10, 1, 5, 1)
	good := capacity.Sweep{Trace: tr, Setting: capacity.Limits(limiter.FromAlgorithm(algos.GCRA), algos.Second), Values: []int64{1, 2}, Budget: 0.1}
	cases := map[string]func(s *capacity.Sweep){
		"needs a Setting":          func(s *capacity.Sweep) { s.Setting = nil },
		"needs Values":             func(s *capacity.Sweep) { s.Values = nil },
		"strictly ascending":       func(s *capacity.Sweep) { s.Values = []int64{2, 2} },
		"budget must be in [0, 1)": func(s *capacity.Sweep) { s.Budget = 1 },
		"trace with requests":      func(s *capacity.Sweep) { s.Trace = traffic.Trace{} },
		"rate must be positive":    func(s *capacity.Sweep) { s.Values = []int64{0, 1} },
	}
	for want, mutate := range cases {
		s := good
		mutate(&s)
		if _, err := s.Run(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error saying it %s", err, want)
		}
	}
	if _, err := good.Run(); err != nil {
		t.Fatal(err)
	}
}

// A queueing limiter's holds are kept per request and summarised as the
// wait: four requests at once at one every 10 ms (a burst of 1), held up to
// 25 ms, are let through at 0, 10 and 20 ms, and the fourth, 30 ms away,
// refused. The comparison adds the wait table only when something waited.
func TestRunRecordsHowLongAQueueHeldEachRequest(t *testing.T) {
	tr := traffic.Trace{Keys: []string{"k"}, Requests: []traffic.TraceRequest{{Sent: 0, Cost: 1}, {Sent: 0, Cost: 1}, {Sent: 0, Cost: 1}, {Sent: 0, Cost: 1}}}
	l := algos.MustLimit(1, 10_000, 1)
	queue, err := algos.QueueingGCRA(25_000)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := capacity.Compare(tr, limiter.FromAlgorithms(algos.GCRA, queue), l)
	if err != nil {
		t.Fatal(err)
	}
	g, q := rs[0], rs[1]
	if got := fmt.Sprint(q.Allowed, q.Delay); got != "[true true true false] [0 10000 20000 0]" {
		t.Errorf("queue: allowed and held %s, want [true true true false] [0 10000 20000 0]", got)
	}
	if want := (metrics.Percentiles{N: 3, P50: 10_000, P90: 20_000, P99: 20_000, Max: 20_000}); q.Run.Wait != want || q.Run.Held != 2 {
		t.Errorf("queue: wait %+v, %d held; want %+v, 2 held", q.Run.Wait, q.Run.Held, want)
	}
	if g.Delay != nil || g.Run.Wait != (metrics.Percentiles{}) || g.Run.Accepted != 1 {
		t.Errorf("gcra: held %v, wait %+v, %d admitted; want nothing held and 1 admitted", g.Delay, g.Run.Wait, g.Run.Accepted)
	}
	var both, alone bytes.Buffer
	if err := capacity.WriteComparison(&both, tr, rs); err != nil {
		t.Fatal(err)
	}
	if err := capacity.WriteComparison(&alone, tr, rs[:1]); err != nil {
		t.Fatal(err)
	}
	at := strings.Index(both.String(), "\nwait:")
	if at < 0 {
		t.Fatalf("the comparison has no wait table:\n%s", both.String())
	}
	wait := both.String()[at:]
	for _, row := range []string{"gcra 1 0 0.0% 0s 0s 0s 0s", "gcra-queue-25ms 3 2 66.7% 10ms 20ms 20ms 20ms"} {
		if !slices.ContainsFunc(strings.Split(wait, "\n"), func(l string) bool { return strings.Join(strings.Fields(l), " ") == row }) {
			t.Errorf("the comparison lacks the wait row %q:\n%s", row, both.String())
		}
	}
	if strings.Contains(alone.String(), "wait") {
		t.Errorf("a comparison where nothing waited has a wait table:\n%s", alone.String())
	}
}

// A limiter that says it held an admit a negative time is an error, named.
func TestRunRefusesANegativeDelay(t *testing.T) {
	negative := limiter.Spec{
		Name: "negative", Clock: limiter.CallerClock, Promise: algos.BucketPromise,
		New: func(algos.Limit) (limiter.Limiter, error) { return negativeDelay{}, nil },
	}
	if _, err := capacity.Run(poisson(t, 10, 1, 1, 3), negative, algos.MustLimit(1, algos.Second, 1)); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("an admit held -1 µs: got %v, want an error", err)
	}
}

type negativeDelay struct{}

func (negativeDelay) Allow(context.Context, int, int64) (algos.Decision, error) {
	return algos.Decision{Allowed: true, Delay: -1}, nil
}

// A run is the simulator's ideal run: at a recorded trace's epoch times,
// each algorithm's decisions through capacity (the limiter, given each
// request by the adapter) are the model's own on its store, and the run's
// measures are metrics' of the model's records.
func TestRunIsTheModelsIdealRun(t *testing.T) {
	tr := poisson(t, 120, 4, 30, 5) // 30 a second a key, over the limit of 20
	for i := range tr.Requests {
		tr.Requests[i].Sent += 1_700_000_000 * algos.Second
	}
	l := algos.MustLimit(20, algos.Second, 10)
	queue, err := algos.QueueingGCRA(100 * algos.Second / 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range append(algos.All(), queue) {
		r, err := capacity.Run(tr, limiter.FromAlgorithm(a), l)
		if err != nil {
			t.Fatal(err)
		}
		cfg := model.Config{Limiter: limiter.FromAlgorithm(a), Limit: l, Deployment: model.Ideal, Nodes: 1, Requests: tr.Model()}
		sim, err := model.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range sim.Outcomes {
			if o.Admitted != r.Allowed[i] {
				t.Fatalf("%s: request %d admitted %v by capacity, %v by the model", a.Name, i, r.Allowed[i], o.Admitted)
			}
		}
		all, err := sim.AllRecords(cfg, tr.Keys)
		if err != nil {
			t.Fatal(err)
		}
		m, err := metrics.Measure(func(yield func(record.Record) bool) {
			for _, rec := range all {
				if !yield(rec) {
					return
				}
			}
		}, metrics.Options{Keys: tr.Keys, Window: l.Window})
		if err != nil {
			t.Fatal(err)
		}
		if m.Accepted != r.Run.Accepted || m.Rejected != r.Run.Rejected || m.MaxAccepted1s != r.Run.MaxAccepted1s ||
			m.RetryAfter != r.Run.RetryAfter || m.Jain != r.Run.Jain || !slices.Equal(m.Timeline, r.Run.Timeline) {
			t.Errorf("%s: capacity measured %+v, the model's records %+v", a.Name, r.Run, m)
		}
		if (r.Delay != nil) != (a.Name == queue.Name) || r.Run.Accepted == 0 || r.Run.Rejected == 0 {
			t.Errorf("%s: held %d, %d accepted, %d rejected; want a wait for the queue alone, and both answers", a.Name, r.Run.Held, r.Run.Accepted, r.Run.Rejected)
		}
	}
}
