package capacity

import (
	"context"
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/metrics"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// TraceResult is what one limiter, under one limit, did to one trace.
type TraceResult struct {
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
func (r TraceResult) RejectShare() float64 {
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
// The run is the simulator's ideal deployment (model.Ideal, which decides
// each request at the instant it is sent, in the requests' order), its
// records (model.Result.AllRecords, keys by their names in tr) measured by
// package metrics, so that the one-node run capacity plans with is the
// model's, not a second copy of it. The model asks a limiter only for a
// key and a time; what a trace says beyond them reaches the limiter
// through an adapter (weigher) that the model calls once per request, in
// order.
//
// A request's Weight reaches a limiter that is limiter.Weighed; any other
// limiter can only be given a trace whose requests all cost 1 (anything
// else is an error before the first request), and never sees service
// times, which a rate limit has no use for. A limiter that is
// limiter.Sized has its state's size sampled after every decision; the
// peak within each window is kept (Run.State). Errors from the limiter
// are counted, not fatal. The trace may hold at most record.MaxKeys keys.
// The same trace, spec and limit give the same TraceResult, bit for bit.
func Run(tr traffic.Trace, spec limiter.Spec, l algos.Limit) (TraceResult, error) {
	if err := tr.Validate(); err != nil {
		return TraceResult{}, err
	}
	if len(tr.Requests) > 0 && tr.Requests[len(tr.Requests)-1].Sent > algos.MaxTime {
		return TraceResult{}, fmt.Errorf("capacity: the trace runs to %d µs, past algos.MaxTime", tr.Requests[len(tr.Requests)-1].Sent)
	}
	lim, err := spec.Open(l)
	if err != nil {
		return TraceResult{}, err
	}
	defer limiter.Close(lim)
	w := &weigher{tr: tr, lim: lim, window: l.Window}
	w.weighed, _ = lim.(limiter.Weighed)
	w.sized, _ = lim.(limiter.Sized)
	if w.weighed == nil {
		for i, r := range tr.Requests {
			if r.Cost != 1 {
				return TraceResult{}, fmt.Errorf("capacity: %q is not a limiter.Weighed, so it cannot be given request %d of cost %d (key %q at %s); give it a trace of cost-1 requests", spec.Name, i+1, r.Cost, tr.Keys[r.Key], algos.FormatTime(r.Sent))
			}
		}
	}

	cfg := model.Config{Limiter: w.spec(spec), Limit: l, Deployment: model.Ideal, Nodes: 1, Requests: tr.Model()}
	sim, err := model.Run(cfg)
	if err == nil {
		err = w.err
	}
	if err != nil {
		return TraceResult{}, fmt.Errorf("capacity: %s: %w", spec.Name, err)
	}
	res := TraceResult{Limiter: spec.Name, Limit: l, Allowed: make([]bool, len(tr.Requests)), Delay: w.delays, FirstError: w.firstErr}
	for i, o := range sim.Outcomes {
		c := tr.Requests[i].Cost
		res.OfferedCost += c
		if o.Admitted {
			res.Allowed[i] = true
			res.AcceptedCost += c
		}
	}
	all, err := sim.AllRecords(cfg, tr.Keys)
	if err != nil {
		return TraceResult{}, err
	}
	records := func(yield func(record.Record) bool) {
		for i, rec := range all {
			// The model's record, with what the trace and the adapter add:
			// the cost, and how long a queueing limiter held the request.
			rec.Cost = tr.Requests[i].Cost
			if w.delays != nil && rec.IsDecided() && rec.Allowed {
				rec.Delay = w.delays[i]
			}
			if !yield(rec) {
				return
			}
		}
	}
	run, err := metrics.Measure(records, metrics.Options{Keys: tr.Keys, Window: l.Window, StateSamples: w.samples})
	if err != nil {
		return TraceResult{}, err
	}
	res.Run = run
	return res, nil
}

// weigher is the limiter the model's ideal run calls for a trace: the
// limiter under test, given the Weight of the request the model decides,
// with what the model does not keep noted on the side (each admit's
// Delay, the state's size). The ideal deployment decides the requests one
// at a time in their order, so its n-th call is the trace's n-th request;
// a call that is not (which would be a change in the model) stops the run
// with an error rather than weigh the wrong request.
type weigher struct {
	tr      traffic.Trace
	lim     limiter.Limiter
	weighed limiter.Weighed // lim, when it takes weights
	sized   limiter.Sized   // lim, when it can say its size
	window  int64
	opened  bool
	next    int // the index of the request the next call decides

	delays   []int64 // each admit's Delay, once any admit's is not 0
	samples  []metrics.StateSample
	firstErr error // the limiter's first error, with its request
	err      error // the run's own: a call out of order, a second New
}

// spec is the Spec the model runs: s's name, clock and promise, whose New
// hands the model w (once: the ideal deployment opens one limiter).
func (w *weigher) spec(s limiter.Spec) limiter.Spec {
	return limiter.Spec{Name: s.Name, Clock: s.Clock, Promise: s.Promise, New: func(algos.Limit) (limiter.Limiter, error) {
		if w.opened {
			w.err = errors.New("the model opened the limiter twice; capacity's trace runs on one")
			return nil, w.err
		}
		w.opened = true
		return w, nil
	}}
}

// Allow decides the trace's next request, which must be the key and time
// the model asks for, with its Weight when the limiter takes one.
func (w *weigher) Allow(ctx context.Context, key int, now int64) (d algos.Decision, err error) {
	i := w.next
	if i >= len(w.tr.Requests) || w.tr.Requests[i].Key != key || w.tr.Requests[i].Sent != now {
		if w.err == nil {
			w.err = fmt.Errorf("the model's call %d (key %d at %s) is not the trace's request %d", i+1, key, algos.FormatTime(now), i+1)
		}
		return algos.Decision{}, w.err
	}
	w.next++
	r := w.tr.Requests[i]
	if w.weighed != nil {
		d, err = allowWeighed(ctx, w.weighed, r)
	} else {
		d, err = limiter.Allow(ctx, w.lim, r.Key, r.Sent)
	}
	switch {
	case err != nil:
		if w.firstErr == nil {
			w.firstErr = fmt.Errorf("request %d (key %q at %s): %w", i+1, w.tr.Keys[r.Key], algos.FormatTime(r.Sent), err)
		}
	case d.Allowed && d.Delay != 0: // a negative one is Measure's error
		if w.delays == nil {
			w.delays = make([]int64, len(w.tr.Requests))
		}
		w.delays[i] = d.Delay
	}
	if w.sized != nil {
		w.samples = peakPerWindow(w.samples, metrics.StateSample{At: r.Sent, Cells: w.sized.Cells()}, w.window)
	}
	return d, err
}

// allowWeighed asks a Weighed limiter, turning a panic into an error as
// limiter.Allow does for a plain one.
func allowWeighed(ctx context.Context, lim limiter.Weighed, r traffic.TraceRequest) (d algos.Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("AllowWeighed panicked: %v", v)
		}
	}()
	return lim.AllowWeighed(ctx, r.Key, r.Sent, limiter.Weight{Cost: r.Cost, Service: r.Service})
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
func Compare(tr traffic.Trace, specs []limiter.Spec, l algos.Limit) ([]TraceResult, error) {
	if len(specs) == 0 {
		return nil, errors.New("capacity: no limiters to compare")
	}
	out := make([]TraceResult, 0, len(specs))
	for _, s := range specs {
		r, err := Run(tr, s, l)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
