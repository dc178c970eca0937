package study

import (
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// The models beside the measurements: the lockstep model's closed form, and
// the edge and caller-clock plans played through package model's simulator.

// LockstepOver is the lockstep model's over-admission of check-then-act with
// c workers and limit l: c·⌈l/c⌉ − l (0 for c < 1 or l < 0).
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

// EdgeModel plays the plan through the Go algorithm with model.Run on one
// node with a true clock and no network (model.Ideal), around the aligned
// edge 1000·W: the deterministic twin of the live edge trial. It returns
// the most admits in any window [s, s+W) of true decision time, and fails
// only for an invalid plan.
func EdgeModel(a algos.Algorithm, p traffic.EdgePlan) (int, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	reqs := p.Requests(1000 * p.Limit.Window) // any aligned edge; the arithmetic is shift-invariant
	res, err := model.Run(model.Config{Limiter: limiter.FromAlgorithm(a), Limit: p.Limit, Deployment: model.Ideal, Nodes: 1, Requests: reqs})
	if err != nil {
		return 0, fmt.Errorf("study: edge model of %s: %w", a.Name, err)
	}
	return algos.MostInAnyWindow(res.AdmitTimes(0), p.Limit.Window), nil
}

// SkewModel plays the plan through the Go algorithm a (the study runs the
// SkewBuckets) with model.Run: one store, no network (RTT and jitter 0),
// every request pinned to its worker's node and decided at its true send
// time, 1000 s after the start of true time. The store is told either that
// true time (callerClock false: model.StoreClock, Redis's clock) or the
// worker's clock, true time + Offset (model.NodeClock). Requests sent at the
// same instant are decided in worker order. It returns how many were sent
// and admitted, and fails only for an invalid plan.
func SkewModel(a algos.Algorithm, p traffic.SkewPlan, callerClock bool) (sent, admitted int, err error) {
	if err := p.Validate(); err != nil {
		return 0, 0, err
	}
	reqs := p.Requests(1000 * algos.Second) // Requests orders ties by worker
	cfg := model.Config{Limiter: limiter.FromAlgorithm(a), Limit: p.Limit, Deployment: model.StoreClock,
		Nodes: p.Workers, Skew: p.Skew, Pinned: true, Requests: reqs}
	if callerClock {
		cfg.Deployment = model.NodeClock
	}
	res, err := model.Run(cfg)
	if err != nil {
		return 0, 0, fmt.Errorf("study: caller-clock model of %s: %w", a.Name, err)
	}
	for _, k := range res.Keys {
		admitted += k.Admitted
	}
	return len(reqs), admitted, nil
}
