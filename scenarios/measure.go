package scenarios

import (
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
