package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// A hunt asks one question of a deployed algorithm: under conditions where
// its promise must hold exactly, does any run break it? It is how overshoot
// checks its own checker (planted bugs must be caught, correct deployments
// must stay clean), and how a user checks a limiter of their own.

// Suspect is a limiter deployed one way, to be hunted for violations.
type Suspect struct {
	// Name labels the suspect in reports; empty means "limiter, deployment".
	Name string
	// Limiter is the limiter under suspicion, with its promise.
	Limiter limiter.Spec
	// Deployment is how it is deployed for the hunt; it must apply to the
	// limiter (model.Applies).
	Deployment model.Deployment
	// Reference, when it has a Name, is the limiter the suspect must agree
	// with: on every seed both run on the same requests in the same
	// deployment (package differential), and a key's aligned window where
	// they admit more than Tolerance apart, either way, is a breach
	// (breach.OffReference). It is how a bug that keeps the promise but is not
	// the algorithm it claims to be (a sliding counter's estimate) is seen.
	Reference limiter.Spec
	// Tolerance is how many admits per aligned window the suspect may
	// differ from its Reference.
	Tolerance int64
}

// label is how reports name the suspect.
func (s Suspect) label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Limiter.Name + ", " + s.Deployment.String()
}

// Breaches lists every kind of breach a hunt judges, in the order its
// reports print them (see package breach): OverAdmission,
// HonestTurnedAway, RetryDenied, RetryExtended, OffReference, BadAnswer,
// RemainingTooHigh, ResetTooShort, ResetPastIdle, KeysShareState and
// ReadsNodeClock. The rules a run's records show are judge.Simulation's
// (see Judge); the others play the run again. Here:
//
//   - HonestTurnedAway is not judged for a Conservative limiter or a
//     promise with no envelope; RemainingTooHigh and ResetTooShort are
//     judged wherever honesty is, Conservative limiters included
//     (refusing more than the promise asks is a design, promising more
//     than it allows is not), and an admit at the very instant of an
//     answer of Remaining 0 is RemainingTooHigh too (nothing can have
//     refilled it);
//   - RetryDenied and RetryExtended are judged on a closed-loop client's
//     next request after a denial, on the same instance;
//   - OffReference compares with Suspect.Reference, past the suspect's
//     tolerance;
//   - BadAnswer is judged in every deployment (an answer's sense does not
//     depend on where the state lives), a Retry-After past the Reset
//     included; a limiter's panic (limiter.Panic) is one, an error it
//     returns is counted in Verdict.Errors instead;
//   - ResetPastIdle is judged in every deployment too, against the
//     instance's promise's longest idle plus how far the instance had
//     been told ahead of the caller, for a limiter that is not
//     Conservative and whose promise is built in;
//   - KeysShareState (isolation) and ReadsNodeClock (clockClaim: node
//     clocks ±60 s apart, in the deployments with nodes) are judged for a
//     limiter that is not a pure algorithm.
func Breaches() []breach.Kind {
	return slices.Clone(huntedKinds[:])
}

var huntedKinds = [...]breach.Kind{breach.OverAdmission, breach.HonestTurnedAway, breach.RetryDenied, breach.RetryExtended,
	breach.OffReference, breach.BadAnswer, breach.RemainingTooHigh, breach.ResetTooShort, breach.ResetPastIdle,
	breach.KeysShareState, breach.ReadsNodeClock}

// HuntOptions are the mutants' conditions: 4 nodes, a 1 ms round trip
// (±25% a leg), clocks in agreement, nothing restarting, every client (the
// five open-loop ones, the three closed-loop ones and the edge prober) at
// 100 per second, 200 seeds of 12 s each. Only the deployment's own mistake
// or the limiter's own bug can break its contract under them.
func HuntOptions() Options {
	o := DefaultOptions()
	o.Edge = true
	o.Duration = 12 * algos.Second
	o.WipeAt = o.Duration / 2 // unused: no suspect deployment wipes unless asked
	o.Skew, o.RestartEvery = 0, 0
	o.Seeds = make([]uint64, 200)
	for i := range o.Seeds {
		o.Seeds[i] = uint64(i + 1)
	}
	return o
}

// Verdict is what a hunt found for one suspect.
type Verdict struct {
	// Suspect is the suspect's name, or "algorithm, deployment".
	Suspect string
	// Caught is true when at least one seed's run broke the contract:
	// the promise, or any other breach.Kind.
	Caught bool
	// SeedsCaught of Seeds runs broke it; FirstSeed is the first seed, in
	// the order of Options.Seeds, that did (0 when none), FirstClient its
	// first broken client, FirstBreach how, and First where, with the
	// reason in words.
	SeedsCaught, Seeds int
	FirstSeed          uint64
	FirstClient        traffic.ClientKind
	FirstBreach        breach.Kind
	First              *algos.Violation
	// Trace is the requests that show the first breach, one a line, where
	// the judge keeps them (an honest request turned away, a retry); empty
	// otherwise.
	Trace []string
	// SeedsBy counts, per breach.Kind, the seeds whose run showed it, and
	// FirstBy is its first example (nil for a kind never seen), found as
	// the first breach is: in seed order, then client order.
	SeedsBy [breach.NumKinds]int
	FirstBy [breach.NumKinds]*Example
	// Requests is how many requests the hunt simulated, for throughput.
	Requests int
	// Errors is how many of them the limiter answered with an error, and
	// FirstError the first, in seed order. A suspect with errors was not
	// judged on those requests: a hunt that must be clean needs none.
	Errors     int
	FirstError error
}

