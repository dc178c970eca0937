package properties

import (
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// Option adjusts what the properties draw and claim.
type Option func(*config)

type config struct {
	limits         *rapid.Generator[algos.Limit]
	maxWait        func(algos.Limit) int64
	checks         int
	checksSet      bool
	shrinkTime     time.Duration
	shrinkTimeSet  bool
	noDoubleRefill bool
	instants       *instants
}

func configure(opts []Option) config {
	c := config{limits: SmallLimits(), maxWait: DefaultMaxWait, instants: &instants{}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithLimits draws the limits from g instead of SmallLimits. Check draws
// from g on several goroutines at once.
func WithLimits(g *rapid.Generator[algos.Limit]) Option {
	return func(c *config) { c.limits = g }
}

// WithLimit holds every property to the one limit l.
func WithLimit(l algos.Limit) Option { return WithLimits(rapid.Just(l)) }

// WithMaxWait sets the longest a key can take, on one node with a true
// clock, to go from full to idle under l; the idle and step-back properties
// use it as a bound. The default, DefaultMaxWait, covers the six.
func WithMaxWait(f func(algos.Limit) int64) Option {
	return func(c *config) { c.maxWait = f }
}

// WithChecks makes Check run exactly n cases of every property (and sets
// every Property's Checks to n). n must be at least 1: Check fails the test
// on a smaller one, and Properties panics.
func WithChecks(n int) Option { return func(c *config) { c.checks, c.checksSet = n, true } }

// WithShrinkTime bounds how long Check lets rapid shrink a failing case,
// instead of DefaultShrinkTime (or -rapid.shrinktime, when given): once d
// has passed, rapid is handed no smaller failing case, and it reports the
// smallest found by then. d of 0 or less leaves only rapid's own bound,
// -rapid.shrinktime (30 s unless given), which also caps a longer d.
func WithShrinkTime(d time.Duration) Option {
	return func(c *config) { c.shrinkTime, c.shrinkTimeSet = d, true }
}

// shrinkBound is the bound on shrinking Check applies.
func (c config) shrinkBound() time.Duration {
	if c.shrinkTimeSet {
		return c.shrinkTime
	}
	return defaultShrinkBound()
}

// WithNoDoubleRefill adds StepBackNoDoubleRefill to Check, for limiters
// whose state only moves forward (leaky bucket, GCRA, sliding log). Like
// every step-back property it is left out for a store-clock Spec.
func WithNoDoubleRefill() Option { return func(c *config) { c.noDoubleRefill = true } }

// DefaultMaxWait is max(2·W, ⌈B·W/L⌉): a bucket drains a full burst in
// B·W/L, and a window algorithm forgets its last admit within two windows
// (the sliding counter carries the previous one).
func DefaultMaxWait(l algos.Limit) int64 {
	return max(2*l.Window, (l.Capacity()+l.Refill-1)/l.Refill)
}
