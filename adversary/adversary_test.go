package adversary_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/adversary"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// limit is small, so that a minimal attack is a handful of lines: 8 per
// second, burst 4 (a whole share, 2 per second and a burst of 1, for each of
// local-split's four nodes). Any interval holds Burst admits, so no attack of fewer
// than Burst+1 requests can break the bucket promise.
var limit = algos.MustLimit(8, algos.Second, 4)

// bounds are the attacker's in every test: 24 requests within 12 s (past
// the wipe at 10.5 s), at most 5 times the limit's rate.
var bounds = adversary.Bounds{MaxRequests: 24, Duration: 12 * algos.Second, MaxRate: 5, Tries: 10_000}

const seed = 1

// table is the token bucket deployed d at the conditions of the published
// table (scenarios.DefaultOptions: 4 nodes, a 1 ms round trip with ±25% on
// each leg, the store wiped at 10.5 s, local-split nodes restarting every
// 5 s on average; clocks 50 ms apart for node-clock and local-split, in
// agreement for the deployment bugs), at limit, with the attacker picking
// each request's node.
func table(d model.Deployment) model.Config {
	cfg := model.Config{
		Limiter:    limiter.FromAlgorithm(algos.TokenBucket),
		Limit:      limit,
		Deployment: d,
		Nodes:      4,
		RTT:        1000,
		Jitter:     model.DefaultJitter,
		WipeAt:     10*algos.Second + algos.Second/2,
		Pinned:     true,
		Seed:       1,
	}
	switch d {
	case model.NodeClock:
		cfg.Skew = 50_000
	case model.LocalSplit:
		cfg.Skew, cfg.RestartEvery = 50_000, 5*algos.Second
	}
	return cfg
}

// searched is each deployment's Search and its text, made once for every
// test that reads it.
type searched struct {
	report adversary.SearchReport
	text   []byte
	took   time.Duration
}

var (
	searchMu sync.Mutex
	searches = map[model.Deployment]searched{}
)

func search(t testing.TB, d model.Deployment) searched {
	t.Helper()
	searchMu.Lock()
	defer searchMu.Unlock()
	if s, ok := searches[d]; ok {
		return s
	}
	start := time.Now()
	rep, err := adversary.Search(table(d), bounds, seed)
	if err != nil {
		t.Fatalf("%s: %v", d, err)
	}
	took := time.Since(start)
	var b bytes.Buffer
	if err := rep.Write(&b); err != nil {
		t.Fatal(err)
	}
	s := searched{report: rep, text: b.Bytes(), took: took}
	searches[d] = s
	minimal := "none"
	if rep.Minimal != nil {
		minimal = fmt.Sprintf("%d requests", len(rep.Minimal.Requests))
	}
	t.Logf("%s: searched in %v, %d tries in %d rounds; minimal attack: %s; strongest: excess %d with %d requests",
		d, took.Round(time.Millisecond), rep.Tries, rep.Rounds, minimal, rep.Strongest.Excess, len(rep.Strongest.Requests))
	return s
}

// breaks plays reqs on cfg and reports whether the promise broke, and the
// attack's admits.
func breaks(t *testing.T, cfg model.Config, reqs []record.Request) (*algos.Violation, []int64) {
	t.Helper()
	cfg.Requests = reqs
	res, err := model.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Keys) == 0 {
		return nil, nil
	}
	return res.Keys[0].Violation, res.AdmitTimes(0)
}

