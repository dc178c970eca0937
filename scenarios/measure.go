package scenarios

import (
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// ClientRun is one client's numbers in one run.
type ClientRun struct {
	// Requests is how many requests the client sent, Admitted how many of
	// them the deployment let through.
	Requests, Admitted int
	// Peak is the most admits in any window [s, s+W) of the limit's window,
	// by true decision time.
	Peak int
	// AfterWipe is the admits in [WipeAt, WipeAt+W), whether or not this
	// run's store was wiped, to compare a wiped run with the ideal one.
	AfterWipe int
	// Violation is the first break of the algorithm's promise, or nil.
	Violation *algos.Violation
}

// measure plays one configuration and summarizes it per client.
func measure(cfg model.Config, wipeAt int64) ([NumClients]ClientRun, error) {
	var out [NumClients]ClientRun
	res, err := model.Run(cfg)
	if err != nil {
		return out, err
	}
	w := cfg.Limit.Window
	for c := range min(NumClients, len(res.Keys)) {
		times := res.AdmitTimes(c)
		out[c] = ClientRun{
			Requests:  res.Keys[c].Requests,
			Admitted:  res.Keys[c].Admitted,
			Peak:      algos.MostInAnyWindow(times, w),
			AfterWipe: countIn(times, wipeAt, wipeAt+w),
			Violation: res.Keys[c].Violation,
		}
	}
	return out, nil
}

// countIn counts the sorted times in [from, to).
func countIn(sorted []int64, from, to int64) int {
	lo, _ := slices.BinarySearch(sorted, from)
	hi, _ := slices.BinarySearch(sorted, to)
	return hi - lo
}

// job is one algorithm in one column: what the pipeline runs on every seed.
// label names it in errors.
type job struct {
	algo  algos.Algorithm
	col   Column
	label string
}

// runJobs is the pipeline RunMatrix, RunSweep and Hunt share: the traffic
// of every seed of o (validated by the caller), then every job on every
// seed, in parallel on o.Workers goroutines. Run (j, s) is at index
// j·len(o.Seeds) + s, whatever the number of workers; the error is the one
// of the lowest index, naming the job and the seed.
func (o Options) runJobs(jobs []job) ([][NumClients]ClientRun, error) {
	traffic, err := o.traffic()
	if err != nil {
		return nil, err
	}
	ns := len(o.Seeds)
	runs := make([][NumClients]ClientRun, len(jobs)*ns)
	err = o.parallel(len(runs), func(i int) error {
		j, s := jobs[i/ns], i%ns
		clients, err := measure(o.config(j.algo, j.col, o.Seeds[s], traffic[s]), o.WipeAt)
		if err != nil {
			return fmt.Errorf("scenarios: %s, seed %d: %w", j.label, o.Seeds[s], err)
		}
		runs[i] = clients
		return nil
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}
