package algos_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
)

// BenchmarkDecide floods one key at five times its limit of 100 a second:
// one call every 2 ms of advancing time, so a fifth are admitted and the
// sliding log keeps turning over its 100 entries. Every algorithm should
// take a few ns and allocate nothing once warm.
func BenchmarkDecide(b *testing.B) {
	l := algos.MustLimit(100, algos.Second, 100)
	const every = algos.Second / 500
	for _, algo := range algos.All() {
		b.Run(algo.Name, func(b *testing.B) {
			var s algos.State
			now := int64(1_234_567)
			for range 1000 { // warm up: the log reaches its working size
				algo.Decide(&s, now, l)
				now += every
			}
			admitted := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if algo.Decide(&s, now, l).Allowed {
					admitted++
				}
				now += every
			}
			b.StopTimer()
			if b.N >= 1000 && (admitted < b.N/6 || admitted > b.N/4) {
				b.Errorf("admitted %d of %d, want about a fifth", admitted, b.N)
			}
		})
	}
}
