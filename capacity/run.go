package capacity

import (
	"context"
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/metrics"
	"github.com/overshoot-go/overshoot/traffic"
)

// Result is what one limiter, under one limit, did to one trace.
type Result struct {
	// Limiter is the Spec's name; Limit the limit it enforced.
	Limiter string
	Limit   algos.Limit
	// Run is every measure of the run (package metrics), its histogram
	// and timeline in windows of the limit's Window.
	Run metrics.Run
	// OfferedCost and AcceptedCost are the units the trace asked for and
	// the units the limiter admitted (equal to the request counts when
	// every request costs 1).
	OfferedCost, AcceptedCost int64
	// Allowed holds, for each request of the trace in order, whether it
	// was admitted.
	Allowed []bool
	// Delay holds, for each request of the trace in order, the µs a
	// queueing limiter held it before letting it through (its
	// Decision.Delay; 0 for a request let through at once or refused), so
	// that request i reached the backend at its At + Delay[i]. It is nil
	// when the limiter held no request; Run.Wait is its distribution over
	// the admits.
	Delay []int64
	// FirstError is the first error the limiter returned, if any (each
	// one is counted in Run.Errors).
	FirstError error
}

// RejectShare is the share of the trace's requests that did not get
// through: rejected or failed, of all requests; 0 for an empty trace. It is
// what a Sweep holds to its budget.
func (r Result) RejectShare() float64 {
	if r.Run.Requests == 0 {
		return 0
	}
	return float64(r.Run.Rejected+r.Run.Errors) / float64(r.Run.Requests)
}

// Run plays tr through a fresh limiter made by spec under l, on one node
// whose clock is true: each request is decided at its own time, in the
// trace's order, with its key, its cost and its service time. The times
// are the trace's own (epoch times included: every algorithm handles times
// up to algos.MaxTime), because windows are aligned to the epoch.
//
// A request's Weight reaches a limiter that is limiter.Weighed; any other
// limiter can only be given a trace whose requests all cost 1 (anything
// else is an error before the first request), and never sees service
// times, which a rate limit has no use for. A limiter that is
// limiter.Sized has its state's size sampled after every decision; the
// peak within each window is kept (Run.State). Errors from the limiter
// are counted, not fatal. The same trace, spec and limit give the same
// Result, bit for bit.
func Run(tr traffic.Trace, spec limiter.Spec, l algos.Limit) (Result, error) {
	if err := tr.Validate(); err != nil {
		return Result{}, err
	}
	if len(tr.Requests) > 0 && tr.Requests[len(tr.Requests)-1].At > algos.MaxTime {
		return Result{}, fmt.Errorf("capacity: the trace runs to %d µs, past algos.MaxTime", tr.Requests[len(tr.Requests)-1].At)
	}
	lim, err := spec.Open(l)
	if err != nil {
		return Result{}, err
	}
	defer limiter.Close(lim)
	weighed, isWeighed := lim.(limiter.Weighed)
	if !isWeighed {
		for i, r := range tr.Requests {
			if r.Cost != 1 {
				return Result{}, fmt.Errorf("capacity: %q is not a limiter.Weighed, so it cannot be given request %d of cost %d (key %q at %s); give it a trace of cost-1 requests", spec.Name, i+1, r.Cost, tr.Keys[r.Key], algos.FormatTime(r.At))
			}
		}
	}
	sized, isSized := lim.(limiter.Sized)

	res := Result{Limiter: spec.Name, Limit: l, Allowed: make([]bool, len(tr.Requests))}
	outcomes := make([]metrics.Outcome, len(tr.Requests))
	var samples []metrics.StateSample
	ctx := context.Background()
	for i, r := range tr.Requests {
		var d algos.Decision
		var err error
		if isWeighed {
			d, err = allowWeighed(ctx, weighed, r)
		} else {
			d, err = limiter.Allow(ctx, lim, r.Key, r.At)
		}
		o := metrics.Outcome{At: r.At, Key: r.Key}
		res.OfferedCost += r.Cost
		switch {
		case err != nil:
			o.Err = true
			if res.FirstError == nil {
				res.FirstError = fmt.Errorf("request %d (key %q at %s): %w", i+1, tr.Keys[r.Key], algos.FormatTime(r.At), err)
			}
		case d.Allowed:
			o.Allowed = true
			res.Allowed[i] = true
			res.AcceptedCost += r.Cost
			o.Delay = d.Delay // a negative one is Measure's error
			if d.Delay > 0 && res.Delay == nil {
				res.Delay = make([]int64, len(tr.Requests))
			}
			if res.Delay != nil {
				res.Delay[i] = d.Delay
			}
		default:
			o.RetryAfter = max(d.RetryAfter, 0)
		}
		outcomes[i] = o
		if isSized {
			samples = peakPerWindow(samples, metrics.StateSample{At: r.At, Cells: sized.Cells()}, l.Window)
		}
	}
	run, err := metrics.Measure(outcomes, metrics.Options{Keys: tr.Keys, Window: l.Window, StateSamples: samples})
	if err != nil {
		return Result{}, err
	}
	res.Run = run
	return res, nil
}

// allowWeighed asks a Weighed limiter, turning a panic into an error as
// limiter.Allow does for a plain one.
func allowWeighed(ctx context.Context, lim limiter.Weighed, r traffic.Request) (d algos.Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("AllowWeighed panicked: %v", v)
		}
	}()
	return lim.AllowWeighed(ctx, r.Key, r.At, limiter.Weight{Cost: r.Cost, Service: r.Service})
}

// peakPerWindow keeps one sample per aligned window, the largest (the
// earliest of equals), so that a million decisions do not keep a million
// samples while the peak stays exact.
func peakPerWindow(samples []metrics.StateSample, s metrics.StateSample, window int64) []metrics.StateSample {
	if n := len(samples); n > 0 && algos.FloorDiv(samples[n-1].At, window) == algos.FloorDiv(s.At, window) {
		if s.Cells > samples[n-1].Cells {
			samples[n-1] = s
		}
		return samples
	}
	return append(samples, s)
}

// Compare runs tr through each spec under l, in order (Run for each).
func Compare(tr traffic.Trace, specs []limiter.Spec, l algos.Limit) ([]Result, error) {
	if len(specs) == 0 {
		return nil, errors.New("capacity: no limiters to compare")
	}
	out := make([]Result, 0, len(specs))
	for _, s := range specs {
		r, err := Run(tr, s, l)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
