package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// DefaultSkews are the sweep's skews: 0 to 200 ms every 10 ms, in µs.
func DefaultSkews() []int64 {
	skews := make([]int64, 0, 21)
	for ms := int64(0); ms <= 200; ms += 10 {
		skews = append(skews, ms*1000)
	}
	return skews
}

// SweepPoint is one algorithm at one skew: the worst peak over the seeds
// and every client of the options, and where it happened.
type SweepPoint struct {
	// Peak is the most admits in any window of W; PeakX the same as a
	// multiple of the limit. Seed and Client are where it was first
	// reached, taking the seeds in order and the clients in key order.
	Peak   int
	PeakX  float64
	Seed   uint64
	Client traffic.Client
	// Violations counts the (seed, client) runs that broke the promise.
	Violations int
	// Errors counts the requests the limiter answered with an error, and
	// FirstError is the first of them in seed order.
	Errors     int
	FirstError error
}

// Sweep is the peak of every algorithm against the skew between node
// clocks, in the node-clock deployment. It renders itself as a text table
// with WriteTo and as a chart with WriteSVG; At gives the numbers to tests.
type Sweep struct {
	// Options are the conditions the sweep ran under (but for Skew).
	Options Options
	// Algorithms are the algorithms' names, in the order they were given.
	Algorithms []string
	// Skews are the skews swept, in µs, ascending.
	Skews []int64
	// Points[a][k] is algorithm a at Skews[k].
	Points [][]SweepPoint
	// SeedRuns holds the run of algorithm a at Skews[k] on seed s at index
	// (a·len(Skews) + k)·len(Seeds) + s, its Column the index k: the
	// numbers behind Points.
	SeedRuns []SeedRun
}

// RunSweep runs every limiter of specs in the node-clock deployment at
// every skew (µs, sorted, non-negative) on every seed of o; o.Skew is not
// used. A store-clock limiter, which no node clock reaches, is an error.
// Like RunMatrix's, its result depends on its arguments alone, not on the
// number of workers.
func RunSweep(specs []limiter.Spec, o Options, skews []int64) (Sweep, error) {
	if err := o.Validate(); err != nil {
		return Sweep{}, err
	}
	names, err := checkLimiters(specs)
	if err != nil {
		return Sweep{}, err
	}
	switch {
	case len(skews) == 0:
		return Sweep{}, errors.New("scenarios: no skews to sweep")
	case skews[0] < 0:
		return Sweep{}, fmt.Errorf("scenarios: negative skew %d µs", skews[0])
	case !slices.IsSorted(skews):
		return Sweep{}, errors.New("scenarios: the skews must be sorted")
	}
	nk, ns := len(skews), len(o.Seeds)
	jobs := make([]job, 0, len(specs)*nk)
	for a, s := range specs {
		if err := model.Applies(s, model.NodeClock); err != nil {
			return Sweep{}, fmt.Errorf("scenarios: a sweep of node clocks: %w", err)
		}
		for _, skew := range skews {
			col := Column{Deployment: model.NodeClock, Skew: skew}
			jobs = append(jobs, job{spec: specs[a], col: col, label: names[a] + " at skew " + algos.FormatMicros(skew)})
		}
	}
	runs, err := o.runJobs(jobs)
	if err != nil {
		return Sweep{}, err
	}
	r := Sweep{Options: o, Algorithms: names, Skews: slices.Clone(skews), SeedRuns: make([]SeedRun, len(runs))}
	for i, run := range runs {
		r.SeedRuns[i] = SeedRun{Algorithm: names[i/(nk*ns)], Column: i / ns % nk, Seed: o.Seeds[i%ns],
			Clients: run.clients, FirstError: run.firstError, NotApplicable: run.notApplicable}
	}
	r.Points = r.points()
	return r, nil
}

// points summarizes SeedRuns as Points: at each algorithm and skew, the
// worst peak over the seeds, in order, and the clients, in key order.
func (r Sweep) points() [][]SweepPoint {
	o := r.Options
	nk, ns := len(r.Skews), len(o.Seeds)
	points := make([][]SweepPoint, len(r.Algorithms))
	for a := range points {
		points[a] = make([]SweepPoint, nk)
		for k := range nk {
			p := SweepPoint{Peak: -1}
			for _, run := range r.SeedRuns[(a*nk+k)*ns : (a*nk+k+1)*ns] {
				if p.FirstError == nil {
					p.FirstError = run.FirstError
				}
				for _, c := range o.Clients() {
					cr := run.Clients[c]
					p.Errors += cr.Errors
					if cr.Peak > p.Peak {
						p.Peak, p.Seed, p.Client = cr.Peak, run.Seed, c
					}
					if cr.Violation != nil {
						p.Violations++
					}
				}
			}
			p.PeakX = float64(p.Peak) / float64(o.Limit.Rate)
			points[a][k] = p
		}
	}
	return points
}

// At returns the point of algorithm algo at skew (µs), if the sweep has it.
func (r Sweep) At(algo string, skew int64) (SweepPoint, bool) {
	k := slices.Index(r.Skews, skew)
	a := slices.Index(r.Algorithms, algo)
	if k < 0 || a < 0 {
		return SweepPoint{}, false
	}
	return r.Points[a][k], true
}
