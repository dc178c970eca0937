package study

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// Grid is a sweep: every strategy at every worker count, on every path,
// with every arrival, Reps times each. Each trial offers Offered requests
// in all (⌈Offered/c⌉ per worker) against a fresh key under Limit.
type Grid struct {
	Strategies []Strategy
	Workers    []int
	Paths      []*Path
	Arrivals   []Release
	Reps       int
	Limit      algos.Limit
	Offered    int
	// Seed seeds the random arrivals; rep r of a cell uses Seed + r.
	Seed uint64
}

// Trials is how many trials the grid runs.
func (g Grid) Trials() int {
	return len(g.Strategies) * len(g.Workers) * len(g.Paths) * len(g.Arrivals) * g.Reps
}

// Spread is the range of the random start offsets on path p for per
// requests a worker: the time its share takes at two round trips a
// request, so that a worker's run overlaps a random part of the others'.
// It is never less than a millisecond, so that loopback arrivals spread too.
func Spread(p *Path, per int) time.Duration {
	return max(time.Millisecond, time.Duration(per)*2*p.RTT)
}

// GridPoint is one point of a sweep (a strategy, a worker count, a path, an
// arrival and a limit) and every trial run there.
type GridPoint struct {
	Strategy string
	Kind     Kind
	Workers  int
	Path     string        // the Path's Name
	RTT      time.Duration // the Path's measured RTT
	Arrival  Release
	Limit    int // L
	Results  []TrialResult
}

// RunGrid runs every trial of g against keys under prefix, one fleet of
// max(g.Workers) connections per path, and returns the cells in the order
// path, strategy, workers, arrival. progress, when not nil, hears about
// each finished cell.
func RunGrid(ctx context.Context, g Grid, prefix string, progress func(GridPoint)) ([]GridPoint, error) {
	var cells []GridPoint
	maxC := slices.Max(g.Workers)
	for _, p := range g.Paths {
		f, err := NewFleet(ctx, p, maxC)
		if err != nil {
			return nil, err
		}
		for _, s := range g.Strategies {
			for _, c := range g.Workers {
				per := (g.Offered + c - 1) / c
				for _, a := range g.Arrivals {
					cell := GridPoint{Strategy: s.Name(), Kind: s.Kind(), Workers: c, Path: p.Name, RTT: p.RTT, Arrival: a, Limit: int(g.Limit.Rate)}
					for rep := range g.Reps {
						t := Trial{Strategy: s, Workers: c, PerWorker: per, Limit: g.Limit, Release: a,
							Spread: Spread(p, per), Seed: g.Seed + uint64(rep)}
						r, err := f.Run(ctx, t, prefix+"grid")
						if err != nil {
							f.Close()
							return nil, err
						}
						cell.Results = append(cell.Results, r)
					}
					cells = append(cells, cell)
					if progress != nil {
						progress(cell)
					}
				}
			}
		}
		f.Close()
	}
	return cells, nil
}

// Summary condenses a cell's trials.
type Summary struct {
	Trials int
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

// Summarize condenses c.
func (c GridPoint) Summarize() Summary {
	s := Summary{Trials: len(c.Results), Model: -1, AdmittedMin: 1 << 30, OverMin: 1 << 30}
	if c.Strategy == (CheckThenAct{}).Name() {
		s.Model = LockstepOver(c.Workers, c.Limit)
	}
	var lat []time.Duration
	var within, admitted, attempts, sent int
	for _, r := range c.Results {
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
	if n := float64(len(c.Results)); n > 0 {
		s.OverMean /= n
		s.WithinMean /= n
		s.Throughput /= n
	}
	if admitted+within > 0 {
		s.WithinShare = float64(within) / float64(admitted+within)
	}
	if sent > 0 {
		s.Attempts = float64(attempts) / float64(sent)
		s.Sent = sent / len(c.Results)
	}
	slices.Sort(lat)
	s.P50, s.P99 = quantile(lat, 0.5), quantile(lat, 0.99)
	return s
}

// Table renders cells as the study's main table: one line a cell.
func Table(cells []GridPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s %-10s %3s %-8s %8s %-11s %6s %4s %9s %14s %6s %13s %5s %9s %9s %9s\n",
		"strategy", "kind", "c", "path", "rtt", "arrival", "trials", "sent", "admitted", "over mean/max", "model", "within mean/max", "share", "p50", "p99", "req/s")
	for _, c := range cells {
		s := c.Summarize()
		model := "-"
		if s.Model >= 0 {
			model = fmt.Sprintf("%+d", s.Model)
		}
		admitted := fmt.Sprintf("%d", s.AdmittedMin)
		if s.AdmittedMax != s.AdmittedMin {
			admitted = fmt.Sprintf("%d-%d", s.AdmittedMin, s.AdmittedMax)
		}
		fmt.Fprintf(&b, "%-20s %-10s %3d %-8s %8s %-11s %6d %4d %9s %14s %6s %13s %4.0f%% %9s %9s %9.0f\n",
			c.Strategy, c.Kind, c.Workers, c.Path, fmtDur(c.RTT), c.Arrival, s.Trials, s.Sent, admitted,
			fmt.Sprintf("%+.1f/%+d", s.OverMean, s.OverMax), model,
			fmt.Sprintf("%.1f/%d", s.WithinMean, s.WithinMax), 100*s.WithinShare,
			fmtDur(s.P50), fmtDur(s.P99), s.Throughput)
	}
	return b.String()
}

// LockstepComparison renders check-then-act's cells under delay beside the
// model: predicted and measured over-admission for each c.
func LockstepComparison(cells []GridPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %8s %5s %3s %-11s %6s %6s %16s %s\n", "path", "rtt", "L", "c", "arrival", "model", "mean", "min..max", "|measured-model| <= 1")
	for _, c := range cells {
		if c.Strategy != (CheckThenAct{}).Name() {
			continue
		}
		s := c.Summarize()
		within := 0
		for _, r := range c.Results {
			if d := r.Over - s.Model; d >= -1 && d <= 1 {
				within++
			}
		}
		fmt.Fprintf(&b, "%-8s %8s %5d %3d %-11s %+6d %+6.1f %16s %d of %d trials\n",
			c.Path, fmtDur(c.RTT), c.Limit, c.Workers, c.Arrival, s.Model, s.OverMean,
			fmt.Sprintf("%+d..%+d", s.OverMin, s.OverMax), within, s.Trials)
	}
	return b.String()
}

// ContentionRatio is Lua's throughput over an optimistic strategy's in the
// same conditions: the mean decisions per second of script (a Lua
// strategy's cell) divided by that of watch (a WATCH/MULTI cell).
func ContentionRatio(script, watch GridPoint) float64 {
	w := watch.Summarize().Throughput
	if w == 0 {
		return 0
	}
	return script.Summarize().Throughput / w
}

// fmtDur prints a duration with three significant digits in ms or µs.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}
