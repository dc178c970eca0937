package study

import (
	"context"
	"slices"
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// Grid is a sweep: every strategy at every worker count, on every path,
// with every release, Reps times each. Each trial offers Offered requests
// in all (⌈Offered/c⌉ per worker) against a fresh key under Limit.
type Grid struct {
	Strategies []Strategy
	Workers    []int // worker counts c
	Paths      []*Path
	Releases   []Release
	Reps       int // trials at each point
	Limit      algos.Limit
	Offered    int // requests a trial offers in all
	// Seed seeds the Random release's offsets; rep r of a grid point uses
	// Seed + r.
	Seed uint64
}

// Trials is how many trials the grid runs.
func (g Grid) Trials() int {
	return len(g.Strategies) * len(g.Workers) * len(g.Paths) * len(g.Releases) * g.Reps
}

// Spread is the range of the random start offsets on path p for per
// requests a worker: the time its share takes at two round trips a
// request, so that a worker's run overlaps a random part of the others'.
// It is never less than a millisecond, so that a Random release spreads the
// workers on loopback too.
func Spread(p *Path, per int) time.Duration {
	return max(time.Millisecond, time.Duration(per)*2*p.RTT)
}

// GridPoint is one point of a sweep (a strategy, a worker count, a path, a
// release and a limit) and every trial run there.
type GridPoint struct {
	Strategy  string        // the Strategy's Name
	Atomicity Atomicity     // the Strategy's Atomicity
	Workers   int           // c
	Path      string        // the Path's Name
	RTT       time.Duration // the Path's measured RTT
	Release   Release       // how the trials' workers started
	Limit     int           // L
	Results   []TrialResult // one a trial, in the order they ran
}

// RunGrid runs every trial of g against keys under prefix, one fleet of
// max(g.Workers) connections per path, and returns the grid points in the
// order path, strategy, workers, release. progress, when not nil, hears
// about each finished point.
func RunGrid(ctx context.Context, g Grid, prefix string, progress func(GridPoint)) ([]GridPoint, error) {
	var points []GridPoint
	maxC := slices.Max(g.Workers)
	for _, p := range g.Paths {
		f, err := NewConns(ctx, p, maxC)
		if err != nil {
			return nil, err
		}
		for _, s := range g.Strategies {
			for _, c := range g.Workers {
				per := (g.Offered + c - 1) / c
				for _, rel := range g.Releases {
					pt := GridPoint{Strategy: s.Name(), Atomicity: s.Atomicity(), Workers: c, Path: p.Name, RTT: p.RTT, Release: rel, Limit: int(g.Limit.Rate)}
					for rep := range g.Reps {
						t := Trial{Strategy: s, Workers: c, PerWorker: per, Limit: g.Limit, Release: rel,
							Spread: Spread(p, per), Seed: g.Seed + uint64(rep)}
						r, err := f.Run(ctx, t, prefix+"grid")
						if err != nil {
							f.Close()
							return nil, err
						}
						pt.Results = append(pt.Results, r)
					}
					points = append(points, pt)
					if progress != nil {
						progress(pt)
					}
				}
			}
		}
		f.Close()
	}
	return points, nil
}

// PointStats is a grid point's trials condensed: the spread of their
// admits and over-admission, their refusals within the limit, and their
// requests' latency and rate.
type PointStats struct {
	Trials int // how many trials ran
	Sent   int // requests offered a trial
	// AdmittedMin and AdmittedMax bound the admits over the trials.
	AdmittedMin, AdmittedMax int
	// Over is admitted − L: its mean and range over the trials.
	OverMean         float64
	OverMin, OverMax int
	// OverAdmittingTrials counts trials with Over > 0, ExactTrials those
	// with Over == 0.
	OverAdmittingTrials, ExactTrials int
	// Within is the refusals within the limit: mean and most in one trial,
	// and WithinShare is their share of the requests that were within the
	// limit (refused within / (admitted + refused within)), over all trials.
	WithinMean  float64
	WithinMax   int
	WithinShare float64
	// P50 and P99 are over every request of every trial.
	P50, P99 time.Duration
	// Throughput is the mean of the trials' decisions per second.
	Throughput float64
	// Attempts is the mean attempts a request (above 1 only for WATCH/MULTI).
	Attempts float64
	// Model is the lockstep model's over-admission for check-then-act, -1
	// for the other strategies.
	Model int
}

// Summarize condenses the point's trials into their PointStats. With no
// trials, only Trials (0) and Model mean anything.
func (p GridPoint) Summarize() PointStats {
	s := PointStats{Trials: len(p.Results), Model: -1, AdmittedMin: 1 << 30, OverMin: 1 << 30}
	if p.Strategy == (CheckThenAct{}).Name() {
		s.Model = LockstepOver(p.Workers, p.Limit)
	}
	var lat []time.Duration
	var within, admitted, attempts, sent int
	for _, r := range p.Results {
		s.AdmittedMin = min(s.AdmittedMin, r.Admitted)
		s.AdmittedMax = max(s.AdmittedMax, r.Admitted)
		s.OverMin = min(s.OverMin, r.Over)
		s.OverMax = max(s.OverMax, r.Over)
		s.OverMean += float64(r.Over)
		s.WithinMean += float64(r.RefusedWithin)
		s.WithinMax = max(s.WithinMax, r.RefusedWithin)
		s.Throughput += r.Throughput()
		within += r.RefusedWithin
		admitted += r.Admitted
		attempts += r.Attempts
		sent += r.Trial.Sent()
		if r.Over > 0 {
			s.OverAdmittingTrials++
		}
		if r.Over == 0 {
			s.ExactTrials++
		}
		lat = append(lat, r.Latencies...)
	}
	if n := float64(len(p.Results)); n > 0 {
		s.OverMean /= n
		s.WithinMean /= n
		s.Throughput /= n
	}
	if admitted+within > 0 {
		s.WithinShare = float64(within) / float64(admitted+within)
	}
	if sent > 0 {
		s.Attempts = float64(attempts) / float64(sent)
		s.Sent = sent / len(p.Results)
	}
	slices.Sort(lat)
	s.P50, s.P99 = quantile(lat, 0.5), quantile(lat, 0.99)
	return s
}

// ContentionRatio is Lua's throughput over an optimistic strategy's in the
// same conditions: the mean decisions per second of script (a Lua
// strategy's grid point) divided by that of watch (a WATCH/MULTI one); 0
// when watch decided nothing.
func ContentionRatio(script, watch GridPoint) float64 {
	w := watch.Summarize().Throughput
	if w == 0 {
		return 0
	}
	return script.Summarize().Throughput / w
}
