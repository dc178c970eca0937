package capacity_test

import (
	"fmt"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/capacity"
	"github.com/overshoot-go/overshoot/limiter"
)

// BenchmarkCompareAllAlgorithms is the wall time of the everyday planning
// run: 60 s of Poisson traffic from 4 keys, through the six algorithms
// (limit 20 a second each), reports measured, at the reference
// simulator's 50 requests a second and at 10,000.
func BenchmarkCompareAllAlgorithms(b *testing.B) {
	for _, rate := range []float64{50, 10_000} {
		b.Run(fmt.Sprintf("poisson-%.0f-per-s", rate), func(b *testing.B) {
			tr := poisson(b, rate, 4, 60, 7)
			specs := limiter.FromAlgorithms(algos.All()...)
			l := algos.MustLimit(20, algos.Second, 20)
			b.ResetTimer()
			for range b.N {
				if _, err := capacity.Compare(tr, specs, l); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compare")
			b.ReportMetric(float64(len(tr.Requests)*len(specs)*b.N)/b.Elapsed().Seconds(), "decisions/s")
			b.ReportMetric(float64(len(tr.Requests)), "requests")
		})
	}
}
