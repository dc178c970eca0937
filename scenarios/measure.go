package scenarios

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/differential"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
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
// run's first limiter error. With hunt, it also holds the run to the rest
// of the contract (judge.Simulation, isolation, clockClaim) and keeps each client's first breach of each kind, and
// leaves each client's Peak and AfterWipe zero (a hunt reads neither).
//
// With a reference (ref, not nil), it also runs ref on the same requests
// and compares the two runs (offReference).
func measure(cfg model.Config, wipeAt int64, hunt bool, ref *limiter.Spec, tolerance int64) (jobRun, error) {
	var out [traffic.NumClients]ClientRun
	sc := runScratchPool.Get().(*runScratch)
	defer sc.giveBack()
	plain := cfg
	if hunt {
		cfg.Loop = sc.sim.Watch(cfg.Loop)
	}
	res := &sc.res
	if err := model.RunInto(cfg, res); err != nil {
		return jobRun{}, err
	}
	var found [traffic.NumClients]judge.Kinds
	if hunt {
		// Each kind of breach is kept apart (judge.Kinds): the rules a
		// run's records show, then keys that share state and a store-clock
		// claim that node clocks can move, each played again.
		sc.sim.Judge(&cfg, res, &found)
		if _, pure := plain.Limiter.Algorithm(); !pure {
			if err := sc.isolation(plain, res, &found); err != nil {
				return jobRun{}, err
			}
		}
		if claimsStoreClock(plain) {
			if err := sc.clockClaim(plain, res, &found); err != nil {
				return jobRun{}, err
			}
		}
	}
	w := cfg.Limit.Window
	for c := range min(traffic.NumClients, len(res.Keys)) {
		out[c] = ClientRun{
			Requests:  res.Keys[c].Requests,
			Admitted:  res.Keys[c].Admitted,
			Errors:    res.Keys[c].Errors,
			Violation: res.Keys[c].Violation,
		}
		if !hunt { // a hunt's verdicts read no peak (Hunt)
			times := res.AdmitTimes(c)
			out[c].Peak = algos.MostInAnyWindow(times, w)
			out[c].AfterWipe = countIn(times, wipeAt, wipeAt+w)
		}
	}
	run := jobRun{clients: out, firstError: res.FirstError, found: found}
	if ref != nil {
		// mine's run is res (the recorders change no decision); only ref's
		// is left to make.
		if err := sc.offReference(plain, res, *ref, tolerance, &run); err != nil {
			return jobRun{}, err
		}
	}
	return run, nil
}

// runScratch is the memory one run works in and drops when it ends: the
// model's Result (model.RunInto), and for a hunted run the judge's memory
// and the runs played again. A hunt plays thousands of runs of some 20,000
// requests each; taking this from a pool instead of allocating it anew for
// every run is most of what keeps the garbage collector out of a hunt's
// time. Nothing in it outlives the run: a ClientRun keeps only numbers and
// the Violation the model allocated, and findings format their own
// strings.
type runScratch struct {
	res      model.Result
	refRes   model.Result                    // the reference's run (offReference)
	sim      judge.Simulation                // the judge of the run, and its memory
	againRes model.Result                    // the run played again (answeredAlike)
	answers  [2][traffic.NumClients][]answer // each client's answers in the two runs (answeredAlike)
}

var runScratchPool = sync.Pool{New: func() any { return new(runScratch) }}

func (sc *runScratch) giveBack() { runScratchPool.Put(sc) }

// scratchPool is the memory a worker makes a seed's requests in, then the
// next seed's (traffic.Scratch).
var scratchPool = sync.Pool{New: func() any { return new(traffic.Scratch) }}

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
	// opts, when set, are the conditions of the job's runs in place of the
	// pipeline's (a curve's point); they share its seeds and requests.
	opts  *Options
	judge bool // hold the runs to the whole contract (Hunt)
	// ref, when set, is the limiter the runs must agree with, within
	// tolerance admits per aligned window (Suspect.Reference).
	ref       *limiter.Spec
	tolerance int64
}

// jobRun is one job on one seed: each client's numbers, the limiter's first
// error, or, when the column cannot hold the limiter, why (and no run).
type jobRun struct {
	clients       [traffic.NumClients]ClientRun
	firstError    error
	notApplicable string
	found         [traffic.NumClients]judge.Kinds // hunted runs: each client's first breach of each kind
}

