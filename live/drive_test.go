package live_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

func TestDriveRejectsBadInput(t *testing.T) {
	ok := live.Func(func(context.Context, string) (algos.Decision, error) { return algos.Decision{Allowed: true}, nil })
	load := live.Load{Rate: 10, Duration: time.Second}
	for _, c := range []struct {
		name   string
		target live.Target
		load   live.Load
		says   string
	}{
		{"no target", nil, load, "no target"},
		{"nil func", live.Func(nil), load, "nil Func"},
		{"no nodes", live.HTTP{}, load, "at least one node"},
		{"not a URL", live.HTTP{Nodes: []string{"127.0.0.1:80"}}, load, "not an http"},
		{"unknown reset unit", live.HTTP{Nodes: []string{"http://127.0.0.1:1"}, Reset: 9}, load, "ResetUnit"},
		{"observer without a call", live.Observer{Nodes: 1}, load, "without a Call"},
		{"observer without nodes", live.Observer{Call: func(context.Context, string, int) (live.Observation, error) { return live.Observation{}, nil }}, load, "at least one node"},
		{"zero rate", ok, live.Load{Duration: time.Second}, "rate must be positive"},
		{"sticky, open loop", ok, live.Load{Rate: 10, Duration: time.Second, Sticky: true}, "it needs Loop"},
		{"negative rate", ok, live.Load{Rate: -1, Duration: time.Second}, "rate must be positive"},
		{"zero duration", ok, live.Load{Rate: 1}, "duration must be positive"},
		{"negative duration", ok, live.Load{Rate: 1, Duration: -time.Second}, "duration must be positive"},
		{"negative timeout", ok, live.Load{Rate: 1, Duration: time.Second, Timeout: -1}, "negative timeout"},
		{"negative in flight", ok, live.Load{Rate: 1, Duration: time.Second, MaxInFlight: -1}, "negative MaxInFlight"},
		{"empty key", ok, live.Load{Keys: []string{""}, Rate: 1, Duration: time.Second}, "empty key"},
		{"a rate and a closed loop", ok, live.Load{Rate: 1, Duration: time.Second, Loop: traffic.RetryAfterClient(0, algos.Second, 1)}, "offers no rate"},
		{"absurd rate", ok, live.Load{Rate: 2_000_000, Duration: time.Second}, "million"},
		{"empty plan", ok, live.Load{Plan: []record.Record{}}, "empty plan"},
		{"a plan and a rate", ok, live.Load{Plan: []record.Record{{Key: "a"}}, Rate: 1}, "no Rate, Loop or Keys"},
		{"a plan and keys", ok, live.Load{Plan: []record.Record{{Key: "a"}}, Keys: []string{"b"}}, "no Rate, Loop or Keys"},
		{"a plan without a key", ok, live.Load{Plan: []record.Record{{Sent: 1}}}, "request 1 has no key"},
		{"a plan back in time", ok, live.Load{Plan: []record.Record{{Key: "a", Sent: 5}, {Key: "a", Sent: 4}}}, "request 2 (at 4 µs) comes before request 1"},
		{"a negative plan", ok, live.Load{Plan: []record.Record{{Key: "a", Sent: -1}}}, "negative"},
		{"a plan with a negative duration", ok, live.Load{Plan: []record.Record{{Key: "a"}}, Duration: -time.Second}, "must not be negative"},
		{"a plan past its duration", ok, live.Load{Plan: []record.Record{{Key: "a", Sent: 2_000_000}}, Duration: time.Second}, "past the drive's 1s"},
	} {
		recs, err := live.Drive(context.Background(), c.target, c.load)
		if err == nil || !strings.Contains(err.Error(), c.says) || recs != nil {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.says)
		}
	}
}

