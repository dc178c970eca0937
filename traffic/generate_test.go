package traffic_test

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/traffic"
)

const sec = algos.Second

// generate is TraceSpec.Generate that fails the test on an error.
func generate(t testing.TB, s traffic.TraceSpec) traffic.Trace {
	t.Helper()
	tr, err := s.Generate()
	if err != nil {
		t.Fatalf("%+v: %v", s, err)
	}
	return tr
}

// csvOf is the trace as WriteCSV writes it: the bytes determinism is about.
func csvOf(t testing.TB, tr traffic.Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := traffic.WriteCSV(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// times are the trace's arrival times.
func times(tr traffic.Trace) []int64 {
	out := make([]int64, len(tr.Requests))
	for i, r := range tr.Requests {
		out[i] = r.Sent
	}
	return out
}

// countIn is how many requests are in [from, to).
func countIn(tr traffic.Trace, from, to int64) int {
	n := 0
	for _, r := range tr.Requests {
		if r.Sent >= from && r.Sent < to {
			n++
		}
	}
	return n
}

// within fails unless got is within rel (a fraction) of want.
func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.4g, want %.4g ± %.1f%%", what, got, want, 100*rel)
	} else {
		t.Logf("%s = %.4g, want %.4g ± %.1f%%", what, got, want, 100*rel)
	}
}

// profiles are one TraceSpec of each profile, every stream in use.
func profiles() map[string]traffic.TraceSpec {
	base := traffic.TraceSpec{
		Duration: 20 * sec,
		Keys:     traffic.Zipf(50, 1),
		Cost:     traffic.Around(3, 2),
		Service:  traffic.Exponential(20_000),
	}
	with := func(p traffic.Profile) traffic.TraceSpec { s := base; s.Profile = p; return s }
	return map[string]traffic.TraceSpec{
		"constant": with(traffic.Constant{Count: 7, Per: sec}),
		"poisson":  with(traffic.Poisson{Rate: 100}),
		"diurnal":  with(traffic.Diurnal{Mean: 100, Amplitude: 0.8, Period: 10 * sec, PeakAt: 3 * sec}),
		"bursty":   with(traffic.Bursty{Rate: 20, Factor: 10, Duty: 0.25, Period: 4 * sec}),
		"herd":     with(traffic.Herd{Rate: 5, Storm: 300, After: 2 * sec, Jitter: 50_000, Interval: 3 * sec, Decay: 0.6}),
		"custom": with(traffic.Custom{Peak: 200, Rate: func(at int64) float64 {
			return float64(at%(5*sec)) / float64(5*sec) * 200 // a sawtooth
		}}),
	}
}

func TestTheSameSeedGivesTheSameBytesAndAnotherSeedOtherBytes(t *testing.T) {
	for name, s := range profiles() {
		t.Run(name, func(t *testing.T) {
			s.Seed = 1
			first := csvOf(t, generate(t, s))
			if again := csvOf(t, generate(t, s)); !bytes.Equal(first, again) {
				t.Fatal("two runs of the same TraceSpec differ")
			}
			s.Seed = 2
			if other := csvOf(t, generate(t, s)); bytes.Equal(first, other) {
				t.Fatal("seeds 1 and 2 give the same trace")
			}
		})
	}
}

func TestGenerationDoesNotDependOnGOMAXPROCS(t *testing.T) {
	s := profiles()["diurnal"]
	want := csvOf(t, generate(t, s))
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		got := csvOf(t, generate(t, s))
		runtime.GOMAXPROCS(old)
		if !bytes.Equal(got, want) {
			t.Errorf("GOMAXPROCS=%d gives other bytes", procs)
		}
	}
}

