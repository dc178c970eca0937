package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
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
	// Errors is how many of the client's requests the limiter answered with
	// an error: neither admitted nor denied.
	Errors int
	// Violation is the first break of the limiter's promise, or nil.
	Violation *algos.Violation
}

// measure plays one configuration and summarizes it per client, with the
// run's first limiter error. With judge, it also holds the run to the rest
// of the contract (judge.go) and keeps each client's first breach.
func measure(cfg model.Config, wipeAt int64, judge bool) (jobRun, error) {
	var out [NumClients]ClientRun
	var replies [NumClients][]model.Reply
	if judge {
		cfg.Loop = recordReplies(cfg.Loop, &replies)
	}
	res, err := model.Run(cfg)
	if err != nil {
		return jobRun{}, err
	}
	var found [NumClients]*finding
	if judge && judgeable(cfg) {
		all := requestsOf(cfg, res)
		honesty(cfg.Limiter, cfg, all, byInstance(all), &found)
		for _, lc := range cfg.Loop {
			retries(all, lc.Key, replies[lc.Key], &found)
		}
	}
	w := cfg.Limit.Window
	for c := range min(NumClients, len(res.Keys)) {
		times := res.AdmitTimes(c)
		out[c] = ClientRun{
			Requests:  res.Keys[c].Requests,
			Admitted:  res.Keys[c].Admitted,
			Peak:      algos.MostInAnyWindow(times, w),
			AfterWipe: countIn(times, wipeAt, wipeAt+w),
			Errors:    res.Keys[c].Errors,
			Violation: res.Keys[c].Violation,
		}
	}
	return jobRun{clients: out, firstError: res.FirstError, found: found}, nil
}

// recordReplies is loop with each client wrapped to keep, in into[its
// key], every answer it is handed.
func recordReplies(loop []model.LoopClient, into *[NumClients][]model.Reply) []model.LoopClient {
	out := slices.Clone(loop)
	for i, lc := range out {
		if lc.Key < 0 || lc.Key >= NumClients {
			continue
		}
		inner, dst := lc.New, &into[lc.Key]
		out[i].New = func() model.Client { return recorder{Client: inner(), replies: dst} }
	}
	return out
}

// countIn counts the sorted times in [from, to).
func countIn(sorted []int64, from, to int64) int {
	lo, _ := slices.BinarySearch(sorted, from)
	hi, _ := slices.BinarySearch(sorted, to)
	return hi - lo
}

// job is one limiter in one column: what the pipeline runs on every seed.
// label names it in errors.
type job struct {
	spec  limiter.Spec
	col   Column
	label string
	judge bool // hold the runs to the whole contract (Hunt)
	// ref, when set, is the limiter the runs must agree with, within
	// tolerance admits per aligned window (Suspect.Reference).
	ref       *limiter.Spec
	tolerance int64
}

// jobRun is one job on one seed: each client's numbers, the limiter's first
// error, or, when the column cannot hold the limiter, why (and no run).
type jobRun struct {
	clients       [NumClients]ClientRun
	firstError    error
	notApplicable string
	found         [NumClients]*finding // judged runs: each client's first breach beyond the promise
}

// runJobs is the pipeline RunMatrix, RunSweep and Hunt share: the traffic
// of every seed of o (validated by the caller), then every job on every
// seed, in parallel on o.Workers goroutines. Run (j, s) is at index
// j·len(o.Seeds) + s, whatever the number of workers; the error is the one
// of the lowest index, naming the job and the seed. A job whose column does
// not apply to its limiter is not run: its runs say why.
func (o Options) runJobs(jobs []job) ([]jobRun, error) {
	traffic, err := o.traffic()
	if err != nil {
		return nil, err
	}
	ns := len(o.Seeds)
	runs := make([]jobRun, len(jobs)*ns)
	err = o.parallel(len(runs), func(i int) error {
		j, s := jobs[i/ns], i%ns
		var na *model.NotApplicableError
		if err := model.Applies(j.spec, j.col.Deployment); errors.As(err, &na) {
			runs[i].notApplicable = na.Reason
			return nil
		}
		cfg := o.config(j.spec, j.col, o.Seeds[s], traffic[s])
		run, err := measure(cfg, o.WipeAt, j.judge)
		if err == nil && j.ref != nil {
			err = offReference(cfg, *j.ref, j.tolerance, &run)
		}
		if err != nil {
			return fmt.Errorf("scenarios: %s, seed %d: %w", j.label, o.Seeds[s], err)
		}
		runs[i] = run
		return nil
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}
