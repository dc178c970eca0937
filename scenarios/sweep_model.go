package scenarios

import (
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/traffic"
)

// floodMultiple is the flood's rate as a multiple of the limit (traffic.Flood).
const floodMultiple = 5

// CurveModel is a simple model of one number of a Curve: what it measures
// at each algorithm and point, and what the model predicts there. The
// curve's text prints the two side by side and its chart draws both.
type CurveModel struct {
	// Name says what is measured and what the model is, as the heading of
	// its grid.
	Name string
	// Unit is how the numbers print: "%" (signed, one decimal), "+admits"
	// (signed, one decimal) or "admits" (one decimal).
	Unit string
	// Measure is the measured number of algo at point k.
	Measure func(r Curve, algo string, k int) float64
	// Predict is the model's number of algo at point k; false when the
	// model says nothing about that algorithm.
	Predict func(r Curve, algo string, k int) (float64, bool)
}

// floodOver measures the flood's over the ideal at algo and point k, the
// mean of the seeds: what the flood models predict.
func floodOver(r Curve, algo string, k int) float64 {
	return meanOf(r.SeedCells(algo, k, traffic.Flood), func(c Cell) float64 { return c.Over })
}

// meanOf is the mean of f over the seeds' cells or runs.
func meanOf[T any](seeds []T, f func(T) float64) float64 {
	sum := 0.0
	for _, x := range seeds {
		sum += f(x)
	}
	return sum / float64(len(seeds))
}

// RestartModel: every restart of a local-split node hands the flood at most
// one fresh local burst of B/N that the ideal run never gives (a flood at
// 5× the limit keeps every node's share spent). A node's gaps between
// restarts are uniform in [1µs, 2R], so it restarts m(D) times on average
// in a run of D, m the renewal function of those gaps (about D/R − 1/3 for
// D ≫ R, exactly computed here), and the flood gets about N·m(D)·(B/N)
// admits more than the ideal's: over ≈ 100·m(D)·B / (the ideal's flood
// admits) %, whatever N, and 0 when nothing restarts. Measured: the flood's
// over, the mean of the seeds.
func RestartModel() *CurveModel {
	return &CurveModel{
		Name: "flood over the ideal, the mean of the seeds, beside the model (in brackets): one fresh local burst of B/N per\n" +
			"restart, N·m(D) restarts in a run of D (m(D) ≈ D/R − 1/3, the mean restarts of a node whose gaps are uniform in\n" +
			"[1µs, 2R]), so over ≈ N·m(D)·(B/N) / (the ideal's flood admits), whatever N",
		Unit:    "%",
		Measure: floodOver,
		Predict: func(r Curve, algo string, k int) (float64, bool) {
			o := r.PointOptions(k)
			_, ideal := r.SeedRuns(algo, k)
			if o.RestartEvery == 0 || len(ideal) == 0 {
				return 0, o.RestartEvery == 0
			}
			admits := 0
			for _, run := range ideal {
				admits += run.Clients[traffic.Flood].Admitted
			}
			n, b := int64(o.Nodes), o.Limit.Burst
			extra := float64(n) * uniformRenewals(float64(o.Duration), 2*float64(o.RestartEvery)) * float64(b/n)
			return 100 * extra * float64(len(ideal)) / float64(admits), true
		},
	}
}

// uniformRenewals is the mean number of renewals by time t of a process
// whose gaps are uniform on (0, a]: the sum over k of P(S_k ≤ t), S_k the
// sum of k gaps, whose law is Irwin–Hall's.
func uniformRenewals(t, a float64) float64 {
	x := t / a
	sum := 0.0
	for k := 1; ; k++ {
		p := 1.0
		if x < float64(k) {
			// P(S_k ≤ t) = (1/k!) Σ_{j ≤ x} (−1)^j C(k, j) (x − j)^k.
			p = 0
			binom := 1.0 // C(k, j)
			for j := 0; float64(j) <= x; j++ {
				term := binom * math.Pow(x-float64(j), float64(k))
				if j%2 == 1 {
					term = -term
				}
				p += term
				binom = binom * float64(k-j) / float64(j+1)
			}
			p /= math.Gamma(float64(k) + 1)
		}
		sum += p
		if p < 1e-12 && float64(k) > x {
			return sum
		}
	}
}

// WipeModel: the flood's admits in the W after the wipe beyond the ideal's,
// with the flood at F = 5L per W and the wipe at phase p of its window.
// Buckets: a fresh full bucket, B more (the ideal's is empty under the
// flood). Fixed window: the a = min(L, F·(1−p)) admits the fresh count
// takes before the window ends, less the ideal's max(0, L − F·p) still left
// there. Sliding counter: the fresh count forgets the previous window, and
// the a admits it takes weigh (1−p) less in the next one: a·p. Sliding log:
// at most L in any W either way, 0. Measured: the mean of the seeds.
func WipeModel() *CurveModel {
	return &CurveModel{
		Name: "flood admits in the W after the wipe beyond the ideal's, the mean of the seeds, beside the model (in brackets),\n" +
			"with the flood at F = 5L per W and the wipe at phase p: buckets B; fixed window min(L, F·(1−p)) − max(0, L − F·p);\n" +
			"sliding counter min(L, F·(1−p))·p; sliding log 0",
		Unit: "+admits",
		Measure: func(r Curve, algo string, k int) float64 {
			runs, ideal := r.SeedRuns(algo, k)
			sum := 0
			for s := range runs {
				sum += runs[s].Clients[traffic.Flood].AfterWipe - ideal[s].Clients[traffic.Flood].AfterWipe
			}
			return float64(sum) / float64(len(runs))
		},
		Predict: func(r Curve, algo string, k int) (float64, bool) {
			o := r.PointOptions(k)
			l, b := float64(o.Limit.Rate), float64(o.Limit.Burst)
			p := float64(o.WipeAt%o.Limit.Window) / float64(o.Limit.Window)
			f := floodMultiple * l
			a := math.Min(l, f*(1-p))
			switch algo {
			case "token-bucket", "leaky-bucket", "gcra":
				return b, true
			case "fixed-window":
				return a - math.Max(0, l-f*p), true
			case "sliding-counter":
				return a * p, true
			case "sliding-log":
				return 0, true
			}
			return 0, false
		},
	}
}