// Each purpose has its own stream: choosing keys, costs or service times
// differently moves no request in time, and changing the costs changes no
// key.
func TestStreamsDoNotShareDraws(t *testing.T) {
	s := profiles()["poisson"]
	a := generate(t, s)
	s.Keys, s.Service = traffic.Weights(1, 9), traffic.Fixed(5)
	b := generate(t, s)
	if !slices.Equal(times(a), times(b)) {
		t.Error("changing the keys and service times moved the arrivals")
	}
	s = profiles()["poisson"]
	s.Cost = traffic.Fixed(1)
	c := generate(t, s)
	for i := range a.Requests {
		if a.Keys[a.Requests[i].Key] != c.Keys[c.Requests[i].Key] {
			t.Fatalf("request %d: changing the costs changed its key", i)
		}
	}
}

func TestPoissonMeanRateAndExponentialGaps(t *testing.T) {
	tr := generate(t, traffic.TraceSpec{Profile: traffic.Poisson{Rate: 200}, Duration: 60 * sec, Seed: 7})
	// 12 000 expected; its standard deviation is 110 (0.9%).
	within(t, "requests in 60 s at 200/s", float64(len(tr.Requests)), 12_000, 0.03)
	// Exponential gaps of mean 5 ms: a fraction e^-1 of them exceed the mean.
	long := 0
	for i := 1; i < len(tr.Requests); i++ {
		if tr.Requests[i].Sent-tr.Requests[i-1].Sent > 5000 {
			long++
		}
	}
	within(t, "fraction of gaps above the mean", float64(long)/float64(len(tr.Requests)-1), math.Exp(-1), 0.05)
}

// Gaps far below a µs must not bias the rate: arrivals are floored from
// real times, not rounded gaps added up.
func TestPoissonStaysUnbiasedAtSubMicrosecondGaps(t *testing.T) {
	tr := generate(t, traffic.TraceSpec{Profile: traffic.Poisson{Rate: 3_000_000}, Duration: 100_000, Seed: 3})
	within(t, "requests in 0.1 s at 3M/s", float64(len(tr.Requests)), 300_000, 0.01)
}

func TestConstantIsExact(t *testing.T) {
	tr := generate(t, traffic.TraceSpec{Profile: traffic.Constant{Count: 100, Per: sec}, Duration: 60 * sec, Start: 1_700_000_000 * sec, Seed: 5})
	if len(tr.Requests) != 6000 {
		t.Fatalf("%d requests, want exactly 6000", len(tr.Requests))
	}
	for i := 1; i < len(tr.Requests); i++ {
		if gap := tr.Requests[i].Sent - tr.Requests[i-1].Sent; gap != 10_000 {
			t.Fatalf("gap %d is %d µs, want exactly 10000", i, gap)
		}
	}
	if phase := tr.Requests[0].Sent - 1_700_000_000*sec; phase < 0 || phase >= 10_000 {
		t.Errorf("first request %d µs after the start, want a phase in [0, 10000)", phase)
	}
	// 3 a second: the j-th at phase + ⌊j·10⁶/3⌋, no drift over a day.
	tr = generate(t, traffic.TraceSpec{Profile: traffic.Constant{Count: 3, Per: sec}, Duration: 86_400 * sec, Seed: 5})
	if len(tr.Requests) != 3*86_400 {
		t.Fatalf("%d requests, want exactly %d", len(tr.Requests), 3*86_400)
	}
	for j, r := range tr.Requests {
		if want := tr.Requests[0].Sent + int64(j)*sec/3; r.Sent != want {
			t.Fatalf("request %d at %d, want %d", j, r.Sent, want)
		}
	}
}

// diurnalSpec is a compressed day: a 120 s period, peak at 30 s.
var diurnalSpec = traffic.TraceSpec{
	Profile:  traffic.Diurnal{Mean: 500, Amplitude: 0.5, Period: 120 * sec, PeakAt: 30 * sec},
	Duration: 4 * 120 * sec,
	Seed:     11,
}

