package traffic

import (
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/record"
)

// MaxRequests is the most requests Generate makes: 10 million, 320 MB of
// Requests. A TraceSpec that would make more is an error (ErrTooMany) rather
// than a machine out of memory; split the run, or lower the rate.
const MaxRequests = 10_000_000

// maxSteps bounds the steps of thinning: candidates, kept or not, and
// changes of bound.
const maxSteps = 4 * MaxRequests

// ErrTooMany is a TraceSpec that would generate more than MaxRequests requests.
var ErrTooMany = errors.New("too many requests")

// TraceSpec is a synthetic trace: a profile of arrivals over [Start,
// Start+Duration), and how each request's key, cost and service time are
// drawn. Generate depends on the TraceSpec alone.
type TraceSpec struct {
	// Profile is when requests are sent.
	Profile Profile
	// Duration is how long the trace lasts, in µs, > 0.
	Duration int64
	// Start is the time of the trace's beginning, in µs, ≥ 0: 0 by
	// default, or an epoch time (Diurnal and Bursty are aligned to
	// absolute time, so an epoch start puts their peaks at times of day).
	Start int64
	// Keys chooses each request's key; the zero Keys is one key.
	Keys Keys
	// Cost draws each request's cost (≥ 1); the zero Dist is 1.
	Cost Dist
	// Service draws each request's service time in µs (≥ 0); the zero
	// Dist is 0, unknown.
	Service Dist
	// Seed selects the random streams.
	Seed uint64
}

// gen is one generation: the window, the streams for times, and the
// requests so far.
type gen struct {
	start, end          int64
	arrive, thin, storm record.Stream
	out                 []TraceRequest
	steps               int
}

// add appends a request at at, or fails at MaxRequests.
func (g *gen) add(at int64) error {
	if len(g.out) >= MaxRequests {
		return fmt.Errorf("traffic: the trace passed %d requests: %w", MaxRequests, ErrTooMany)
	}
	g.out = append(g.out, TraceRequest{Sent: at})
	return nil
}

// Generate makes the trace the TraceSpec describes: the profile's arrivals in
// [Start, Start+Duration), sorted by time, each with a key, a cost and a
// service time drawn in time order from their own streams. The same TraceSpec
// gives the same Trace, byte for byte, on any GOMAXPROCS and in any run:
// it starts no goroutine, reads no clock, and draws only from
// record.Streams with arithmetic written here. (Across CPU architectures,
// math.Log, Cos and Pow may differ in their last bit, which can move a
// rare request by a µs.) The Trace is canonical (see Trace): keys that
// are never drawn are left out, and the others keep their names.
func (s TraceSpec) Generate() (Trace, error) {
	switch {
	case s.Profile == nil:
		return Trace{}, errors.New("traffic: a TraceSpec needs a Profile")
	case s.Duration <= 0:
		return Trace{}, fmt.Errorf("traffic: duration of %d µs; it must be positive", s.Duration)
	case s.Start < 0:
		return Trace{}, fmt.Errorf("traffic: start at %d µs; it must be at least 0", s.Start)
	case s.Start > MaxTime || s.Duration > MaxTime-s.Start:
		return Trace{}, fmt.Errorf("traffic: a trace from %d µs for %d µs ends after MaxTime", s.Start, s.Duration)
	}
	if err := s.Profile.validate(); err != nil {
		return Trace{}, err
	}
	keys, err := s.Keys.chooser()
	if err != nil {
		return Trace{}, err
	}
	if err := s.Cost.check("cost", 1, MaxCost); err != nil {
		return Trace{}, err
	}
	if err := s.Service.check("service time", 0, MaxTime); err != nil {
		return Trace{}, err
	}
	end := s.Start + s.Duration
	n, steps := s.Profile.expected(s.Start, end)
	if n > MaxRequests {
		return Trace{}, fmt.Errorf("traffic: the TraceSpec would make about %.3g requests, more than %d: %w", n, MaxRequests, ErrTooMany)
	}
	if steps > maxSteps {
		return Trace{}, fmt.Errorf("traffic: thinning would take about %.3g steps, more than %d (is the peak too high?): %w", steps, maxSteps, ErrTooMany)
	}

	g := gen{
		start:  s.Start,
		end:    end,
		arrive: record.NewStream(s.Seed, purposeArrive),
		thin:   record.NewStream(s.Seed, purposeThin),
		storm:  record.NewStream(s.Seed, purposeStorm),
		out:    make([]TraceRequest, 0, int(min(n, MaxRequests))+1),
	}
	if err := s.Profile.arrivals(&g); err != nil {
		return Trace{}, err
	}
	ks := record.NewStream(s.Seed, purposeKeys)
	cs := record.NewStream(s.Seed, purposeCost)
	ss := record.NewStream(s.Seed, purposeService)
	for i := range g.out {
		r := &g.out[i]
		r.Key = keys.draw(&ks)
		r.Cost = s.Cost.draw(&cs, 1)
		r.Service = s.Service.draw(&ss, 0)
	}
	return renumber(keys.names, g.out), nil
}
