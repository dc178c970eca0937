package model

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/record"
)

// Clocks are what a deployment's clocks do beyond the fixed offsets Skew
// spreads them over: drift, and steps (an NTP correction, an operator, a
// failover to a replica whose clock is off). The zero Clocks is clocks that
// keep their offsets for ever.
//
// A node's clock reads, at true time t,
//
//	t + record.Offset(node, …) + ⌊t·DriftPPM[node]/10⁶⌋ + the By of each of its Steps with At ≤ t
//
// and the store's clock (what a store-clock script reads as TIME, and what
// keys expire by) reads t + the By of each store Step with At ≤ t. The
// ideal run, the reference, has no faults.
type Clocks struct {
	// DriftPPM is, per node, how many µs its clock gains per second of
	// true time (negative: loses), from true time 0. Empty means no
	// drift; otherwise it has one entry per node, each within ±MaxDriftPPM.
	DriftPPM []int64
	// Steps are the jumps, in any order.
	Steps []Step
}

// Step is one clock jumping by By µs (forward if positive, back if
// negative) at true time At. Clock is the node whose clock jumps, or
// StoreClockStep for the store's.
type Step struct {
	Clock int
	At    int64
	By    int64
}

// StoreClockStep is Step.Clock for a step of the store's clock.
const StoreClockStep = -1

// MaxDriftPPM bounds a drift: 10% fast or slow is already no clock at all.
const MaxDriftPPM = 100_000

// IsZero is true for clocks with no drift and no step.
func (k Clocks) IsZero() bool { return len(k.DriftPPM) == 0 && len(k.Steps) == 0 }

// String is the faults in a line, as reports name them.
func (k Clocks) String() string {
	s := ""
	for i, ppm := range k.DriftPPM {
		if ppm != 0 {
			s += fmt.Sprintf(" node %d drifts %+d ppm;", i, ppm)
		}
	}
	for _, st := range k.Steps {
		who := fmt.Sprintf("node %d", st.Clock)
		if st.Clock == StoreClockStep {
			who = "the store"
		}
		s += fmt.Sprintf(" %s steps %+.3fs at %.3fs;", who, float64(st.By)/1e6, float64(st.At)/1e6)
	}
	if s == "" {
		return "no clock faults"
	}
	return s[1 : len(s)-1]
}

// validate reports the first thing wrong with k for a run over nodes.
func (k Clocks) validate(nodes int, maxSpan int64) error {
	if len(k.DriftPPM) != 0 && len(k.DriftPPM) != nodes {
		return fmt.Errorf("model: %d drifts for %d nodes; give one per node, or none", len(k.DriftPPM), nodes)
	}
	for i, ppm := range k.DriftPPM {
		if ppm < -MaxDriftPPM || ppm > MaxDriftPPM {
			return fmt.Errorf("model: node %d drifts %d ppm, beyond ±%d", i, ppm, MaxDriftPPM)
		}
	}
	for i, st := range k.Steps {
		switch {
		case st.Clock < StoreClockStep || st.Clock >= nodes:
			return fmt.Errorf("model: step %d is of clock %d; want a node in [0, %d) or StoreClockStep", i, st.Clock, nodes)
		case st.At < 0 || st.At > maxSpan:
			return fmt.Errorf("model: step %d at %d µs is outside the run", i, st.At)
		case st.By < -maxSpan || st.By > maxSpan:
			return fmt.Errorf("model: step %d of %d µs is too large", i, st.By)
		}
	}
	return nil
}

// clockSet is Clocks made ready for a run: per node (index node+1; index 0
// is the store), the offset, the drift and the steps in order of At.
type clockSet struct {
	offsets []int64 // per node
	drift   []int64 // per node, or nil
	steps   [][]Step
}

func (c *Config) clockSet() *clockSet {
	k := &clockSet{offsets: make([]int64, c.Nodes), drift: c.Clocks.DriftPPM}
	for i := range k.offsets {
		k.offsets[i] = record.Offset(i, c.Nodes, c.Skew)
	}
	if len(c.Clocks.Steps) > 0 {
		k.steps = make([][]Step, c.Nodes+1)
		for _, st := range c.Clocks.Steps {
			k.steps[st.Clock+1] = append(k.steps[st.Clock+1], st)
		}
		for _, s := range k.steps {
			slices.SortStableFunc(s, func(a, b Step) int { return cmp.Compare(a.At, b.At) })
		}
	}
	return k
}

// node is node i's clock at true time t.
func (k *clockSet) node(i int, t int64) int64 {
	now := t + k.offsets[i]
	if k.drift != nil {
		now += drift(t, k.drift[i])
	}
	if k.steps != nil {
		now += stepped(k.steps[i+1], t)
	}
	return now
}

// store is the store's clock at true time t.
func (k *clockSet) store(t int64) int64 {
	if k.steps == nil {
		return t
	}
	return t + stepped(k.steps[0], t)
}

// drift is ⌊t·ppm/10⁶⌋, split so that it cannot overflow for any t the
// model accepts.
func drift(t, ppm int64) int64 {
	q, r := t/1_000_000, t%1_000_000
	return q*ppm + floorDiv(r*ppm, 1_000_000)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// stepped is the sum of the steps (sorted by At) that have happened by t.
func stepped(steps []Step, t int64) int64 {
	by := int64(0)
	for _, st := range steps {
		if st.At > t {
			break
		}
		by += st.By
	}
	return by
}

// ClockAt is what node's clock reads at true time t in a run of c: its
// offset, drift and steps (c.Clocks). A live replay tells a node this.
func (c *Config) ClockAt(node int, t int64) int64 { return c.clockSet().node(node, t) }

// StoreClockAt is what the store's clock reads at true time t in a run of c.
func (c *Config) StoreClockAt(t int64) int64 { return c.clockSet().store(t) }

// ClockSpread bounds how far behind the time a limiter last decided by a
// caller's clock can be: the skew, every step, and the most any drift
// gains or loses by the last static request (a caller-clock limiter told a
// time before its last rightly adds that gap to a wait; see
// algos.Limit.Answers).
func (c *Config) ClockSpread() int64 {
	spread := c.Skew
	for _, st := range c.Clocks.Steps {
		spread += max(st.By, -st.By)
	}
	if n := len(c.Requests); n > 0 {
		for _, ppm := range c.Clocks.DriftPPM {
			spread += max(ppm, -ppm) * (c.Requests[n-1].Sent/1_000_000 + 1)
		}
	}
	return spread
}