func TestDiurnalPeakToTroughRatio(t *testing.T) {
	d := diurnalSpec.Profile.(traffic.Diurnal)
	tr := generate(t, diurnalSpec)
	hour := d.Period / 24
	var peak, trough int
	for day := int64(0); day < 4; day++ {
		mid := day*d.Period + d.PeakAt
		peak += countIn(tr, mid-hour/2, mid+hour/2)
		trough += countIn(tr, mid+d.Period/2-hour/2, mid+d.Period/2+hour/2)
	}
	// An hour's mean of 1 ± a·cos around the extremes is 1 ± a·sinc(π/24),
	// so the ratio is just under (1+a)/(1-a) = 3.
	x := math.Pi / 24
	sa := d.Amplitude * math.Sin(x) / x
	want := (1 + sa) / (1 - sa)
	// About 15 000 and 5 000 requests: the ratio's deviation is 1.6%.
	within(t, "peak-hour/trough-hour requests", float64(peak)/float64(trough), want, 0.06)
	t.Logf("(1+a)/(1-a) = %.3f; over an hour's width %.3f", (1+d.Amplitude)/(1-d.Amplitude), want)
}

// The histogram of a thinned trace follows λ(t): 48 bins a period, each
// within 4.5 standard deviations of ∫λ over it, and χ² within reach of its
// degrees of freedom. A flat histogram (no thinning, or thinning by a
// constant) fails the same χ² by orders of magnitude, which the test
// checks too, so that it has the power to catch a broken thinning.
func TestThinningFollowsTheRate(t *testing.T) {
	d := diurnalSpec.Profile.(traffic.Diurnal)
	tr := generate(t, diurnalSpec)
	const bins = 48 * 4
	width := diurnalSpec.Duration / bins
	counts := make([]float64, bins)
	for _, r := range tr.Requests {
		counts[r.Sent/width]++
	}
	// ∫ mean·(1 + a·cos(2π(t-p)/P)) dt over [lo, hi), in requests.
	integral := func(lo, hi int64) float64 {
		w := 2 * math.Pi / float64(d.Period)
		s := func(t int64) float64 { return math.Sin(w * float64(t-d.PeakAt)) }
		return d.Mean * (float64(hi-lo) + d.Amplitude*(s(hi)-s(lo))/w) / float64(sec)
	}
	chi2, flat := 0.0, 0.0
	mean := float64(len(tr.Requests)) / bins
	for i, got := range counts {
		want := integral(int64(i)*width, int64(i+1)*width)
		if math.Abs(got-want) > 4.5*math.Sqrt(want) {
			t.Errorf("bin %d: %v requests, λ gives %.0f", i, got, want)
		}
		chi2 += (got - want) * (got - want) / want
		flat += (got - mean) * (got - mean) / mean
	}
	limit := bins + 5*math.Sqrt(2*bins)
	t.Logf("χ² = %.0f against λ(t), %.0f against a flat rate; %d degrees of freedom, limit %.0f", chi2, flat, bins, limit)
	if chi2 > limit {
		t.Errorf("χ² = %.0f against λ(t), above %.0f", chi2, limit)
	}
	if flat < 100*limit {
		t.Errorf("χ² against a flat rate is only %.0f: the check could not tell thinning from none", flat)
	}
}

// A rate of 0 is never sampled, and a step is followed to the µs.
func TestThinningDropsEverythingWhereTheRateIsZero(t *testing.T) {
	step := traffic.Custom{Peak: 1000, Rate: func(at int64) float64 {
		if at%(10*sec) < 5*sec {
			return 0
		}
		return 1000
	}}
	tr := generate(t, traffic.TraceSpec{Profile: step, Duration: 60 * sec, Seed: 4})
	for _, r := range tr.Requests {
		if r.Sent%(10*sec) < 5*sec {
			t.Fatalf("a request at %d µs, where the rate is 0", r.Sent)
		}
	}
	within(t, "requests in 30 s at 1000/s", float64(len(tr.Requests)), 30_000, 0.03)

	over := traffic.Custom{Peak: 10, Rate: func(int64) float64 { return 11 }}
	if _, err := (traffic.TraceSpec{Profile: over, Duration: sec}).Generate(); err == nil || !strings.Contains(err.Error(), "its bound") {
		t.Errorf("a rate above the peak gave %v, want an error", err)
	}
}