// Example is one breach a hunt found: the seed and the client whose run
// showed it, where and why, and the requests that show it where the judge
// keeps them.
type Example struct {
	Seed      uint64
	Client    traffic.ClientKind
	Violation *algos.Violation
	Trace     []string
}

// Hunt runs every suspect on every seed of o (every client of o, each on
// its own key) and reports, per suspect, whether the limiter's contract was
// broken, first where and how, and how often: its promise (over-admission),
// and, where the deployment keeps each limiter's state for the whole run, an
// honest request turned away and the Retry-After client's retries (see
// breach.Kind). Skew and RestartEvery of o apply to
// every suspect; HuntOptions sets both to zero. The verdicts depend on the
// suspects and o alone, not on o.Workers.
func Hunt(suspects []Suspect, o Options) ([]Verdict, error) {
	seeds, err := huntSeeds(suspects, o)
	if err != nil {
		return nil, err
	}
	verdicts := make([]Verdict, len(suspects))
	for i, s := range suspects {
		verdicts[i] = foldVerdicts(s.label(), seeds[i])
	}
	return verdicts, nil
}

// huntSeeds is Hunt seed by seed: per suspect, its verdict on each seed of
// o alone, in the order of o.Seeds. A shard of a hunt keeps these
// (Shard.Hunt), and foldVerdicts makes Hunt's verdicts of them.
func huntSeeds(suspects []Suspect, o Options) ([][]Verdict, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(suspects) == 0 {
		return nil, errors.New("scenarios: no suspects to hunt")
	}
	// One algorithm may be a suspect in several deployments, so names may
	// repeat: each suspect is checked alone.
	jobs := make([]job, len(suspects))
	for i, s := range suspects {
		if err := checkLimiter(i, s.Limiter); err != nil {
			return nil, err
		}
		if err := model.Applies(s.Limiter, s.Deployment); err != nil {
			return nil, fmt.Errorf("scenarios: suspect %q: %w", s.label(), err)
		}
		col := Column{Name: s.Deployment.String(), Deployment: s.Deployment, Skew: o.Skew, RestartEvery: o.RestartEvery}
		jobs[i] = job{spec: s.Limiter, col: col, label: "hunting " + s.label(), judge: true}
		if s.Reference.Name != "" {
			if err := s.Reference.Validate(); err != nil {
				return nil, fmt.Errorf("scenarios: suspect %q: reference: %w", s.label(), err)
			}
			if s.Tolerance < 0 {
				return nil, fmt.Errorf("scenarios: suspect %q: a negative tolerance of %d", s.label(), s.Tolerance)
			}
			ref := s.Reference
			jobs[i].ref, jobs[i].tolerance = &ref, s.Tolerance
		}
	}
	ns := len(o.Seeds)
	runs, err := o.runJobs(jobs)
	if err != nil {
		return nil, err
	}
	out, clients := make([][]Verdict, len(suspects)), o.Clients()
	for i, s := range suspects {
		out[i] = make([]Verdict, ns)
		for j, run := range runs[i*ns : (i+1)*ns] {
			out[i][j] = seedVerdict(s.label(), o.Seeds[j], run, clients)
		}
	}
	return out, nil
}

// seedVerdict is the verdict of one run, on seed, of the given clients:
// the first breach in client order, then breach order.
func seedVerdict(suspect string, seed uint64, run jobRun, clients []traffic.ClientKind) Verdict {
	v := Verdict{Suspect: suspect, Seeds: 1, FirstError: run.firstError}
	for _, c := range clients {
		cr := run.clients[c]
		v.Requests += cr.Requests
		v.Errors += cr.Errors
		for _, f := range run.found[c] {
			if f == nil {
				continue
			}
			if v.FirstBy[f.Kind] == nil {
				v.SeedsBy[f.Kind] = 1
				v.FirstBy[f.Kind] = &Example{Seed: seed, Client: c, Violation: f.Violation, Trace: f.Trace}
			}
			if !v.Caught {
				v.Caught, v.SeedsCaught = true, 1
				v.FirstSeed, v.FirstClient, v.FirstBreach, v.First, v.Trace = seed, c, f.Kind, f.Violation, f.Trace
			}
		}
	}
	return v
}

// foldVerdicts is one suspect's verdict over several seeds from its
// verdicts on each (seedVerdict), in seed order: counts add up, and each
// first is the first seed's that has one.
func foldVerdicts(suspect string, seeds []Verdict) Verdict {
	v := Verdict{Suspect: suspect}
	for _, s := range seeds {
		v.Seeds += s.Seeds
		v.SeedsCaught += s.SeedsCaught
		v.Requests += s.Requests
		v.Errors += s.Errors
		if v.FirstError == nil {
			v.FirstError = s.FirstError
		}
		if s.Caught && !v.Caught {
			v.Caught, v.FirstSeed, v.FirstClient, v.FirstBreach, v.First, v.Trace = true, s.FirstSeed, s.FirstClient, s.FirstBreach, s.First, s.Trace
		}
		for b, n := range s.SeedsBy {
			v.SeedsBy[b] += n
			if v.FirstBy[b] == nil {
				v.FirstBy[b] = s.FirstBy[b]
			}
		}
	}
	return v
}