// runJobs is the pipeline RunMatrix, RunCurve and Hunt share: the traffic
// of every seed of o (validated by the caller), then every job on every
// seed, in parallel on o.Workers goroutines. Run (j, s) is at index
// j·len(o.Seeds) + s, whatever the number of workers; the error is the one
// of the lowest index, naming the job and the seed. A job whose column does
// not apply to its limiter is not run: its runs say why.
func (o Options) runJobs(jobs []job) ([]jobRun, error) {
	ns, nj := len(o.Seeds), len(jobs)
	runs := make([]jobRun, nj*ns)
	play := func(i int, requests []record.Request) error {
		j, s := jobs[i/ns], i%ns
		var na *model.NotApplicableError
		if err := model.Applies(j.spec, j.col.Deployment); errors.As(err, &na) {
			runs[i].notApplicable = na.Reason
			return nil
		}
		jo := o
		if j.opts != nil {
			jo = *j.opts
		}
		cfg := jo.config(j.spec, j.col, o.Seeds[s], requests)
		run, err := measure(cfg, jo.WipeAt, j.judge, j.ref, j.tolerance)
		if err != nil {
			return fmt.Errorf("scenarios: %s, seed %d: %w", j.label, o.Seeds[s], err)
		}
		runs[i] = run
		return nil
	}
	// Played seed by seed, every job in turn, so that a worker's runs of a
	// seed follow each other and the model, which remembers the last plan
	// and legs it drew, draws a seed's once for most of its jobs; kept, and
	// the first error taken, by run index. With seeds enough to keep every
	// worker busy (a hunt's 200), a worker takes a whole seed at once: it
	// makes the seed's requests (in the memory of the seed it played
	// before), draws their plan and legs, and plays every job on them, all
	// in its own core's cache; otherwise every seed's requests are made
	// first, and the workers share out the runs.
	errs := make([]error, len(runs))
	if workers := o.workers(); ns >= 8*workers {
		// The requests' every error is one of the options, the same for
		// every seed: found here, it is the one Make would return.
		if err := traffic.CheckOpenLoop(o.Limit, o.Duration); err != nil {
			return nil, err
		}
		o.parallel(ns, func(s int) error {
			sc := scratchPool.Get().(*traffic.Scratch)
			defer scratchPool.Put(sc)
			requests, err := sc.Make(o.Seeds[s], o.Limit, o.Duration, o.Edge)
			if err != nil { // not for options CheckOpenLoop passed
				for j := range nj {
					errs[j*ns+s] = err
				}
				return nil
			}
			for j := range nj {
				i := j*ns + s
				errs[i] = play(i, requests)
			}
			return nil
		})
	} else {
		requests, err := o.requests()
		if err != nil {
			return nil, err
		}
		o.parallel(len(runs), func(t int) error {
			i := (t%nj)*ns + t/nj
			errs[i] = play(i, requests[i%ns])
			return nil
		})
	}
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return runs, nil
}

// offReference compares mine, the run of cfg, with ref's on the same
// requests (made here, in sc) and, when some key's aligned window is more
// than tolerance apart (either way), records a breach.OffReference finding for
// the client of the worst such window, unless that client already has a
// breach of its own. What differential.Run would report, without running
// mine again.
func (sc *runScratch) offReference(cfg model.Config, mine *model.Result, ref limiter.Spec, tolerance int64, run *jobRun) error {
	rep, err := differential.RunAgainst(cfg.Limiter, ref, cfg, mine, &sc.refRes)
	if err != nil {
		return err
	}
	// Limiter errors are counted by the hunt already; here only admits count.
	var past *differential.BoundError
	if !errors.As(rep.Check(differential.Bound{Over: tolerance, Under: tolerance, Errors: math.MaxInt64}), &past) {
		return nil
	}
	row := past.Window
	if row.Key >= 0 && row.Key < traffic.NumClients {
		run.found[row.Key].Keep(&judge.Evidence{Kind: breach.OffReference, Violation: &algos.Violation{From: row.Start, To: row.End, Admits: row.Mine, Allowed: row.Ref, Reason: past.Error()}})
	}
	return nil
}
