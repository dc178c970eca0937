package arith

import (
	"math/rand/v2"
	"testing"
)

// The algorithms' own bounds, written out (algos.Second and algos.MaxTime).
const (
	second  int64 = 1_000_000
	maxTime int64 = 101 * 366 * 24 * 3600 * second
)

// covers and ceilDiv's fast path replace divisions on the hot path; both
// must agree with the plain formula everywhere the algorithms call them
// (elapsed up to algos.MaxTime, rates and amounts below 2^52).
func TestArithmeticMatchesPlainDivision(t *testing.T) {
	plainCeil := func(a, b int64) int64 { return (a + b - 1) / b }
	edges := []int64{1, 2, 3, 7, 1000, second, 1<<26 - 1, 1 << 26, MaxExact - 1, MaxExact, maxTime}
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(limit int64) int64 {
		if r.IntN(3) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return 1 + r.Int64N(limit)
	}
	for range 200_000 {
		elapsed, rate, amount := draw(maxTime), draw(MaxExact-1), draw(MaxExact-1)
		if got, want := Covers(elapsed, rate, amount), elapsed >= plainCeil(amount, rate); got != want {
			t.Fatalf("Covers(%d, %d, %d) = %v, want %v", elapsed, rate, amount, got, want)
		}
		amount-- // ceilDiv is also called with 0
		if got, want := CeilDiv(amount, rate), plainCeil(amount, rate); got != want {
			t.Fatalf("CeilDiv(%d, %d) = %d, want %d", amount, rate, got, want)
		}
	}
}
