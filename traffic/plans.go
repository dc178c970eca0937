package traffic

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// The traffic of package study's live trials: what they send to Redis, and
// what the study's models play through package model, from the same plan.
// Which plans run is the study's choice (its config.go); the times are made
// here.

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

// Requests is the flood for an edge at e as the simulator plays it: one
// request at each of Times(e), in order, all on key 0 and node 0.
func (p EdgePlan) Requests(e int64) []record.Request {
	times := p.Times(e)
	reqs := make([]record.Request, len(times))
	for i, t := range times {
		reqs[i] = record.Request{Sent: t}
	}
	return reqs
}

// Validate reports what makes p unplayable: an invalid limit, or not
// 0 < Lead < W and Gap > 0.
func (p EdgePlan) Validate() error {
	if err := p.Limit.Validate(); err != nil {
		return err
	}
	if p.Gap <= 0 || p.Lead <= 0 || p.Lead >= p.Limit.Window {
		return fmt.Errorf("traffic: an edge plan needs 0 < Lead < W and Gap > 0, got %+v", p)
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

// Offset is worker i's clock offset from true time, in µs: record.Offset of
// worker i among Workers over Skew, so the first and the last worker are
// exactly Skew apart and the others evenly between. With one worker it is 0.
func (p SkewPlan) Offset(i int) int64 { return record.Offset(i, p.Workers, p.Skew) }

// Validate reports what makes p unplayable: an invalid limit, no worker, a
// negative skew, or a load or duration that leaves no request.
func (p SkewPlan) Validate() error {
	if err := p.Limit.Validate(); err != nil {
		return err
	}
	switch {
	case p.Workers < 1:
		return errors.New("traffic: a caller-clock plan needs a worker")
	case p.Skew < 0:
		return fmt.Errorf("traffic: negative skew %d µs; skew is the distance between the extreme clocks", p.Skew)
	case !(p.Load > 0) || p.Duration <= 0 || p.Period() <= 0:
		return fmt.Errorf("traffic: a caller-clock plan needs a positive load, duration and period, got %+v", p)
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
// [0, Duration)), for a valid plan. The phases are seeded (stream
// purposeSkewPhases), so that the order in which workers follow each other
// (and so the order of their clock offsets) is random but repeatable: the
// same plan gives the same sends.
func (p SkewPlan) Sends() [][]SkewSend {
	rng := newRand(p.Seed, purposeSkewPhases)
	period := p.Period()
	out := make([][]SkewSend, p.Workers)
	for w := range out {
		for t := uniformBelow(rng, period); t < p.Duration; t += period {
			out[w] = append(out[w], SkewSend{Worker: w, Sent: t})
		}
	}
	return out
}

// Requests is the plan as the simulator plays it, for a valid plan: every
// send at start + Sent on key 0, on the node numbered as its worker, in
// time order, the lower worker first among sends at the same instant.
func (p SkewPlan) Requests(start int64) []record.Request {
	sends := slices.Concat(p.Sends()...)
	slices.SortStableFunc(sends, func(x, y SkewSend) int { return cmp.Compare(x.Sent, y.Sent) })
	reqs := make([]record.Request, len(sends))
	for i, s := range sends {
		reqs[i] = record.Request{Sent: start + s.Sent, Node: s.Worker}
	}
	return reqs
}

// ReleaseOffsets are the start offsets, in µs, of a trial's workers
// released at random (study.Random): one for each of workers, uniform in
// [0, spread), drawn from the stream (seed, purposeReleaseOffsets). They are
// all 0 when spread is not positive. The same arguments give the same
// offsets.
func ReleaseOffsets(workers int, spread int64, seed uint64) []int64 {
	offsets := make([]int64, workers)
	if spread > 0 {
		rng := newRand(seed, purposeReleaseOffsets)
		for i := range offsets {
			offsets[i] = uniformBelow(rng, spread)
		}
	}
	return offsets
}

// uniformBelow is uniform in [0, n), drawn as math/rand/v2's Int64N draws
// it on a 64-bit machine (the study's plans were first drawn with it, and
// stay the same): the low bits of one draw when n is a power of two, else
// the stream's Below. Like Int64N it panics for n ≤ 0, which a valid plan
// never asks for.
func uniformBelow(s *record.Stream, n int64) int64 {
	if n <= 0 {
		panic(fmt.Sprintf("traffic: no number is uniform in [0, %d)", n))
	}
	u := uint64(n)
	if u&(u-1) == 0 {
		return int64(s.Uint64() & (u - 1))
	}
	return int64(s.Below(u))
}
