package record

import (
	"math/bits"
	"math/rand/v2"
)

// Stream is one seeded random stream: a PCG generator seeded from (seed,
// purpose), with the one bounded draw the simulator makes. Package
// scenarios draws its traffic from Streams too, so that every random number
// behind a golden file comes from arithmetic written in this repository
// rather than from math/rand/v2's methods, whose output may change.
//
// A Stream is a value (no pointer, no interface) so a draw is a few inlined
// instructions; it is not safe for concurrent use.
type Stream struct{ pcg rand.PCG }

// NewStream returns the stream for (seed, purpose). Two purposes never share
// draws, whatever either of them draws.
func NewStream(seed, purpose uint64) Stream {
	var s Stream
	s.pcg.Seed(seed, purpose)
	return s
}

// Uint64 is the stream's next 64 random bits.
func (s *Stream) Uint64() uint64 { return s.pcg.Uint64() }

// Below is uniform in [0, n) for n > 0, by Lemire's multiply-and-reject
// (the method math/rand/v2 uses).
func (s *Stream) Below(n uint64) uint64 {
	hi, lo := bits.Mul64(s.pcg.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.pcg.Uint64(), n)
		}
	}
	return hi
}