// Bursts of 5× for a fifth of each period: over a long period, thinned
// against the rate itself; over a short one, against the on rate. Both
// give the on and off rates.
func TestBurstyOnAndOffRates(t *testing.T) {
	for _, period := range []int64{10 * sec, 2000} {
		b := traffic.Bursty{Rate: 100, Factor: 5, Duty: 0.2, Period: period}
		start := int64(1_700_000_003) * sec // not on a period edge: bursts follow absolute time
		tr := generate(t, traffic.TraceSpec{Profile: b, Duration: 600 * sec, Start: start, Seed: 9})
		var on, off int
		for _, r := range tr.Requests {
			if r.Sent%b.Period < b.Period/5 {
				on++
			} else {
				off++
			}
		}
		// 120 s on at 500/s, 480 s off at 100/s: 60 000 and 48 000.
		within(t, "on rate (/s)", float64(on)/120, 500, 0.03)
		within(t, "off rate (/s)", float64(off)/480, 100, 0.03)
		within(t, "Mean()", b.Mean(), 180, 1e-12)
		edge := start - start%b.Period
		if b.RateAt(edge) != 500 || b.RateAt(edge+b.Period/5-1) != 500 || b.RateAt(edge+b.Period/5) != 100 {
			t.Error("RateAt disagrees with the on part")
		}
	}
}

func TestHerdStormAndEchoSizes(t *testing.T) {
	h := traffic.Herd{Storm: 1000, After: 10 * sec, Jitter: 100_000, Interval: 5 * sec, Decay: 0.5}
	// round(1000/2^k) while 1000/2^k ≥ 1: 62.5 rounds up, 0.98 ends it.
	want := []int64{1000, 500, 250, 125, 63, 31, 16, 8, 4, 2}
	if got := h.Echoes(); !slices.Equal(got, want) {
		t.Fatalf("Echoes() = %v, want %v", got, want)
	}
	tr := generate(t, traffic.TraceSpec{Profile: h, Duration: 120 * sec, Seed: 2})
	if len(tr.Requests) != 1999 {
		t.Errorf("%d requests, want 1999: the storm and its echoes, nothing else", len(tr.Requests))
	}
	for k, n := range want {
		from := h.After + int64(k)*h.Interval
		if got := countIn(tr, from, from+h.Jitter); got != int(n) {
			t.Errorf("echo %d: %d requests in its jitter, want %d", k, got, n)
		}
	}

	// With a baseline, the storm rides on it; echoes past the end are not sent.
	h.Rate = 20
	tr = generate(t, traffic.TraceSpec{Profile: h, Duration: 30 * sec, Seed: 2})
	storm := 0
	for k := range 4 { // echoes at 10, 15, 20 and 25 s; the fifth would be at 30 s
		from := h.After + int64(k)*h.Interval
		storm += countIn(tr, from, from+h.Jitter) - 2 // about 2 of the baseline in each 100 ms
	}
	within(t, "storm and echoes within 30 s", float64(storm), 1000+500+250+125, 0.01)
	within(t, "baseline rate (/s)", float64(len(tr.Requests)-1875)/30, 20, 0.1)
}

func TestZipfTopKeyShareIsOneOverH(t *testing.T) {
	for _, s := range []float64{0.8, 1, 1.5} {
		const n, draws = 100, 100_000
		tr := generate(t, traffic.TraceSpec{Profile: traffic.Constant{Count: draws, Per: sec}, Duration: sec, Keys: traffic.Zipf(n, s), Seed: 1})
		h := 0.0
		for i := 1; i <= n; i++ {
			h += math.Pow(float64(i), -s)
		}
		top := keyCounts(tr)["k0"]
		// The share's deviation is under 0.16 percentage points.
		if got, want := float64(top)/draws, 1/h; math.Abs(got-want) > 0.006 {
			t.Errorf("s=%v: k0 has %.4f of the requests, want 1/H = %.4f ± 0.006", s, got, want)
		}
	}
}

