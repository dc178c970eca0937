package model_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// BenchmarkSimulate runs 20 s of the table's kind of traffic (four keys,
// about 16,000 requests) through all six algorithms in each deployment and
// reports simulated requests per second of wall time on one goroutine
// (sim-req/s/core). Each algorithm's run follows another of the same
// traffic and seed, as in a matrix, a sweep or a hunt.
func BenchmarkSimulate(b *testing.B) {
	reqs := traffic(1, 20*algos.Second)
	for _, d := range model.Deployments() {
		b.Run(d.String(), func(b *testing.B) {
			cfgs := make([]model.Config, 0, 6)
			for _, a := range algos.All() {
				cfg := tableConfig(a, d, 1, reqs)
				cfg.Skew = 50_000
				cfgs = append(cfgs, cfg)
			}
			b.ReportAllocs()
			b.ResetTimer()
			requests := 0
			for b.Loop() {
				for _, cfg := range cfgs {
					if _, err := model.Run(cfg); err != nil {
						b.Fatal(err)
					}
					requests += len(cfg.Requests)
				}
			}
			b.ReportMetric(float64(requests)/b.Elapsed().Seconds(), "sim-req/s/core")
		})
	}
}