// GetSetModel: a GET that reaches the store while an admitted request's
// SET is still on its way (its reply leg and its SET leg, a round trip)
// reads the state before that admit and is admitted on it too. The flood
// sends F = 5L per W, so each admit the ideal makes brings F·RTT/W more:
// 100·F·RTT/W % over. Measured: the flood's over, the mean of the seeds.
func GetSetModel() *CurveModel {
	return &CurveModel{
		Name: "flood over the ideal, the mean of the seeds, beside the model (in brackets): every GET that reaches the store\n" +
			"within a round trip of an admit (the admit's reply and SET legs) reads the state before it, so over ≈ 100·F·RTT/W %",
		Unit:    "%",
		Measure: floodOver,
		Predict: func(r Curve, _ string, k int) (float64, bool) {
			o := r.PointOptions(k)
			return 100 * floodMultiple * float64(o.Limit.Rate) * float64(o.RTT) / float64(o.Limit.Window), true
		},
	}
}

// StoreClockEdgeModel: behind a store that reads its own clock, the
// boundary client's burst just before a window edge (L requests in W/100)
// reaches the store half a round trip late, so the fixed window counts the
// requests sent within RTT/2 of the edge in the next window: its peak is
// 2L − (RTT/2)/(W/100/L) = 2L − 50·L·RTT/W. The other algorithms have no
// edge to be carried past: their boundary peak is the ideal's. Measured:
// the boundary client's peak (admits), the mean of the seeds.
func StoreClockEdgeModel() *CurveModel {
	return &CurveModel{
		Name: "boundary client's peak (admits in any W), the mean of the seeds, beside the model (in brackets): the fixed window\n" +
			"counts the requests sent within RTT/2 before the edge (one per W/100/L) in the next window, 2L − 50·L·RTT/W;\n" +
			"the others have no edge to carry them past, the ideal's peak",
		Unit: "admits",
		Measure: func(r Curve, algo string, k int) float64 {
			return meanOf(r.SeedCells(algo, k, traffic.Boundary), func(c Cell) float64 { return float64(c.Peak) })
		},
		Predict: func(r Curve, algo string, k int) (float64, bool) {
			o := r.PointOptions(k)
			l := float64(o.Limit.Rate)
			if algo == "fixed-window" {
				return 2*l - 50*l*float64(o.RTT)/float64(o.Limit.Window), true
			}
			_, ideal := r.SeedRuns(algo, k)
			if ideal == nil {
				return 0, false
			}
			return meanOf(ideal, func(run SeedRun) float64 { return float64(run.Clients[traffic.Boundary].Peak) }), true
		},
	}
}

// format prints one number of model m.
func (m *CurveModel) format(v float64) string {
	switch m.Unit {
	case "%":
		return fmtOver(v)
	case "+admits":
		return fmt.Sprintf("%+.1f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// modelAlgorithms are the algorithms model m predicts for somewhere on r.
func (m *CurveModel) algorithms(r Curve) []string {
	var out []string
	for _, a := range r.Algorithms {
		for k := range r.Values {
			if _, ok := m.Predict(r, a, k); ok {
				out = append(out, a)
				break
			}
		}
	}
	return slices.Clip(out)
}

// LocalFullModel: each of N local nodes given the whole limit admits, from
// its own share of the flood, up to what one limiter admits of the whole
// flood (A, the ideal's admits), so the flood gets about min(N·A, F) of
// its F requests: over ≈ 100·(min(N·A, F)/A − 1) %, that is N − 1 times
// the ideal until the nodes can take every request the flood sends (about
// F/A ≈ 5 nodes; the flood offers 5 times the limit). A random balancer
// deals the shares unevenly, so near that point a node's share falls short
// now and then and the flood gets less than the model. Measured: the
// flood's over, the mean of the seeds; the model uses the seeds' own A and
// F.
func LocalFullModel() *CurveModel {
	return &CurveModel{
		Name: "flood over the ideal, the mean of the seeds, beside the model (in brackets): every node admits up to what one\n" +
			"limiter admits of the whole flood (A, the ideal's), so the flood gets min(N·A, F) of its F requests: over ≈\n" +
			"100·(min(N·A, F)/A − 1) %",
		Unit:    "%",
		Measure: floodOver,
		Predict: func(r Curve, algo string, k int) (float64, bool) {
			_, ideal := r.SeedRuns(algo, k)
			if len(ideal) == 0 {
				return 0, false
			}
			n := float64(r.PointOptions(k).Nodes)
			return meanOf(ideal, func(run SeedRun) float64 {
				a, f := float64(run.Clients[traffic.Flood].Admitted), float64(run.Clients[traffic.Flood].Requests)
				return 100 * (min(n*a, f)/a - 1)
			}), true
		},
	}
}
