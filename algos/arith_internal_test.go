package algos

import (
	"math/rand/v2"
	"testing"
)

// covers and ceilDiv's fast path replace divisions on the hot path; both
// must agree with the plain formula everywhere the algorithms call them
// (elapsed up to MaxTime, rates and amounts below 2^52).
func TestArithmeticMatchesPlainDivision(t *testing.T) {
	plainCeil := func(a, b int64) int64 { return (a + b - 1) / b }
	edges := []int64{1, 2, 3, 7, 1000, Second, 1<<26 - 1, 1 << 26, maxExact - 1, maxExact, MaxTime}
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(limit int64) int64 {
		if r.IntN(3) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return 1 + r.Int64N(limit)
	}
	for range 200_000 {
		elapsed, rate, amount := draw(MaxTime), draw(maxExact-1), draw(maxExact-1)
		if got, want := covers(elapsed, rate, amount), elapsed >= plainCeil(amount, rate); got != want {
			t.Fatalf("covers(%d, %d, %d) = %v, want %v", elapsed, rate, amount, got, want)
		}
		amount-- // ceilDiv is also called with 0
		if got, want := ceilDiv(amount, rate), plainCeil(amount, rate); got != want {
			t.Fatalf("ceilDiv(%d, %d) = %d, want %d", amount, rate, got, want)
		}
	}
}
