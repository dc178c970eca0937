package traffic

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/overshoot-go/overshoot/record"
)

// Keys says how a TraceSpec chooses each request's key: among n keys,
// uniformly, by Zipf's law or by given weights. Build it with Uniform,
// Zipf or Weights, and name the keys with Named; they are "k0" … "k<n-1>"
// otherwise, key i being the i-th weight (for Zipf, the i-th most popular).
// The zero Keys is one key, "k0". At most record.MaxKeys keys.
type Keys struct {
	set     bool // made by a constructor: the zero Keys is one key
	n       int
	zipf    float64
	weights []float64
	names   []string
}

// Uniform is n keys, each as likely as the others.
func Uniform(n int) Keys { return Keys{set: true, n: n} }

// Zipf is n keys where key i's share is proportional to 1/(i+1)^s, s ≥ 0:
// key 0's share is 1/H(n,s), H(n,s) = Σ_{i=1..n} 1/i^s. s = 0 is Uniform,
// draw for draw; s around 1 is the popularity of most real keys (users,
// tenants, URLs): a few hot ones and a long tail.
func Zipf(n int, s float64) Keys { return Keys{set: true, n: n, zipf: s} }

// Weights is one key per weight, key i drawn with probability
// w[i]/Σw. Weights must be finite and ≥ 0, and not all 0; a key of weight
// 0 is never drawn.
func Weights(w ...float64) Keys {
	return Keys{set: true, n: len(w), weights: slices.Clone(w)}
}

// Named gives the keys names, one per key, in order: unique, non-empty
// UTF-8 without control characters. They are the names a Trace carries.
func (k Keys) Named(names ...string) Keys { k.names = slices.Clone(names); return k }

// chooser is a validated Keys, ready to draw: by Lemire's bounded draw when
// uniform, otherwise by inverse CDF over the cumulative shares.
type chooser struct {
	names []string
	cum   []float64 // nil when uniform; cum[i] = share of keys 0..i, 1 from the last positive weight on
}

func (k Keys) chooser() (chooser, error) {
	n := k.n
	if !k.set {
		n = 1
	}
	switch {
	case n < 1:
		return chooser{}, fmt.Errorf("traffic: %d keys; there must be at least one", n)
	case n > record.MaxKeys:
		return chooser{}, fmt.Errorf("traffic: %d keys is more than the simulator's %d", n, record.MaxKeys)
	case !(k.zipf >= 0) || math.IsInf(k.zipf, 1):
		return chooser{}, fmt.Errorf("traffic: Zipf exponent %v; it must be finite and at least 0", k.zipf)
	case k.names != nil && len(k.names) != n:
		return chooser{}, fmt.Errorf("traffic: %d names for %d keys", len(k.names), n)
	}
	c := chooser{names: k.names}
	if c.names == nil {
		c.names = make([]string, n)
		for i := range c.names {
			c.names[i] = "k" + strconv.Itoa(i)
		}
	}
	if err := (Trace{Keys: c.names}).Validate(); err != nil {
		return chooser{}, err
	}
	w := k.weights
	if w == nil && k.zipf != 0 {
		w = make([]float64, n)
		for i := range w {
			w[i] = math.Pow(float64(i+1), -k.zipf)
		}
	}
	if w == nil {
		return c, nil
	}
	total, last := 0.0, -1
	for i, x := range w {
		if !(x >= 0) || math.IsInf(x, 1) {
			return chooser{}, fmt.Errorf("traffic: key %d has weight %v; weights must be finite and at least 0", i, x)
		}
		if x > 0 {
			last = i
		}
		total += x
	}
	if last < 0 || math.IsInf(total, 1) {
		return chooser{}, fmt.Errorf("traffic: key weights sum to %v; they must have a positive, finite sum", total)
	}
	c.cum = make([]float64, n)
	sum := 0.0
	for i, x := range w {
		sum += x
		c.cum[i] = sum / total
		if i >= last {
			// Rounding must not leave a sliver above the last positive
			// weight, which a key of weight 0 would then own.
			c.cum[i] = 1
		}
	}
	return c, nil
}

// draw is the next key from s.
func (c *chooser) draw(s *record.Stream) int {
	if c.cum == nil {
		return int(s.Below(uint64(len(c.names))))
	}
	// The first i with cum[i] > u: a key of weight 0 has cum[i] = cum[i-1]
	// and is never the first above u. u < 1 = cum[last], so there is one.
	u := uniform(s)
	lo, hi := 0, len(c.cum)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c.cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