// Each key's requests go to the nodes in turn, carrying the key in the
// header, the path and the body, and every request is recorded with its
// parsed answer.
func TestDriveRecordsEveryRequestRoundRobin(t *testing.T) {
	t.Parallel()
	type seen struct {
		node               int
		header, path, body string
	}
	var mu sync.Mutex
	var got []seen
	var urls []string
	for i := range 3 {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, seen{i, r.Header.Get("X-Tenant"), r.URL.Path, string(b)})
			mu.Unlock()
			w.Header().Set("X-RateLimit-Remaining", "7")
			if i == 2 {
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}))
		defer s.Close()
		urls = append(urls, s.URL)
	}
	target := live.HTTP{Nodes: urls, Method: http.MethodPost, Path: "/v1/{key}", Body: `{"user":"{key}"}`, KeyHeader: "X-Tenant"}
	recs, err := live.Drive(context.Background(), target, live.Load{Keys: []string{"a", "b"}, Rate: 20, Duration: 600 * time.Millisecond, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 10 || len(recs) != len(got) {
		t.Fatalf("%d records of %d requests served", len(recs), len(got))
	}
	next := map[string]int{}
	for i, r := range recs {
		if r.Err != nil || r.Answered < r.Sent || i > 0 && r.Sent < recs[i-1].Sent {
			t.Fatalf("record %d: %v", i, r)
		}
		if r.Node != next[r.Key] {
			t.Errorf("key %s went to node %d, want %d", r.Key, r.Node, next[r.Key])
		}
		next[r.Key] = (next[r.Key] + 1) % 3
		if r.Allowed != (r.Node != 2) || r.Remaining != 7 || !r.Known.Has(record.FieldRemaining) || r.Known.Has(record.FieldReset) {
			t.Errorf("record %d: %v", i, r)
		}
	}
	for _, s := range got {
		if k := s.header; (k != "a" && k != "b") || s.path != "/v1/"+k || s.body != `{"user":"`+k+`"}` {
			t.Errorf("served %+v", s)
		}
	}
}

// A planned drive sends exactly its requests, each for its key and node
// and never before its time, and records each with its cost.
func TestDrivePlanSendsEachRequestAtItsTime(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	served := map[string]int{}
	target := live.Func(func(_ context.Context, key string) (algos.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		served[key]++
		return algos.Decision{Allowed: served[key] <= 2}, nil
	})
	plan := []record.Record{
		{Key: "a", Sent: 0, Cost: 1},
		{Key: "b", Sent: 0, Cost: 3},
		{Key: "a", Sent: 30_000, Cost: 1},
		{Key: "a", Sent: 30_000, Cost: 2},
		{Key: "b", Sent: 120_000, Cost: 1},
	}
	recs, err := live.Drive(context.Background(), target, live.Load{Plan: plan, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(plan) {
		t.Fatalf("%d records of a plan of %d", len(recs), len(plan))
	}
	// Records come sorted by Sent; a plan's ties may be sent in either
	// order, so each record is matched to a planned request of its key,
	// cost and time.
	used := make([]bool, len(plan))
	for _, r := range recs {
		found := false
		for i, p := range plan {
			if !used[i] && p.Key == r.Key && p.Cost == r.Cost && r.Sent >= p.Sent {
				used[i], found = true, true
				break
			}
		}
		if !found || r.Err != nil || r.Answered < r.Sent || r.Node != 0 {
			t.Errorf("record %v matches no planned request", r)
		}
	}
	if served["a"] != 3 || served["b"] != 2 {
		t.Errorf("served %v, want a 3 and b 2", served)
	}
}

// A target that never answers costs Drive at most its Duration and one
// Timeout; the requests over the in-flight bound are recorded unsent.
func TestDriveIsBoundedByDurationAndTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	stuck := live.Func(func(context.Context, string) (algos.Decision, error) { <-release; return algos.Decision{}, nil })
	begin := time.Now()
	recs, err := live.Drive(context.Background(), stuck, live.Load{Rate: 50, Duration: 300 * time.Millisecond, Timeout: 200 * time.Millisecond, MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	var timedOut, unsent int
	for _, r := range recs {
		switch {
		case errors.Is(r.Err, live.ErrInFlight):
			unsent++
		case errors.Is(r.Err, context.DeadlineExceeded):
			timedOut++
		default:
			t.Errorf("%v", r)
		}
	}
	if timedOut != 2 || unsent == 0 {
		t.Errorf("%d timed out, %d unsent, of %d", timedOut, unsent, len(recs))
	}
}

// Drive stops on its context's end, returning what it recorded and the
// context's error.
func TestDriveStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ok := live.Func(func(context.Context, string) (algos.Decision, error) { return algos.Decision{Allowed: true}, nil })
	recs, err := live.Drive(ctx, ok, live.Load{Rate: 100, Duration: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) || len(recs) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}

// A target that panics is recorded as an error, the run goes on.
func TestDriveRecordsAPanic(t *testing.T) {
	t.Parallel()
	boom := live.Func(func(context.Context, string) (algos.Decision, error) { panic("boom") })
	recs, err := live.Drive(context.Background(), boom, live.Load{Rate: 20, Duration: 200 * time.Millisecond})
	if err != nil || len(recs) == 0 || recs[0].Err == nil || !strings.Contains(recs[0].Err.Error(), "boom") {
		t.Fatalf("%v %v", recs, err)
	}
}

// buckets is `n` token buckets of l in memory, taken in turn: one is a
// correct limiter, three are per-instance limiters behind one key. Each
// answer waits 0 to 25 ms before the decision and 0 to 25 ms after it.
func buckets(n int, l algos.Limit) live.Func {
	var mu sync.Mutex
	start := time.Now()
	states := make([]algos.State, n)
	next := 0
	return func(ctx context.Context, key string) (algos.Decision, error) {
		time.Sleep(time.Duration(rand.Int64N(25_000)) * time.Microsecond)
		mu.Lock()
		d := algos.TokenBucket.Decide(&states[next], time.Since(start).Microseconds()+algos.Second, l)
		next = (next + 1) % n
		mu.Unlock()
		time.Sleep(time.Duration(rand.Int64N(25_000)) * time.Microsecond)
		return d, nil
	}
}

// Live, in real time: a correct bucket whose answers come 0 to 50 ms late
// is clean, three buckets behind one key are caught. Catching them needs
// the load to have been offered: three buckets of 10 admit more than the
// promise's 20 in a second only when a second holds more than 20 sends.
// A machine too busy to keep the pace (19 sends in 1.5 s were seen under
// -race with both cores busy) did not run that load, which the records
// say (their Sent times), so the drive is run again, up to three times,
// and a load never offered fails the test, naming the densest second.
func TestSlowAnswersLive(t *testing.T) {
	t.Parallel()
	l := algos.MustLimit(10, algos.Second, 10)
	const tries, loaded = 3, 40 // sends in the densest second that make a drive count
	for _, c := range []struct {
		name  string
		n     int
		clean bool
	}{{"correct", 1, true}, {"three buckets", 3, false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			densest := 0
			for try := 1; try <= tries; try++ {
				recs, err := live.Drive(context.Background(), buckets(c.n, l), live.Load{Rate: 100, Duration: 1500 * time.Millisecond, Timeout: 30 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				v := judge.Records(recs, algos.BucketPromise(l), l)
				t.Logf("drive %d:\n%s", try, v)
				if v.Failed > 0 || c.clean && !v.Clean() {
					t.Fatalf("want clean=%v", c.clean)
				}
				if densest = densestSecond(recs); !c.clean && densest < loaded {
					continue // the machine did not offer the load: nothing to catch
				}
				if _, caught := v.Caught(breach.OverAdmission); !c.clean && (v.Clean() || !caught) {
					t.Errorf("want clean=%v", c.clean)
				}
				return
			}
			t.Errorf("in %d drives the densest second held %d sends, want %d: this machine never offered the load", tries, densest, loaded)
		})
	}
}

// densestSecond is the most records sent within one second.
func densestSecond(recs []record.Record) int {
	most := 0
	for i, j := 0, 0; j < len(recs); j++ {
		for recs[j].Sent-recs[i].Sent >= algos.Second {
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}

// A target that sees its decisions (a store's clock and order, mapped to
// the drive's) has its records claim them: the drive starts at Start, a
// plan's records come back in the plan's order, each decided when its
// target saw, ranked from 1 by that time and then the target's own
// order, its span widened where the mapped clock put the decision just
// outside it; the time told is kept, and an error claims no decision.
func TestDriveRecordsWhatAnObserverSaw(t *testing.T) {
	start := time.Now().Add(30 * time.Millisecond)
	var mu sync.Mutex
	count := int64(100) // the target's own order: any count that grows
	target := live.Observer{Nodes: 2, Call: func(ctx context.Context, key string, node int) (live.Observation, error) {
		mu.Lock()
		defer mu.Unlock()
		count += 7
		now := time.Since(start).Microseconds()
		if key == "broken" {
			return live.Observation{Told: now, Has: record.SeenTold}, errors.New("store down")
		}
		decided := now / 5_000 * 5_000 // a coarse clock: several decisions share a µs
		if key == "early" {
			decided = -3 // before the drive's time 0: the span must widen
		}
		return live.Observation{Answer: record.Answer{Decision: algos.Decision{Allowed: node == 0}}, Decided: decided, Told: now + 1_000_000, Order: count,
			Has: record.SeenDecided | record.SeenTold | record.SeenOrder}, nil
	}}
	var plan []record.Record
	for i := range 6 {
		plan = append(plan, record.Record{Key: "k", Node: i % 2, Sent: int64(i) * 1_000})
	}
	plan = append(plan, record.Record{Key: "broken", Sent: 6_000}, record.Record{Key: "early", Sent: 6_000})
	recs, err := live.Drive(context.Background(), target, live.Load{Plan: plan, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(plan) {
		t.Fatalf("%d records for %d planned", len(recs), len(plan))
	}
	ranks := map[int64]bool{}
	for i, r := range recs {
		if r.Key != plan[i].Key || r.Node != plan[i].Node {
			t.Fatalf("record %d is key %s node %d, planned key %s node %d: not in the plan's order", i, r.Key, r.Node, plan[i].Key, plan[i].Node)
		}
		if r.Key == "broken" {
			if r.Err == nil || r.Seen != record.SeenTold {
				t.Errorf("the failed call: %v, seen %b; want its error and only its told time", r.Err, r.Seen)
			}
			continue
		}
		// Told is the target's clock since Start, plus 1 s: at most 1 s
		// had the drive not waited for its start.
		if r.Seen != record.SeenDecided|record.SeenTold|record.SeenOrder || r.Decided < r.Sent || r.Decided > r.Answered || r.Told <= 1_000_000 {
			t.Errorf("record %d: %s (seen %b, told %d): not what its target saw", i, r, r.Seen, r.Told)
		}
		if r.Allowed != (r.Node == 0) {
			t.Errorf("record %d: allowed %v on node %d", i, r.Allowed, r.Node)
		}
		if ranks[r.Order] || r.Order < 1 || r.Order > 7 {
			t.Errorf("record %d: rank %d, not one of its own in 1..7", i, r.Order)
		}
		ranks[r.Order] = true
	}
	byRank := make([]record.Record, 8)
	for _, r := range recs {
		if r.Key != "broken" {
			byRank[r.Order] = r
		}
	}
	if byRank[1].Key != "early" || byRank[1].Sent != -3 {
		t.Errorf("rank 1 is %s: want the decision seen before time 0, its span widened to it", byRank[1])
	}
	for k := 2; k <= 7; k++ {
		if byRank[k].Decided < byRank[k-1].Decided {
			t.Errorf("rank %d decided at %d, rank %d at %d", k, byRank[k].Decided, k-1, byRank[k-1].Decided)
		}
	}
}

// workerClient sends n requests one after another, the first at first
// (µs after the drive's start), and stops at the first error.
type workerClient struct {
	first int64
	left  int
}

func (c *workerClient) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return c.first, true
	}
	c.left--
	return 0, c.left > 0 && last.Err == nil
}

// A key listed k times is driven by k clients at once, each made in the
// order of Keys; Sticky sends all of the k-th client's requests to node k
// (a worker on its own connection), and a client that says no more stops.
func TestDriveStickyClientsShareAKey(t *testing.T) {
	var mu sync.Mutex
	calls := map[int]int{}
	target := live.Observer{Nodes: 3, Call: func(ctx context.Context, key string, node int) (live.Observation, error) {
		mu.Lock()
		calls[node]++
		mu.Unlock()
		return live.Observation{Answer: record.Answer{Decision: algos.Decision{Allowed: true}}}, nil
	}}
	made := 0
	firsts := []int64{1_000, 2_000, 3_000}
	recs, err := live.Drive(context.Background(), target, live.Load{Keys: []string{"k", "k", "k"}, Sticky: true, Duration: 10 * time.Second,
		Loop: func() record.Client {
			c := &workerClient{first: firsts[made], left: 4 + made}
			made++
			return c
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4+5+6 || calls[0] != 4 || calls[1] != 5 || calls[2] != 6 {
		t.Fatalf("%d records, calls per node %v: want 4, 5 and 6 on nodes 0, 1 and 2", len(recs), calls)
	}
	firstOf := map[int]int64{}
	for _, r := range recs {
		if _, ok := firstOf[r.Node]; !ok {
			firstOf[r.Node] = r.Sent
		}
	}
	for node, first := range firsts {
		if firstOf[node] < first {
			t.Errorf("node %d's first request sent at %d µs, its client asked for %d", node, firstOf[node], first)
		}
	}
}

// goOnClient sends n requests one after another, whatever each answer was.
type goOnClient struct{ left int }

func (c *goOnClient) Next(last *record.Record) (int64, bool) {
	if last != nil {
		c.left--
	}
	return 0, c.left > 0
}

// A closed-loop client whose call outlives the Timeout is recorded as
// timed out at the Timeout and goes on with its next request while the
// stalled call is still out: the drive neither waits for the call nor
// loses the client.
func TestClosedLoopClientGoesOnPastAStalledCall(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	var mu sync.Mutex
	calls := 0
	target := live.Func(func(context.Context, string) (algos.Decision, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 2 {
			<-release // ignores its context
		}
		return algos.Decision{Allowed: true}, nil
	})
	const timeout = 100 * time.Millisecond
	recs, err := live.Drive(context.Background(), target, live.Load{Keys: []string{"a"}, Duration: 10 * time.Second, Timeout: timeout,
		Loop: func() record.Client { return &goOnClient{left: 5} }})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records, want the client's 5: %v", len(recs), recs)
	}
	for i, r := range recs {
		switch stalled := i == 1; {
		case stalled && !errors.Is(r.Err, context.DeadlineExceeded):
			t.Errorf("the stalled call's record has error %v, want its timeout", r.Err)
		case stalled && r.Answered-r.Sent < timeout.Microseconds():
			t.Errorf("the stalled call was given up after %d µs, before its %v timeout", r.Answered-r.Sent, timeout)
		case !stalled && (r.Err != nil || !r.Allowed):
			t.Errorf("request %d: %+v", i, r)
		case i > 0 && r.Sent < recs[i-1].Answered:
			t.Errorf("request %d sent at %d µs, before request %d was answered at %d µs", i, r.Sent, i-1, recs[i-1].Answered)
		}
	}
}