// The node-clock token bucket at 50 ms of skew, and the two deployment
// bugs, break the promise; the minimal attack has the fewest requests any
// attack can (Burst+1), and removing any one of them makes the promise
// hold again, checked here by the model directly. The strongest attack
// beats the minimal one by the stated margin.
func TestSearchFindsTheAttacks(t *testing.T) {
	for _, tc := range []struct {
		d         model.Deployment
		strongest int // the least excess the strongest attack must reach
		why       string
	}{
		// Each pair of requests from the node behind, then the node ahead,
		// refills the bucket for 50 ms it already refilled: half a token.
		{model.NodeClock, 3, "the skew refills half a token per switch of nodes"},
		// Four full buckets at one instant: 4·B admits where B are allowed.
		{model.LocalFull, 3 * int(limit.Burst), "four nodes' bursts at one instant"},
		// Requests whose GETs all read the full bucket before any SET.
		{model.GetSet, 3 * int(limit.Burst), "GETs racing within a round trip"},
	} {
		t.Run(tc.d.String(), func(t *testing.T) {
			rep := search(t, tc.d).report
			cfg := table(tc.d)
			m := rep.Minimal
			if m == nil {
				t.Fatalf("no attack found in %d tries; the deployment is known to break its promise", rep.Tries)
			}
			if m.Violation == nil || m.Excess < 1 {
				t.Fatalf("the minimal attack does not break the promise: %+v", m)
			}
			if v, _ := breaks(t, cfg, m.Requests); v == nil {
				t.Fatalf("the minimal attack keeps the promise when the model plays it again")
			}
			if want := int(limit.Burst) + 1; len(m.Requests) != want {
				t.Errorf("the minimal attack has %d requests; the fewest that can break the promise is Burst+1 = %d", len(m.Requests), want)
			}
			for i := range m.Requests {
				fewer := slices.Delete(slices.Clone(m.Requests), i, i+1)
				if v, _ := breaks(t, cfg, fewer); v != nil {
					t.Errorf("the minimal attack without request %d still breaks the promise: %s", i+1, v.Reason)
				}
			}

			s := rep.Strongest
			if s.Excess < tc.strongest {
				t.Errorf("the strongest attack admits %d beyond the promise; want at least %d (%s)", s.Excess, tc.strongest, tc.why)
			}
			if s.Excess < m.Excess || len(s.Requests) > bounds.MaxRequests {
				t.Errorf("the strongest attack (excess %d, %d requests) is weaker than the minimal (excess %d) or out of bounds", s.Excess, len(s.Requests), m.Excess)
			}
			for i := range s.Requests {
				fewer := slices.Delete(slices.Clone(s.Requests), i, i+1)
				cfg.Requests = fewer
				sub, err := adversary.Measure(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if sub.Excess >= s.Excess {
					t.Errorf("the strongest attack without request %d still reaches excess %d ≥ %d: not shrunk", i+1, sub.Excess, s.Excess)
				}
			}
		})
	}
}

// Where the promise must hold (one node with a true clock; the script
// reading the store's clock), the search spends its whole budget and finds
// nothing; the closest attack fills a window to the most the promise
// allows, Burst + Rate - 1 admits in any half-open window, and no more.
func TestSearchFindsNoneWhereThePromiseHolds(t *testing.T) {
	for _, d := range []model.Deployment{model.Ideal, model.StoreClock} {
		t.Run(d.String(), func(t *testing.T) {
			s := search(t, d)
			rep := s.report
			if rep.Minimal != nil {
				t.Fatalf("an attack broke the promise where it must hold:\n%s", s.text)
			}
			if rep.Strongest.Violation != nil || rep.Strongest.Excess != 0 {
				t.Fatalf("the closest attack broke the promise: %+v", rep.Strongest)
			}
			if rep.Tries < bounds.Tries {
				t.Errorf("the search stopped after %d tries, before its budget of %d", rep.Tries, bounds.Tries)
			}
			most := int(limit.Burst + limit.Rate - 1)
			if p := rep.Strongest.Peak; p > most {
				t.Errorf("peak %d in a window of %s, more than the promise allows (%d)", p, algos.FormatMicros(limit.Window), most)
			}
			if !bytes.Contains(s.text, []byte("No attack found in")) {
				t.Errorf("the report does not say that no attack was found:\n%s", s.text)
			}
		})
	}
}

// The same search gives the same bytes on one CPU and with rapid's own
// flags set otherwise: Search fixes rapid's seed and checks itself.
func TestSearchIsDeterministic(t *testing.T) {
	first := search(t, model.NodeClock)

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for name, value := range map[string]string{"rapid.seed": "12345", "rapid.checks": "7"} {
		f := flag.Lookup(name)
		if f == nil {
			t.Fatalf("rapid defines no -%s", name)
		}
		old := f.Value.String()
		if err := f.Value.Set(value); err != nil {
			t.Fatal(err)
		}
		defer f.Value.Set(old)
	}
	rep, err := adversary.Search(table(model.NodeClock), bounds, seed)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := rep.Write(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.text, again.Bytes()) {
		t.Errorf("a second search differs:\n%s", golden.Diff("first search", first.text, again.Bytes()))
	}
}

// Bad input is an error that says what is wrong, never a panic.
func TestSearchRejectsBadInput(t *testing.T) {
	storeClock := limiter.FromAlgorithm(algos.TokenBucket)
	storeClock.Name, storeClock.Clock = "token-bucket on the store's clock", limiter.StoreClock
	for _, tc := range []struct {
		name   string
		cfg    func(*model.Config)
		bounds func(*adversary.Bounds)
		want   string
	}{
		{"zero limit", func(c *model.Config) { c.Limit = algos.Limit{} }, nil, "invalid limit"},
		{"negative duration", nil, func(b *adversary.Bounds) { b.Duration = -1 }, "negative duration"},
		{"no request", nil, func(b *adversary.Bounds) { b.MaxRequests = 0 }, "at least one request"},
		{"no rate", nil, func(b *adversary.Bounds) { b.MaxRate = 0 }, "MaxRate"},
		{"negative budget", nil, func(b *adversary.Bounds) { b.Tries = -1 }, "budget"},
		{"not applicable", func(c *model.Config) { c.Limiter = storeClock }, nil, "does not apply"},
		{"no deployment", func(c *model.Config) { c.Deployment = 0 }, nil, "unknown deployment"},
		{"no nodes", func(c *model.Config) { c.Nodes = 0 }, nil, "nodes"},
		{"no wipe", func(c *model.Config) { c.Deployment, c.WipeAt = model.StoreWiped, 0 }, nil, "WipeAt"},
		{"requests given", func(c *model.Config) { c.Requests = []record.Request{{Sent: 1}} }, nil, "makes its own"},
		{"no limiter", func(c *model.Config) { c.Limiter = limiter.Spec{} }, nil, "Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, b := table(model.NodeClock), bounds
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			if tc.bounds != nil {
				tc.bounds(&b)
			}
			_, err := adversary.Search(cfg, b, seed)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Search = %v; want an error saying %q", err, tc.want)
			}
			if tc.name == "not applicable" {
				var na *model.NotApplicableError
				if !errors.As(err, &na) {
					t.Errorf("%v is not a *model.NotApplicableError", err)
				}
			}
		})
	}
}

// Each built-in deployment's attacks, byte for byte: golden/attacks/<d>.txt
// (-update rewrites them).
func TestGoldenAttacks(t *testing.T) {
	for _, d := range model.Deployments() {
		t.Run(d.String(), func(t *testing.T) {
			golden.Check(t, "attacks/"+d.String()+".txt", search(t, d).text)
		})
	}
}

// BenchmarkSearch reports how many simulated runs a search makes per
// second, on the node-clock token bucket.
func BenchmarkSearch(b *testing.B) {
	tries := 0
	for b.Loop() {
		rep, err := adversary.Search(table(model.NodeClock), bounds, seed)
		if err != nil {
			b.Fatal(err)
		}
		tries += rep.Tries
	}
	b.ReportMetric(float64(tries)/b.Elapsed().Seconds(), "tries/s")
}
