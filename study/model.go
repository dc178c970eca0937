package study

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
)

// LockstepOver is the lockstep model's over-admission of check-then-act with
// c workers and limit l: c·⌈l/c⌉ − l.
//
// The model: under a network delay much longer than the time Redis and the
// clients spend on a round, the c workers move in rounds. In each round all
// c GETs reach Redis before any of the round's INCRs, so all c read the same
// count; if it is below l, all c admit. The count therefore reads 0, c, 2c, …
// and the first round that reads l or more reads c·⌈l/c⌉, which is what was
// admitted. It needs every worker to have at least ⌈l/c⌉+1 requests (the
// trials give them more). When c divides l the model predicts no
// over-admission at all: the rounds land exactly on l.
func LockstepOver(c, l int) int {
	if c < 1 || l < 0 {
		return 0
	}
	return c*((l+c-1)/c) - l
}

// LockstepTable renders the model for every c and l given: the predicted
// over-admission and its share of l.
func LockstepTable(workers, limits []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "check-then-act, lockstep model: over = c·ceil(L/c) - L (admitted = c·ceil(L/c))\n\n")
	fmt.Fprintf(&b, "%6s", "L \\ c")
	for _, c := range workers {
		fmt.Fprintf(&b, " %11d", c)
	}
	b.WriteString("\n")
	for _, l := range limits {
		fmt.Fprintf(&b, "%6d", l)
		for _, c := range workers {
			over := LockstepOver(c, l)
			fmt.Fprintf(&b, " %4d (%3.0f%%)", over, 100*float64(over)/float64(l))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// EdgePlan is the traffic of an edge trial: a flood of requests, one every
// Gap µs, from Lead µs before an aligned window edge E (a multiple of the
// limit's window W) until E + W. Every algorithm sees the same flood, so
// each admits what its arithmetic lets through around an edge.
type EdgePlan struct {
	Limit algos.Limit // L per W with burst B = L
	Lead  int64       // µs before the edge at which the flood starts
	Gap   int64       // µs between two requests of the flood, all workers together
}

// Times lists the flood's send times for an edge at e.
func (p EdgePlan) Times(e int64) []int64 {
	var ts []int64
	for t := e - p.Lead; t < e+p.Limit.Window; t += p.Gap {
		ts = append(ts, t)
	}
	return ts
}

// EdgeModel plays the plan through the Go algorithm on one node with a
// true clock and no network: the deterministic twin of the live edge trial.
// It returns the most admits in any window [s, s+W).
func EdgeModel(a algos.Algorithm, p EdgePlan) int {
	e := 1000 * p.Limit.Window // any aligned edge; the arithmetic is shift-invariant
	var s algos.State
	var admits []int64
	for _, t := range p.Times(e) {
		if a.Decide(&s, t, p.Limit).Allowed {
			admits = append(admits, t)
		}
	}
	return algos.MostInAnyWindow(admits, p.Limit.Window)
}

// SkewPlan is the traffic of a caller-clock trial: Workers workers, each
// sending every Period µs from its own phase, for Duration µs, with worker
// i's clock off true time by Offset(i).
type SkewPlan struct {
	Limit    algos.Limit
	Workers  int
	Skew     int64   // offsets spread evenly over [-Skew, +Skew]
	Load     float64 // offered rate as a multiple of the limit's rate L/W
	Duration int64   // µs
	Seed     uint64  // the phases' seed
}

// Period is how often each worker sends, in µs.
func (p SkewPlan) Period() int64 {
	return int64(float64(p.Workers) * float64(p.Limit.Window) / (p.Load * float64(p.Limit.Rate)))
}

// Offset is worker i's clock offset: the first and the last worker are
// exactly 2·Skew apart, the others evenly between.
func (p SkewPlan) Offset(i int) int64 {
	if p.Workers < 2 {
		return 0
	}
	return -p.Skew + 2*p.Skew*int64(i)/int64(p.Workers-1)
}

// SkewSend is one request of a SkewPlan: who sends it, and when in true time
// (µs from the start).
type SkewSend struct {
	Worker int
	Send     int64
}

// Sends lists the plan's requests by worker (each in time order). The
// phases are seeded, so that the order in which workers follow each other
// (and so the order of their clock offsets) is random but repeatable.
func (p SkewPlan) Sends() [][]SkewSend {
	rng := rand.New(rand.NewPCG(p.Seed, 0x736b6577))
	period := p.Period()
	out := make([][]SkewSend, p.Workers)
	for w := range out {
		for t := rng.Int64N(period); t < p.Duration; t += period {
			out[w] = append(out[w], SkewSend{Worker: w, Send: t})
		}
	}
	return out
}

// Allowed is what the limit lets through in the plan's duration: the burst
// plus the rate times the duration.
func (p SkewPlan) Allowed() int64 {
	return p.Limit.Burst + p.Limit.Rate*p.Duration/p.Limit.Window
}

// SkewModel plays the plan through the Go algorithm a (the study runs the
// SkewBuckets) on one store with no network: each request is decided at its
// true time, told either that true time (callerClock false: the store's
// clock) or its worker's clock (true time + Offset). It returns how many
// were sent and admitted.
func SkewModel(a algos.Algorithm, p SkewPlan, callerClock bool) (sent, admitted int) {
	var all []SkewSend
	for _, ws := range p.Sends() {
		all = append(all, ws...)
	}
	slices.SortStableFunc(all, func(a, b SkewSend) int { return cmp.Compare(a.Send, b.Send) })
	base := 1000 * algos.Second
	var s algos.State
	for _, r := range all {
		now := base + r.Send
		if callerClock {
			now += p.Offset(r.Worker)
		}
		sent++
		if a.Decide(&s, now, p.Limit).Allowed {
			admitted++
		}
	}
	return sent, admitted
}
