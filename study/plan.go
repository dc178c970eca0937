package study

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// The plans of the edge and caller-clock trials: the traffic that the live
// trials send to Redis and that the models play through the Go algorithms.

// EdgePlan is the traffic of an edge trial: a flood of requests, one every
// Gap µs, from Lead µs before an aligned window edge E (a multiple of the
// limit's window W) until E + W. Every algorithm sees the same flood, so
// each admits what its arithmetic lets through around an edge.
type EdgePlan struct {
	Limit algos.Limit // L per W with burst B = L
	Lead  int64       // µs before the edge at which the flood starts
	Gap   int64       // µs between two requests of the flood, all workers together
}

// Times lists the flood's send times for an edge at e, in order: e - Lead,
// then every Gap µs while before e + W.
func (p EdgePlan) Times(e int64) []int64 {
	var ts []int64
	for t := e - p.Lead; t < e+p.Limit.Window; t += p.Gap {
		ts = append(ts, t)
	}
	return ts
}

// validate reports what makes p unplayable: an invalid limit, or not
// 0 < Lead < W and Gap > 0.
func (p EdgePlan) validate() error {
	if err := p.Limit.Validate(); err != nil {
		return err
	}
	if p.Gap <= 0 || p.Lead <= 0 || p.Lead >= p.Limit.Window {
		return fmt.Errorf("study: an edge plan needs 0 < Lead < W and Gap > 0, got %+v", p)
	}
	return nil
}

// SkewPlan is the traffic of a caller-clock trial: Workers workers, each
// sending every Period µs from its own phase, for Duration µs, with worker
// i's clock off true time by Offset(i).
type SkewPlan struct {
	Limit   algos.Limit // the bucket's limit
	Workers int         // how many workers send, each with its own clock
	// Skew is the distance, in µs, between the first and the last worker's
	// clock, as model.Config.Skew is between nodes: the offsets spread
	// evenly over [-Skew/2, +Skew/2], which the reports print as ±Skew/2.
	Skew     int64
	Load     float64 // offered rate as a multiple of the limit's rate L/W
	Duration int64   // µs
	Seed     uint64  // the phases' seed
}

// Period is how often each worker sends, in µs: Workers sending every
// Period offer Load times the limit's rate.
func (p SkewPlan) Period() int64 {
	return int64(float64(p.Workers) * float64(p.Limit.Window) / (p.Load * float64(p.Limit.Rate)))
}

// Offset is worker i's clock offset from true time, in µs: model.Offset of
// worker i among Workers over Skew, so the first and the last worker are
// exactly Skew apart and the others evenly between. With one worker it is 0.
func (p SkewPlan) Offset(i int) int64 { return model.Offset(i, p.Workers, p.Skew) }

// validate reports what makes p unplayable: an invalid limit, no worker, a
// negative skew, or a load or duration that leaves no request.
func (p SkewPlan) validate() error {
	if err := p.Limit.Validate(); err != nil {
		return err
	}
	switch {
	case p.Workers < 1:
		return errors.New("study: a caller-clock plan needs a worker")
	case p.Skew < 0:
		return fmt.Errorf("study: negative skew %d µs; skew is the distance between the extreme clocks", p.Skew)
	case !(p.Load > 0) || p.Duration <= 0 || p.Period() <= 0:
		return fmt.Errorf("study: a caller-clock plan needs a positive load, duration and period, got %+v", p)
	}
	return nil
}

// SkewSend is one request of a SkewPlan: who sends it, and when in true time
// (µs from the start).
type SkewSend struct {
	Worker int   // the sender, 0 ≤ Worker < Workers
	Sent   int64 // µs of true time from the start
}

// Sends lists the plan's requests by worker (each in time order, in
// [0, Duration)). The phases are seeded, so that the order in which workers
// follow each other (and so the order of their clock offsets) is random but
// repeatable.
func (p SkewPlan) Sends() [][]SkewSend {
	rng := rand.New(rand.NewPCG(p.Seed, 0x736b6577))
	period := p.Period()
	out := make([][]SkewSend, p.Workers)
	for w := range out {
		for t := rng.Int64N(period); t < p.Duration; t += period {
			out[w] = append(out[w], SkewSend{Worker: w, Sent: t})
		}
	}
	return out
}

// Allowed is what the limit lets through in the plan's duration: the burst
// plus the rate times the duration, B + L·T/W.
func (p SkewPlan) Allowed() int64 {
	return p.Limit.Burst + p.Limit.Rate*p.Duration/p.Limit.Window
}
