package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
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
// run's first limiter error. With judge, it also holds the run to the rest
// of the contract (judge.go) and keeps each client's first breach of each kind, and
// leaves each client's Peak and AfterWipe zero (a hunt reads neither).
//
// With a reference (ref, not nil), it also runs ref on the same requests
// and compares the two runs (offReference).
func measure(cfg model.Config, wipeAt int64, judge bool, ref *limiter.Spec, tolerance int64) (jobRun, error) {
	var out [traffic.NumClients]ClientRun
	sc := judgeScratchPool.Get().(*judgeScratch)
	defer sc.giveBack()
	plain := cfg
	if judge {
		cfg.Loop = sc.record(cfg.Loop)
	}
	res := &sc.res
	if err := model.RunInto(cfg, res); err != nil {
		return jobRun{}, err
	}
	var found [traffic.NumClients]kinds
	if judge {
		v := newRunView(&cfg, res)
		// Each kind of breach is kept apart (kinds): answers no limiter
		// may give, admits past the promise with the window that shows
		// them, the rest of the contract, keys that share state, and a
		// store-clock claim that node clocks can move.
		for c := range min(traffic.NumClients, len(res.Keys)) {
			if viol := res.Keys[c].Violation; viol != nil {
				found[c][breach.OverAdmission] = sc.overAdmission(&v, c, viol)
			}
		}
		// The bad answers are counted on honesty's pass where there is
		// one (each kind is kept apart, so the order they are found in
		// does not matter).
		var bad badTally
		bad.reset(&v, &sc.latest)
		if judgeable(cfg) {
			sc.judgeContract(&cfg, &v, &found, &bad)
		}
		if !bad.done {
			bad.countAll(&v)
		}
		bad.findings(&v, &found)
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
		if !judge { // a hunt's verdicts read no peak (Hunt)
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

// judgeContract holds a judgeable run (v, of cfg) to honesty, its
// Remainings and Resets, and its Retry-Afters, keeping each client's first
// breach of each kind in found, and counts its bad answers into bad on
// the same pass when it can (bad.done).
func (sc *judgeScratch) judgeContract(cfg *model.Config, v *runView, found *[traffic.NumClients]kinds, bad *badTally) {
	if !sc.honestyAndBad(cfg.Limiter, *cfg, v, found, bad) {
		all := sc.requestsOf(*cfg, v.res)
		honesty(cfg.Limiter, *cfg, all, sc.byInstance(all), found)
	}
	if !sc.retriesInOrder(v, found) {
		mine := sc.sentBy(v)
		for _, lc := range cfg.Loop {
			if lc.Key >= 0 && lc.Key < traffic.NumClients {
				retries(mine[lc.Key], lc.Key, sc.retryAfter[lc.Key], found)
			}
		}
	}
}

// judgeScratch is the memory one run works in and drops when it ends: the
// model's Result (model.RunInto), and for a judged run the Retry-After of
// every answer each closed-loop client was handed, the requests as the
// judge sees them, and their grouping. A hunt plays thousands of runs of
// some 20,000 requests each; taking this from a pool instead of allocating
// it anew for every run is most of what keeps the garbage collector out of
// a hunt's time. Nothing in it outlives the run: a ClientRun keeps only
// numbers and the Violation the model allocated, and findings format their
// own strings.
type judgeScratch struct {
	res        model.Result
	refRes     model.Result                // the reference's run (offReference)
	retryAfter [traffic.NumClients][]int64 // per closed-loop key, each answer's Retry-After, in the order sent
	all        []judged
	keys       []int64   // sort keys (byInstance)
	order      []int32   // request indices grouped by instance (byInstance)
	groups     [][]int32 // each instance's part of order
	starts     []int32
	states     []instanceState                 // honestyInOrder
	mine       [traffic.NumClients][]judged    // each closed-loop client's requests, in the order sent (sentBy)
	againRes   model.Result                    // the run played again (answeredAlike)
	answers    [2][traffic.NumClients][]answer // each client's answers in the two runs (answeredAlike)
	over       []judged                        // an over-admitting client's admits in the window (overAdmission)
	latest     []int64                         // each instance's latest told time (badTally)
}

var judgeScratchPool = sync.Pool{New: func() any { return new(judgeScratch) }}

func (sc *judgeScratch) giveBack() {
	for k := range sc.retryAfter {
		sc.retryAfter[k] = sc.retryAfter[k][:0]
	}
	judgeScratchPool.Put(sc)
}

// scratchPool is the memory a worker makes a seed's requests in, then the
// next seed's (traffic.Scratch).
var scratchPool = sync.Pool{New: func() any { return new(traffic.Scratch) }}

// record is loop with each client wrapped to keep, in sc.retryAfter[its
// key], the Retry-After of every answer it is handed (all the judge reads
// of an answer: retries).
func (sc *judgeScratch) record(loop []record.LoopClient) []record.LoopClient {
	out := slices.Clone(loop)
	for i, lc := range out {
		if lc.Key < 0 || lc.Key >= traffic.NumClients {
			continue
		}
		inner, dst := lc.New, &sc.retryAfter[lc.Key]
		*dst = (*dst)[:0]
		out[i].New = func() record.Client {
			c := inner()
			if own, ok := c.(traffic.RetryAfterKeeper); ok {
				own.KeepRetryAfters(dst) // one of package traffic's clients: it keeps them itself
				return c
			}
			return &recorder{Client: c, retryAfter: dst}
		}
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
	found         [traffic.NumClients]kinds // judged runs: each client's first breach of each kind
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