func TestZipfWithExponentZeroIsUniformDrawForDraw(t *testing.T) {
	s := traffic.TraceSpec{Profile: traffic.Poisson{Rate: 1000}, Duration: sec, Keys: traffic.Uniform(30), Seed: 8}
	a := csvOf(t, generate(t, s))
	s.Keys = traffic.Zipf(30, 0)
	if b := csvOf(t, generate(t, s)); !bytes.Equal(a, b) {
		t.Error("Zipf(30, 0) differs from Uniform(30)")
	}
}

func TestWeightsAreHonoured(t *testing.T) {
	const draws = 100_000
	tr := generate(t, traffic.TraceSpec{
		Profile:  traffic.Constant{Count: draws, Per: sec},
		Duration: sec,
		Keys:     traffic.Weights(1, 0, 2, 3, 4, 0).Named("a", "never", "b", "c", "d", "nor-this"),
		Seed:     3,
	})
	c := keyCounts(tr)
	for name, share := range map[string]float64{"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4} {
		if got := float64(c[name]) / draws; math.Abs(got-share) > 0.006 {
			t.Errorf("key %s has %.4f of the requests, want %.1f ± 0.006", name, got, share)
		}
	}
	if c["never"]+c["nor-this"] != 0 || len(tr.Keys) != 4 {
		t.Errorf("keys of weight 0 were drawn, or listed: %v", tr.Keys)
	}
}

func keyCounts(tr traffic.Trace) map[string]int {
	c := map[string]int{}
	for _, r := range tr.Requests {
		c[tr.Keys[r.Key]]++
	}
	return c
}

func TestCostsAndServiceTimes(t *testing.T) {
	tr := generate(t, traffic.TraceSpec{
		Profile:  traffic.Constant{Count: 100_000, Per: sec},
		Duration: sec,
		Cost:     traffic.Around(5, 3),
		Service:  traffic.Exponential(20_000),
		Seed:     6,
	})
	var cost, service float64
	for _, r := range tr.Requests {
		if r.Cost < 2 || r.Cost > 8 {
			t.Fatalf("cost %d outside 5 ± 3", r.Cost)
		}
		cost += float64(r.Cost)
		service += float64(r.Service)
	}
	n := float64(len(tr.Requests))
	within(t, "mean cost", cost/n, 5, 0.005)                // deviation 0.0065/5
	within(t, "mean service (µs)", service/n, 20_000, 0.02) // deviation 0.3%
	def := generate(t, traffic.TraceSpec{Profile: traffic.Poisson{Rate: 10}, Duration: sec, Seed: 1})
	for _, r := range def.Requests {
		if r.Cost != 1 || r.Service != 0 || def.Keys[r.Key] != "k0" {
			t.Fatalf("the defaults gave %+v, key %q; want cost 1, service 0, key k0", r, def.Keys[r.Key])
		}
	}
}

