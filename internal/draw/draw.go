// Package draw holds the one bounded random draw that both the simulator
// and the traffic generators use, written out (rather than taken from
// math/rand/v2's methods) so that its output is fixed by this repository:
// the golden files depend on every draw.
package draw

import (
	"math/bits"
	"math/rand/v2"
)

// Below is uniform in [0, n) for n > 0, by Lemire's multiply-and-reject
// (the method math/rand/v2 uses).
func Below(p *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(p.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(p.Uint64(), n)
		}
	}
	return hi
}
