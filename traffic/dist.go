package traffic

import (
	"fmt"
	"math"

	"github.com/overshoot-go/overshoot/record"
)

// Dist is a distribution of whole numbers, for a request's cost (units)
// or service time (µs). Build it with Fixed, Around or Exponential. The
// zero Dist means the default: a cost of 1, a service time of 0 (unknown).
type Dist struct {
	kind distKind
	a, b int64 // Fixed: a; Around: mean a, spread b; Exponential: mean a
}

type distKind uint8

const (
	distDefault distKind = iota
	distFixed
	distAround
	distExponential
)

// Fixed is always v.
func Fixed(v int64) Dist { return Dist{kind: distFixed, a: v} }

// Around is uniform over the whole numbers mean-spread … mean+spread: its
// mean is exactly mean, it never leaves that range, and its standard
// deviation is √(spread·(spread+1)/3). Spread 0 is Fixed(mean). As a cost,
// mean-spread must be at least 1.
func Around(mean, spread int64) Dist { return Dist{kind: distAround, a: mean, b: spread} }

// Exponential is an exponential of the given mean, rounded to the nearest
// whole number: service times where most calls are quick and a few are
// slow. It can be 0, so it is a service time only, never a cost.
func Exponential(mean int64) Dist { return Dist{kind: distExponential, a: mean} }

// maxExpUnit bounds expUnit: -ln(2^-53) < 37.
const maxExpUnit = 37

// check reports whether every value d draws is in [lo, hi]; what names it.
func (d Dist) check(what string, lo, hi int64) error {
	switch d.kind {
	case distDefault:
		return nil
	case distFixed:
		if d.a < lo || d.a > hi {
			return fmt.Errorf("traffic: %s of %d is outside [%d, %d]", what, d.a, lo, hi)
		}
	case distAround:
		if d.a < lo || d.a > hi || d.b < 0 || d.a-lo < d.b || hi-d.a < d.b {
			return fmt.Errorf("traffic: %s of %d ± %d leaves [%d, %d]", what, d.a, d.b, lo, hi)
		}
	case distExponential:
		if lo > 0 {
			return fmt.Errorf("traffic: an exponential %s can be 0, below %d: use Fixed or Around", what, lo)
		}
		if d.a < 0 || d.a > hi/maxExpUnit {
			return fmt.Errorf("traffic: exponential %s with a mean of %d is outside [0, %d]", what, d.a, hi/maxExpUnit)
		}
	default:
		return fmt.Errorf("traffic: unknown %s distribution", what)
	}
	return nil
}

// draw is the next value from s, or def for the zero Dist (which draws
// nothing, so leaving a default never shifts another stream).
func (d Dist) draw(s *record.Stream, def int64) int64 {
	switch d.kind {
	case distFixed:
		return d.a
	case distAround:
		return d.a - d.b + int64(s.Below(uint64(2*d.b+1)))
	case distExponential:
		return int64(math.Floor(float64(expUnit(s)*float64(d.a)) + 0.5))
	}
	return def
}
