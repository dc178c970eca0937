package algos

import (
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/internal/arith"
)

// Second is one second in the model's unit of time, the microsecond.
const Second int64 = 1_000_000

// MaxTime is the largest time, in µs, that every algorithm handles without
// overflow: a little over 100 years.
const MaxTime int64 = 101 * 366 * 24 * 3600 * Second

// maxExact bounds every stored or intermediate magnitude so that a Lua
// script, whose numbers are doubles, computes exactly what Go computes.
const maxExact = arith.MaxExact

// Limit is "Rate requests per Window µs, with bursts of up to Burst".
// Build it with NewLimit or PerSecond: a Limit that passed validation never
// overflows for times up to MaxTime.
type Limit struct {
	Rate   int64 // L: requests per window
	Window int64 // W: the window in µs
	Burst  int64 // B: the bucket's capacity, in requests

	// Derived once so the decisions stay a few integer operations.
	// One request costs Unit scaled tokens and one µs refills Refill of
	// them, with Unit/Refill = W/L reduced by their gcd.
	Unit   int64
	Refill int64
}

// NewLimit validates and builds a limit of rate requests per window µs with
// a burst of burst requests. Each must be positive, and the arithmetic must
// stay exact: Rate×Window and Burst×Unit below 2^52, Window at most MaxTime.
func NewLimit(rate, window, burst int64) (Limit, error) {
	switch {
	case rate <= 0:
		return Limit{}, fmt.Errorf("limit: rate must be positive, got %d", rate)
	case window <= 0:
		return Limit{}, fmt.Errorf("limit: window must be a positive number of µs, got %d", window)
	case burst <= 0:
		return Limit{}, fmt.Errorf("limit: burst must be positive, got %d", burst)
	case window > MaxTime:
		return Limit{}, fmt.Errorf("limit: window of %d µs is longer than 100 years", window)
	case rate > (maxExact-1)/window: // rate × window < 2^52
		return Limit{}, fmt.Errorf("limit: %d per %d µs is too fine to count exactly (rate × window must stay below 2^52)", rate, window)
	}
	g := gcd(rate, window)
	unit, refill := window/g, rate/g
	if burst > (maxExact-1)/unit { // burst × unit < 2^52
		return Limit{}, fmt.Errorf("limit: burst %d of %d per %d µs is too large to count exactly (burst × window/gcd(rate, window) must stay below 2^52)", burst, rate, window)
	}
	return Limit{Rate: rate, Window: window, Burst: burst, Unit: unit, Refill: refill}, nil
}

// PerSecond is NewLimit(rate, Second, rate): rate a second, a burst of rate.
func PerSecond(rate int64) (Limit, error) { return NewLimit(rate, Second, rate) }

// MustLimit is NewLimit for limits written into a program; it panics on an
// invalid limit, as regexp.MustCompile does.
func MustLimit(rate, window, burst int64) Limit {
	l, err := NewLimit(rate, window, burst)
	if err != nil {
		panic(err)
	}
	return l
}

// Validate reports whether l was built by NewLimit (a zero or hand-made
// Limit has no derived fields and would divide by zero).
func (l Limit) Validate() error {
	want, err := NewLimit(l.Rate, l.Window, l.Burst)
	if err != nil {
		return err
	}
	if want != l {
		return errors.New("limit: derived fields do not match; build limits with NewLimit")
	}
	return nil
}

// Capacity is the bucket's size in scaled tokens.
func (l Limit) Capacity() int64 { return l.Burst * l.Unit }

// bucketSize is Capacity for the decisions, which read it without copying
// l (refill says why).
func (l *Limit) bucketSize() int64 { return l.Burst * l.Unit }

// String prints the limit as a person writes it.
func (l Limit) String() string {
	return fmt.Sprintf("%d per %s (burst %d)", l.Rate, FormatMicros(l.Window), l.Burst)
}

// FormatMicros prints a duration in µs with the largest unit that divides it.
func FormatMicros(us int64) string {
	switch {
	case us != 0 && us%Second == 0:
		return fmt.Sprintf("%ds", us/Second)
	case us != 0 && us%1000 == 0:
		return fmt.Sprintf("%dms", us/1000)
	default:
		return fmt.Sprintf("%dµs", us)
	}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0 (arith.CeilDiv).
func ceilDiv(a, b int64) int64 { return arith.CeilDiv(a, b) }

// FloorDiv is ⌊a/b⌋ for any a and b > 0 (Go's / truncates toward zero): a
// time's window index as the window algorithms compute it, for anyone who
// must compute it the same way.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
