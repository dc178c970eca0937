package metrics

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
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
	var outcomes []Outcome
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
		o := Outcome{At: req.at, Key: req.key}
		if i%50 == 49 {
			o.Err = true // the limiter failed; the state is untouched
		} else {
			d := alg.Decide(&states[req.key], req.at, limit)
			o.Allowed, o.RetryAfter = d.Allowed, d.RetryAfter
		}
		outcomes = append(outcomes, o)
	}
	r, err := Measure(outcomes, Options{Keys: trafficKeys, Window: second, StateSamples: samples})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reports renders the three reports of the fixed traffic.
func reports(t *testing.T) map[string][]byte {
	t.Helper()
	var named []Named
	var series []Series
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
