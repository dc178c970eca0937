package metrics

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/record"
)

const ms = second / 1000

// decided is the record the simulator makes of a request for key k (named
// name(k)) decided at at: the decision seen, its fields stated. ok, deny,
// held and fail make it an admit, a rejection, a held admit and an error.
func decided(at int64, k int) record.Record {
	return record.Record{Key: name(k), Sent: at, Decided: at, Answered: at,
		Seen: record.SeenDecided | record.SeenTold, Answer: record.Answer{Known: record.FieldsDecision}}
}

func ok(at int64, key int) record.Record {
	r := decided(at, key)
	r.Allowed = true
	return r
}

func deny(at int64, key int, retry int64) record.Record {
	r := decided(at, key)
	r.RetryAfter = retry
	return r
}

func held(at int64, key int, delay int64) record.Record {
	r := ok(at, key)
	r.Delay = delay
	return r
}

var errFailed = errors.New("the limiter failed")

func fail(at int64, key int) record.Record {
	r := decided(at, key)
	r.Err = errFailed
	return r
}

func name(k int) string { return string(rune('a' + k)) }

func keys(n int) []string {
	names := make([]string, n)
	for k := range names {
		names[k] = name(k)
	}
	return names
}

func measure(t *testing.T, recs []record.Record, nkeys int, window int64) Run {
	t.Helper()
	r, err := Measure(slices.Values(recs), Options{Keys: keys(nkeys), Window: window})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// burst is n admits spread evenly over [from, from+span).
func burst(from, span int64, n, key int) []record.Record {
	var out []record.Record
	for i := range n {
		out = append(out, ok(from+span*int64(i)/int64(n), key))
	}
	return out
}

func TestTheRollingMaximumCatchesABurstAcrossAWindowBoundary(t *testing.T) {
	// 10 admitted in 0.9–1.0 s and 10 in 1.0–1.1 s: each aligned second
	// holds 10, but [0.9 s, 1.9 s) holds all 20.
	r := measure(t, append(burst(900*ms, 100*ms, 10, 0), burst(second, 100*ms, 10, 0)...), 1, second)
	if r.PerWindow.Max != 10 || r.MaxAccepted1s != 20 || r.MaxAccepted10s != 20 {
		t.Errorf("per aligned second %d, in any 1s %d, in any 10s %d; want 10, 20, 20", r.PerWindow.Max, r.MaxAccepted1s, r.MaxAccepted10s)
	}
}

func TestTheRollingIntervalsAreClosedOpen(t *testing.T) {
	cases := []struct {
		name  string
		times []int64
		want  int64
	}{
		{"two admits exactly 1s apart are never in one [t, t+1s)", []int64{0, second}, 1},
		{"two admits 1µs less than 1s apart are", []int64{0, second - 1}, 2},
		{"admits at one instant all count", []int64{5, 5, 5}, 3},
		{"nothing admitted is 0", nil, 0},
	}
	for _, c := range cases {
		if got := maxInAny(c.times, second); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

func TestJainIsOneWhenEqualAndOneOverNWhenOneKeyGetsEverything(t *testing.T) {
	cases := []struct {
		name   string
		ratios []float64
		want   float64
	}{
		{"equal ratios are perfectly fair", []float64{0.3, 0.3, 0.3}, 1},
		{"one key with everything among four is 1/4", []float64{1, 0, 0, 0}, 0.25},
		{"one key with everything among five is 1/5", []float64{0, 0, 0.7, 0, 0}, 0.2},
		{"every key at zero is equal, so fair", []float64{0, 0}, 1},
		{"no keys is 1", nil, 1},
		{"half and full: (1.5)²/(2·1.25) = 0.9", []float64{0.5, 1}, 0.9},
	}
	for _, c := range cases {
		if got := jain(c.ratios); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Jain(%v) = %v, want %v", c.name, c.ratios, got, c.want)
		}
	}
}

func TestGiniIsZeroWhenEqualAndNMinusOneOverNWhenOneKeyGetsEverything(t *testing.T) {
	cases := []struct {
		name   string
		ratios []float64
		want   float64
	}{
		{"equal ratios", []float64{0.3, 0.3, 0.3}, 0},
		{"one key with everything among four is 3/4", []float64{0, 1, 0, 0}, 0.75},
		{"one key with everything among two is 1/2", []float64{0.4, 0}, 0.5},
		{"every key at zero", []float64{0, 0, 0}, 0},
		{"no keys", nil, 0},
		{"half and full: 0.5/(2·1.5) = 1/6", []float64{1, 0.5}, 1.0 / 6},
	}
	for _, c := range cases {
		if got := gini(c.ratios); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Gini(%v) = %v, want %v", c.name, c.ratios, got, c.want)
		}
	}
}

func TestFairnessIsOverTheAcceptRatiosOfTheKeysThatHadRequestsDecided(t *testing.T) {
	// a: 1 of 2, b: 1 of 4, c: only errors (no ratio), d: nothing, e: 1 of 4.
	r := measure(t, []record.Record{
		ok(0, 0), ok(0, 1), fail(0, 2), ok(0, 4),
		deny(1, 0, 9), deny(1, 1, 9), deny(1, 4, 9), deny(2, 1, 9), deny(2, 4, 9), deny(3, 1, 9), deny(3, 4, 9),
	}, 5, second)
	if r.KeysDecided != 3 {
		t.Errorf("KeysDecided = %d, want 3 (a, b and e)", r.KeysDecided)
	}
	if r.Worst != 1 {
		t.Errorf("the worst-starved key is %d, want 1: b and e tie at 25%%, and b comes first", r.Worst)
	}
	if want := jain([]float64{0.5, 0.25, 0.25}); r.Jain != want {
		t.Errorf("Jain = %v, want %v", r.Jain, want)
	}
	if !math.IsNaN(r.Keys[2].AcceptRatio) || !math.IsNaN(r.Keys[3].AcceptRatio) {
		t.Errorf("a key with only errors, or nothing, has no accept ratio: got %v and %v", r.Keys[2].AcceptRatio, r.Keys[3].AcceptRatio)
	}
	if none := measure(t, []record.Record{fail(0, 0)}, 2, second); none.Worst != -1 || none.Jain != 1 || none.Gini != 0 {
		t.Errorf("with no key decided, Worst %d, Jain %v, Gini %v; want -1, 1, 0", none.Worst, none.Jain, none.Gini)
	}
}

func TestRetryAfterPercentilesAreNearestRank(t *testing.T) {
	seq := func(n int) []int64 {
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = int64(n - i) // descending: percentiles sorts
		}
		return xs
	}
	cases := []struct {
		name  string
		xs    []int64
		zeros int64
		want  Percentiles
	}{
		{"1..100: the p-th value", seq(100), 0, Percentiles{N: 100, P50: 50, P90: 90, P99: 99, Max: 100}},
		{"three values: ranks ⌈1.5⌉=2, ⌈2.7⌉=3, ⌈2.97⌉=3", []int64{30, 10, 20}, 0, Percentiles{N: 3, P50: 20, P90: 30, P99: 30, Max: 30}},
		{"one value is every percentile", []int64{7}, 0, Percentiles{N: 1, P50: 7, P90: 7, P99: 7, Max: 7}},
		{"ten values: p99 is the max", seq(10), 0, Percentiles{N: 10, P50: 5, P90: 9, P99: 10, Max: 10}},
		{"none", nil, 0, Percentiles{}},
		{"zeros counted come first: 50 of them and 1..50", seq(50), 50, Percentiles{N: 100, P50: 0, P90: 40, P99: 49, Max: 50}},
		{"zeros alone", nil, 4, Percentiles{N: 4}},
	}
	for _, c := range cases {
		if got := percentiles(c.xs, c.zeros); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	r := measure(t, []record.Record{ok(0, 0), deny(1, 0, 300), fail(2, 0), deny(3, 1, 100), ok(4, 1), deny(5, 0, 200)}, 2, second)
	if want := (Percentiles{N: 3, P50: 200, P90: 300, P99: 300, Max: 300}); r.RetryAfter != want {
		t.Errorf("the run's Retry-After: got %+v, want %+v (rejections only)", r.RetryAfter, want)
	}
	if want := (Percentiles{N: 1, P50: 100, P90: 100, P99: 100, Max: 100}); r.Keys[1].RetryAfter != want {
		t.Errorf("key b's Retry-After: got %+v, want %+v", r.Keys[1].RetryAfter, want)
	}
}

// held is an admit that a queueing limiter held delay µs.

// The wait is over every admit, the ones let through at once counted as 0,
// and only when some admit was held: a run of a limiter that holds nothing
// has no wait at all, whatever its rejections' Delay says.
func TestWaitPercentilesAreOverTheAdmitsWhenAnyWasHeld(t *testing.T) {
	r := measure(t, []record.Record{ok(0, 0), held(1, 0, 40), rejectedButHeld(2, 1, 900), fail(3, 1), held(4, 1, 10), ok(5, 0)}, 2, second)
	if want := (Percentiles{N: 4, P50: 0, P90: 40, P99: 40, Max: 40}); r.Wait != want || r.Held != 2 {
		t.Errorf("wait %+v, %d held; want %+v, 2 held (the 4 admits; the rejection's Delay is not read)", r.Wait, r.Held, want)
	}
	none := measure(t, []record.Record{ok(0, 0), deny(1, 0, 5), rejectedButHeld(2, 0, 7)}, 1, second)
	if none.Wait != (Percentiles{}) || none.Held != 0 {
		t.Errorf("no admit held: wait %+v, %d held; want none", none.Wait, none.Held)
	}
	if _, err := Measure(slices.Values([]record.Record{held(0, 0, -1)}), Options{Keys: keys(1), Window: 1}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("an admit held a negative time: got %v, want an error", err)
	}
}

func TestTimeToFirstRejectionCountsFromTheFirstRequest(t *testing.T) {
	r := measure(t, []record.Record{
		ok(5*second, 0), fail(5100*ms, 0), ok(5200*ms, 0), deny(5700*ms, 0, 1), ok(6*second, 1), deny(6500*ms, 1, 1), ok(7*second, 2),
	}, 3, second)
	if r.TimeToFirstRejection != 700*ms {
		t.Errorf("the run's first rejection came %d µs after its first request, want 700ms", r.TimeToFirstRejection)
	}
	if got := []int64{r.Keys[0].TimeToFirstRejection, r.Keys[1].TimeToFirstRejection, r.Keys[2].TimeToFirstRejection}; got[0] != 700*ms || got[1] != 500*ms || got[2] != -1 {
		t.Errorf("per key, first rejections after %v µs; want 700ms, 500ms (from the key's own first request), -1 (none)", got)
	}
	if none := measure(t, []record.Record{ok(0, 0), fail(1, 0)}, 1, second); none.TimeToFirstRejection != -1 {
		t.Errorf("a run with no rejection: %d, want -1 (an error is not a rejection)", none.TimeToFirstRejection)
	}
}

func TestTheHistogramCountsEveryWindowOfTheSpanEmptyOnesIncluded(t *testing.T) {
	// Admits at 1.1 s, 1.2 s and 3.5 s, a rejection at 4.9 s: the span is
	// [1 s, 5 s), four windows admitting 2, 0, 1 and 0.
	r := measure(t, []record.Record{ok(1100*ms, 0), ok(1200*ms, 0), ok(3500*ms, 0), deny(4900*ms, 0, 1)}, 1, second)
	if r.Start != second || r.End != 5*second {
		t.Errorf("span [%d, %d) µs, want [1s, 5s)", r.Start, r.End)
	}
	want := Histogram{Windows: 4, Max: 2, Bins: []Bin{{0, 2}, {1, 1}, {2, 1}}}
	if !sameHistogram(r.PerWindow, want) {
		t.Errorf("histogram %+v, want %+v", r.PerWindow, want)
	}
	if !sameHistogram(r.Keys[0].PerWindow, want) {
		t.Errorf("the only key's histogram %+v, want the run's, %+v", r.Keys[0].PerWindow, want)
	}
	if got := r.Timeline; len(got) != 2 || got[0] != (WindowCount{second, 2}) || got[1] != (WindowCount{3 * second, 1}) {
		t.Errorf("timeline %+v, want the windows at 1s (2) and 3s (1)", got)
	}
	if r.AcceptedPerSecond != 0.75 {
		t.Errorf("%v accepted per second, want 3 over the 4s span = 0.75", r.AcceptedPerSecond)
	}
	// A long span of short windows is counted, not walked.
	long := measure(t, []record.Record{ok(0, 0), ok(MaxTime, 0)}, 1, 1)
	if want := (Histogram{Windows: MaxTime + 1, Max: 1, Bins: []Bin{{0, MaxTime - 1}, {1, 2}}}); !sameHistogram(long.PerWindow, want) {
		t.Errorf("a span of 2^61 one-µs windows: %+v, want %+v", long.PerWindow, want)
	}
}

func sameHistogram(a, b Histogram) bool {
	if a.Windows != b.Windows || a.Max != b.Max || len(a.Bins) != len(b.Bins) {
		return false
	}
	for i := range a.Bins {
		if a.Bins[i] != b.Bins[i] {
			return false
		}
	}
	return true
}

func TestErrorsAreCountedButNeitherAcceptedNorRejected(t *testing.T) {
	r := measure(t, []record.Record{ok(0, 0), fail(1, 0), deny(2, 0, 5), fail(3, 0), fail(4, 1)}, 2, second)
	if r.Requests != 5 || r.Accepted != 1 || r.Rejected != 1 || r.Errors != 3 {
		t.Errorf("requests %d = accepted %d + rejected %d + errors %d; want 5 = 1 + 1 + 3", r.Requests, r.Accepted, r.Rejected, r.Errors)
	}
	if r.AcceptRatio != 0.5 {
		t.Errorf("accept ratio %v, want 1 of the 2 decided", r.AcceptRatio)
	}
	if k := r.Keys[1]; k.Requests != 1 || k.Errors != 1 || !math.IsNaN(k.AcceptRatio) {
		t.Errorf("key b, which only failed: %+v", k)
	}
}

func TestTheStatePeakIsTheLargestSampleTheEarliestOfEqualOnes(t *testing.T) {
	r, err := Measure(nil, Options{Window: second, StateSamples: []StateSample{{At: 3, Cells: 9}, {At: 1, Cells: 4}, {At: 2, Cells: 9}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (StatePeak{Samples: 3, Cells: 9, At: 2}); r.State != want {
		t.Errorf("got %+v, want %+v", r.State, want)
	}
}

func TestAnEmptyRunMeasuresAsNothing(t *testing.T) {
	r := measure(t, nil, 2, second)
	if r.Requests != 0 || r.Start != 0 || r.End != 0 || r.AcceptedPerSecond != 0 || r.PerWindow.Windows != 0 ||
		r.Worst != -1 || r.TimeToFirstRejection != -1 || !math.IsNaN(r.AcceptRatio) || len(r.Keys) != 2 {
		t.Errorf("got %+v", r)
	}
	if s := r.Series("x", 10); len(s.Points) != 0 {
		t.Errorf("an empty run's series has points: %v", s.Points)
	}
}

func TestSeriesBucketsWindowsKeepingTheBusiestOfEach(t *testing.T) {
	// Ten 1 s windows admitting 1, 2, …, 10 (window i admits i+1), drawn in
	// at most four points: three windows a point, the last holding one.
	var out []record.Record
	for i := range 10 {
		out = append(out, burst(int64(i)*second, second, i+1, 0)...)
	}
	r := measure(t, out, 1, second)
	s := r.Series("x", 4)
	if s.Start != 0 || s.Step != 3*second || s.Window != second || len(s.Points) != 4 ||
		s.Points[0] != 3 || s.Points[1] != 6 || s.Points[2] != 9 || s.Points[3] != 10 {
		t.Errorf("got %+v, want points 3, 6, 9, 10 every 3s", s)
	}
	if s := r.Series("x", 100); s.Step != second || len(s.Points) != 10 {
		t.Errorf("with room for every window: step %d, %d points; want 1s, 10", s.Step, len(s.Points))
	}
}

func TestBadInputIsAnErrorNotAPanic(t *testing.T) {
	two := []string{"a", "b"}
	cases := []struct {
		name    string
		records []record.Record
		opts    Options
		want    string
	}{
		{"a zero window", nil, Options{Keys: two}, "window"},
		{"a negative window", nil, Options{Keys: two, Window: -1}, "window"},
		{"a window past MaxTime", nil, Options{Keys: two, Window: MaxTime + 1}, "window"},
		{"a key named twice", nil, Options{Keys: []string{"a", "a"}, Window: 1}, "twice"},
		{"records out of time order", []record.Record{ok(5, 0), ok(4, 1)}, Options{Keys: two, Window: 1}, "time order"},
		{"a key Keys does not name", []record.Record{ok(0, 2)}, Options{Keys: two, Window: 1}, `key "c"`},
		{"a key when Keys names none", []record.Record{ok(0, 0)}, Options{Keys: []string{}, Window: 1}, `key "a"`},
		{"a negative time", []record.Record{ok(-1, 0)}, Options{Keys: two, Window: 1}, "outside"},
		{"a time past MaxTime", []record.Record{ok(MaxTime+1, 0)}, Options{Keys: two, Window: 1}, "outside"},
		{"an admit held a negative time", []record.Record{held(0, 0, -1)}, Options{Keys: two, Window: 1}, "negative"},
		{"a negative state size", nil, Options{Keys: two, Window: 1, StateSamples: []StateSample{{0, -1}}}, "cells"},
	}
	for _, c := range cases {
		_, err := Measure(slices.Values(c.records), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	// A Retry-After on an admit or an error is not read, so not checked,
	// nor a Delay off an admit.
	if _, err := Measure(slices.Values([]record.Record{held(0, 0, 0), held(0, 0, 0), rejectedButHeld(0, 0, -1)}), Options{Keys: two, Window: 1}); err != nil {
		t.Errorf("a Delay off an admit: %v", err)
	}
}

// rejectedButHeld is a rejection whose answer says it was held: a Delay
// Measure does not read.
func rejectedButHeld(at int64, key int, delay int64) record.Record {
	r := deny(at, key, 0)
	r.Delay = delay
	return r
}

// The rules by which a record is read: its time is Decided when its
// producer saw it and Sent otherwise; an Err makes it an error whatever
// its answer; a rejection's Retry-After counts when stated, a negative one
// as 0; and with no Options.Keys the keys are the records', in order.
func TestARecordIsReadByWhatItsProducerSaw(t *testing.T) {
	live := func(sent, answered int64, key string, allowed bool) record.Record {
		r := record.Record{Key: key, Sent: sent, Answered: answered, Decided: 999 * second} // Decided unseen: never read
		r.Allowed = allowed
		return r
	}
	failedAdmit := ok(2*second, 0)
	failedAdmit.Err = errFailed
	negative := deny(2*second, 0, -5)
	recs := []record.Record{
		live(0, 900*ms, "z", true),       // read at Sent, 0
		live(100*ms, 150*ms, "a", false), // a rejection that stated no Retry-After
		ok(1500*ms, 0),                   // read at Decided
		failedAdmit,                      // an error, though its answer admits
		negative,                         // a Retry-After of -5 µs, read as 0
		live(2500*ms, 2600*ms, "z", true),
	}
	r, err := Measure(slices.Values(recs), Options{Window: second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Start != 0 || r.End != 3*second || r.Accepted != 3 || r.Rejected != 2 || r.Errors != 1 {
		t.Errorf("span [%d, %d), %d/%d/%d; want [0, 3s), 3 accepted, 2 rejected, 1 error", r.Start, r.End, r.Accepted, r.Rejected, r.Errors)
	}
	if len(r.Keys) != 2 || r.Keys[0].Name != "z" || r.Keys[1].Name != "a" || r.Keys[0].Accepted != 2 {
		t.Errorf("keys %+v; want z (2 accepted), then a", r.Keys)
	}
	if want := (Percentiles{N: 1}); r.RetryAfter != want {
		t.Errorf("Retry-After %+v; want %+v: the stated one, -5 µs read as 0, and the unstated one left out", r.RetryAfter, want)
	}
	if r.TimeToFirstRejection != 100*ms {
		t.Errorf("first rejection after %d µs; want 100ms, its Sent", r.TimeToFirstRejection)
	}
}

// rng is splitmix64: a seeded generator whose stream no Go release changes.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *rng) intn(n int64) int64 { return int64(r.next() % uint64(n)) }

// randomRun is a run of up to 400 requests from up to 6 keys over up to
// 30 s, bunched so that some seconds are busy and others idle.
func randomRun(g *rng) ([]record.Record, int) {
	nkeys := int(1 + g.intn(6))
	n := int(g.intn(400))
	spread := 1 + g.intn(30*second)
	var out []record.Record
	at := g.intn(5 * second)
	for range n {
		if g.intn(10) == 0 {
			at += g.intn(spread / 4)
		} else {
			at += g.intn(spread/int64(n+1) + 1)
		}
		o := decided(at, int(g.intn(int64(nkeys))))
		switch g.intn(10) {
		case 0:
			o.Err = errFailed
		case 1, 2, 3, 4:
			o.RetryAfter = g.intn(second)
		default:
			o.Allowed = true
		}
		out = append(out, o)
	}
	return out, nkeys
}

func TestPropertiesHoldOnRandomRuns(t *testing.T) {
	g := rng(1)
	for trial := range 500 {
		out, nkeys := randomRun(&g)
		r1 := measure(t, out, nkeys, second)
		r10 := measure(t, out, nkeys, 10*second)
		var admitted []int64
		for _, o := range out {
			if o.Allowed {
				admitted = append(admitted, o.Decided)
			}
		}
		// The rolling maximum is exact: it agrees with a brute force over
		// every interval starting at an admitted time ...
		for _, c := range []struct {
			got, length int64
		}{{r1.MaxAccepted1s, second}, {r1.MaxAccepted10s, 10 * second}} {
			var want int64
			for _, t0 := range admitted {
				var n int64
				for _, t1 := range admitted {
					if t0 <= t1 && t1 < t0+c.length {
						n++
					}
				}
				want = max(want, n)
			}
			if c.got != want {
				t.Fatalf("trial %d: most in any %d µs %d, brute force %d", trial, c.length, c.got, want)
			}
		}
		// ... it is at least the most in one aligned window of its
		// length, and at most twice that: any interval overlaps two.
		for _, c := range []struct {
			rolling, aligned int64
			length           string
		}{{r1.MaxAccepted1s, r1.PerWindow.Max, "1s"}, {r10.MaxAccepted10s, r10.PerWindow.Max, "10s"}} {
			if c.rolling < c.aligned || c.rolling > 2*c.aligned {
				t.Fatalf("trial %d: most in any %s %d, in one aligned %s window %d", trial, c.length, c.rolling, c.length, c.aligned)
			}
		}
		if n := float64(r1.KeysDecided); n > 0 && (r1.Jain < 1/n || r1.Jain > 1) {
			t.Fatalf("trial %d: Jain %v outside [1/%v, 1]", trial, r1.Jain, n)
		}
		if r1.Gini < 0 || r1.Gini >= 1 {
			t.Fatalf("trial %d: Gini %v outside [0, 1)", trial, r1.Gini)
		}
		// The keys add up to the run, window by window.
		var acc, rej, errs, windows int64
		var rate float64
		for _, k := range r1.Keys {
			acc, rej, errs, rate = acc+k.Accepted, rej+k.Rejected, errs+k.Errors, rate+k.AcceptedPerSecond
			if k.PerWindow.Windows != r1.PerWindow.Windows || k.MaxAccepted1s > r1.MaxAccepted1s {
				t.Fatalf("trial %d: key %d counts %d windows (run: %d), most in any 1s %d (run: %d)", trial, k.Key, k.PerWindow.Windows, r1.PerWindow.Windows, k.MaxAccepted1s, r1.MaxAccepted1s)
			}
		}
		if acc != r1.Accepted || rej != r1.Rejected || errs != r1.Errors || math.Abs(rate-r1.AcceptedPerSecond) > 1e-9 {
			t.Fatalf("trial %d: the keys add up to %d/%d/%d at %v/s, the run is %d/%d/%d at %v/s", trial, acc, rej, errs, rate, r1.Accepted, r1.Rejected, r1.Errors, r1.AcceptedPerSecond)
		}
		for _, wc := range r1.Timeline {
			windows += wc.Accepted
		}
		if windows != r1.Accepted {
			t.Fatalf("trial %d: the timeline holds %d admits, the run %d", trial, windows, r1.Accepted)
		}
	}
}

func TestJainAndGiniAgreeWithTheirDefinitionsOnRandomRatios(t *testing.T) {
	g := rng(2)
	for trial := range 2000 {
		xs := make([]float64, 1+g.intn(12))
		for i := range xs {
			if g.intn(4) > 0 { // some exact zeros, some ties
				xs[i] = float64(g.intn(5)) / 4
			}
		}
		n := float64(len(xs))
		var sum, squares, pairs float64
		for _, a := range xs {
			sum, squares = sum+a, squares+a*a
			for _, b := range xs {
				pairs += math.Abs(a - b)
			}
		}
		wantJain, wantGini := 1.0, 0.0
		if squares > 0 {
			wantJain, wantGini = sum*sum/(n*squares), pairs/(2*n*sum)
		}
		j, gi := jain(xs), gini(xs)
		if math.Abs(j-wantJain) > 1e-12 || j < 1/n || j > 1 {
			t.Fatalf("trial %d: Jain(%v) = %v, by definition %v, range [1/%v, 1]", trial, xs, j, wantJain, n)
		}
		if math.Abs(gi-wantGini) > 1e-12 || gi < 0 || gi >= 1 {
			t.Fatalf("trial %d: Gini(%v) = %v, by definition %v, range [0, 1)", trial, xs, gi, wantGini)
		}
	}
}