func TestGenerateRefusesBadSpecs(t *testing.T) {
	ok := traffic.TraceSpec{Profile: traffic.Poisson{Rate: 10}, Duration: sec}
	with := func(f func(*traffic.TraceSpec)) traffic.TraceSpec { s := ok; f(&s); return s }
	for _, c := range []struct {
		name string
		spec traffic.TraceSpec
		want string
	}{
		{"no profile", with(func(s *traffic.TraceSpec) { s.Profile = nil }), "needs a Profile"},
		{"zero duration", with(func(s *traffic.TraceSpec) { s.Duration = 0 }), "duration of 0 µs"},
		{"negative duration", with(func(s *traffic.TraceSpec) { s.Duration = -1 }), "duration of -1 µs"},
		{"negative start", with(func(s *traffic.TraceSpec) { s.Start = -5 }), "start at -5"},
		{"past MaxTime", with(func(s *traffic.TraceSpec) { s.Start = traffic.MaxTime }), "after MaxTime"},
		{"zero rate", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Poisson{} }), "poisson rate 0"},
		{"negative rate", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Poisson{Rate: -3} }), "poisson rate -3"},
		{"NaN rate", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Poisson{Rate: math.NaN()} }), "rate NaN"},
		{"constant zero count", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Constant{Per: sec} }), "constant rate of 0"},
		{"amplitude above 1", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Diurnal{Mean: 1, Amplitude: 1.5, Period: sec} }), "amplitude 1.5"},
		{"diurnal no period", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Diurnal{Mean: 1} }), "diurnal period"},
		{"duty 0", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Bursty{Rate: 1, Factor: 2, Period: sec} }), "duty cycle 0"},
		{"duty above 1", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Bursty{Rate: 1, Factor: 2, Duty: 1.1, Period: sec} }), "duty cycle 1.1"},
		{"bursty period past MaxTime", with(func(s *traffic.TraceSpec) {
			s.Profile = traffic.Bursty{Rate: 1, Factor: 2, Duty: 0.5, Period: traffic.MaxTime + 1}
		}), "outside (0, MaxTime]"},
		{"factor below 1", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Bursty{Rate: 1, Factor: 0.5, Duty: 0.5, Period: sec} }), "factor 0.5"},
		{"herd decay 1", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Herd{Storm: 5, Decay: 1, Interval: sec} }), "never end"},
		{"herd no interval", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Herd{Storm: 5, Decay: 0.5} }), "interval"},
		{"herd silent", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Herd{} }), "sends nothing"},
		{"custom no func", with(func(s *traffic.TraceSpec) { s.Profile = traffic.Custom{Peak: 1} }), "without a Rate"},
		{"negative exponent", with(func(s *traffic.TraceSpec) { s.Keys = traffic.Zipf(10, -1) }), "Zipf exponent -1"},
		{"no keys", with(func(s *traffic.TraceSpec) { s.Keys = traffic.Uniform(0) }), "0 keys"},
		{"all weights 0", with(func(s *traffic.TraceSpec) { s.Keys = traffic.Weights(0, 0) }), "positive, finite sum"},
		{"negative weight", with(func(s *traffic.TraceSpec) { s.Keys = traffic.Weights(1, -1) }), "weight -1"},
		{"names miscounted", with(func(s *traffic.TraceSpec) { s.Keys = traffic.Uniform(2).Named("a") }), "1 names for 2 keys"},
		{"names repeated", with(func(s *traffic.TraceSpec) { s.Keys = traffic.Uniform(2).Named("a", "a") }), "both named"},
		{"cost 0", with(func(s *traffic.TraceSpec) { s.Cost = traffic.Fixed(0) }), "cost of 0"},
		{"cost can be 0", with(func(s *traffic.TraceSpec) { s.Cost = traffic.Around(2, 2) }), "cost of 2 ± 2"},
		{"exponential cost", with(func(s *traffic.TraceSpec) { s.Cost = traffic.Exponential(3) }), "exponential cost can be 0"},
		{"negative service", with(func(s *traffic.TraceSpec) { s.Service = traffic.Fixed(-1) }), "service time of -1"},
		{"too many", with(func(s *traffic.TraceSpec) { s.Profile, s.Duration = traffic.Poisson{Rate: 1e6}, 3600*sec }), "more than 10000000"},
		{"peak too high", with(func(s *traffic.TraceSpec) {
			s.Profile = traffic.Custom{Peak: 1e9, Rate: func(int64) float64 { return 1 }}
		}), "is the peak too high"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.spec.Generate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
	_, err := with(func(s *traffic.TraceSpec) { s.Profile = traffic.Poisson{Rate: 1e6}; s.Duration = 3600 * sec }).Generate()
	if !errors.Is(err, traffic.ErrTooMany) {
		t.Errorf("too many requests gave %v, want ErrTooMany", err)
	}
}

// At the edges of every parameter, Generate neither panics nor overflows:
// what it returns is a valid trace within [Start, Start+Duration).
func TestExtremeSpecsStayInTheirWindow(t *testing.T) {
	const maxInt = math.MaxInt64
	late := traffic.MaxTime - 10*sec
	for name, s := range map[string]traffic.TraceSpec{
		"constant, one a year":      {Profile: traffic.Constant{Count: 1, Per: maxInt}, Duration: sec},
		"constant, many per µs":     {Profile: traffic.Constant{Count: 1000, Per: 1}, Duration: 10},
		"constant at MaxTime":       {Profile: traffic.Constant{Count: 1, Per: sec}, Start: late, Duration: 10 * sec},
		"poisson at MaxTime":        {Profile: traffic.Poisson{Rate: 1000}, Start: late, Duration: 10 * sec},
		"poisson, tiny rate":        {Profile: traffic.Poisson{Rate: 1e-300}, Duration: traffic.MaxTime},
		"diurnal, PeakAt extremes":  {Profile: traffic.Diurnal{Mean: 100, Amplitude: 1, Period: maxInt, PeakAt: -maxInt}, Start: late, Duration: 10 * sec},
		"diurnal, 1 µs period":      {Profile: traffic.Diurnal{Mean: 100, Amplitude: 1, Period: 1}, Duration: 10 * sec},
		"bursty, 1 µs period":       {Profile: traffic.Bursty{Rate: 10, Factor: 3, Duty: 0.5, Period: 1}, Duration: 10 * sec},
		"bursty, MaxTime period":    {Profile: traffic.Bursty{Rate: 10, Factor: 3, Duty: 1e-300, Period: traffic.MaxTime}, Start: late, Duration: 10 * sec},
		"herd past the end":         {Profile: traffic.Herd{Storm: 10, After: traffic.MaxTime, Jitter: traffic.MaxTime, Interval: traffic.MaxTime, Decay: 0.9}, Start: late, Duration: 10 * sec},
		"herd, jitter past the end": {Profile: traffic.Herd{Storm: 1000, After: 9 * sec, Jitter: traffic.MaxTime, Interval: 1, Decay: 0.999}, Start: late, Duration: 10 * sec},
		"bursty, 1 µs period, long": {Profile: traffic.Bursty{Rate: 1e-9, Factor: 3, Duty: 0.5, Period: 1}, Duration: traffic.MaxTime},
		"herd, slow decay":          {Profile: traffic.Herd{Storm: 1, Interval: 1, Decay: 0.999999}, Duration: sec},
		"service up to MaxTime":     {Profile: traffic.Poisson{Rate: 10}, Duration: sec, Service: traffic.Exponential(traffic.MaxTime / 37)},
		"cost up to MaxCost":        {Profile: traffic.Poisson{Rate: 10}, Duration: sec, Cost: traffic.Around(traffic.MaxCost/2+1, traffic.MaxCost/2-1)},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := s.Generate()
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, r := range tr.Requests {
				if r.Sent < s.Start || r.Sent-s.Start >= s.Duration {
					t.Fatalf("a request at %d, outside [%d, +%d)", r.Sent, s.Start, s.Duration)
				}
			}
		})
	}
}

// A generated trace is ready for the simulator once rebased: whole days
// keep every second, minute and hour window where it was.
func TestModelAndRebase(t *testing.T) {
	start := int64(1_700_000_000)*sec + 123
	tr := generate(t, traffic.TraceSpec{Profile: traffic.Poisson{Rate: 50}, Duration: 10 * sec, Start: start, Keys: traffic.Uniform(3), Seed: 1})
	day := 86_400 * sec
	moved, shift, err := tr.Rebase(day)
	if err != nil {
		t.Fatal(err)
	}
	if shift%day != 0 || moved.Requests[0].Sent < 0 || moved.Requests[0].Sent >= day {
		t.Fatalf("Rebase moved by %d µs, first request now at %d", shift, moved.Requests[0].Sent)
	}
	m := moved.Model()
	for i, r := range tr.Requests {
		if m[i].Sent != r.Sent-shift || m[i].Key != r.Key || m[i].Node != 0 {
			t.Fatalf("request %d: %+v from %+v", i, m[i], r)
		}
		if m[i].Sent%(60*sec) != r.Sent%(60*sec) {
			t.Fatalf("request %d moved within its minute", i)
		}
	}
	if tr.Span() <= 0 || tr.Span() >= 10*sec {
		t.Errorf("Span() = %d, want within the 10 s run", tr.Span())
	}
}
