package scenarios

import (
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
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
}

// label is how reports name the suspect.
func (s Suspect) label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Limiter.Name + ", " + s.Deployment.String()
}

// HuntOptions are the mutants' conditions: 4 nodes, a 1 ms round trip
// (±25% a leg), clocks in agreement, nothing restarting, the five clients at
// 100 per second, 200 seeds of 12 s each. Only the deployment's own mistake
// or the algorithm's own bug can break a promise under them.
func HuntOptions() Options {
	o := DefaultOptions()
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
	// Caught is true when at least one seed's run broke the promise.
	Caught bool
	// SeedsCaught of Seeds runs broke it; FirstSeed is the first seed, in
	// the order of Options.Seeds, that did (0 when none), FirstClient its
	// first broken client, and First its first violation, with the reason
	// in words.
	SeedsCaught, Seeds int
	FirstSeed          uint64
	FirstClient        Client
	First              *algos.Violation
	// Requests is how many requests the hunt simulated, for throughput.
	Requests int
	// Errors is how many of them the limiter answered with an error, and
	// FirstError the first, in seed order. A suspect with errors was not
	// judged on those requests: a hunt that must be clean needs none.
	Errors     int
	FirstError error
}

// Hunt runs every suspect on every seed of o (all five clients, each on its
// own key) and reports, per suspect, whether the algorithm's promise was
// broken, first where and how often. Skew and RestartEvery of o apply to
// every suspect; HuntOptions sets both to zero. The verdicts depend on the
// suspects and o alone, not on o.Workers.
func Hunt(suspects []Suspect, o Options) ([]Verdict, error) {
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
		jobs[i] = job{spec: s.Limiter, col: col, label: "hunting " + s.label()}
	}
	ns := len(o.Seeds)
	runs, err := o.runJobs(jobs)
	if err != nil {
		return nil, err
	}
	verdicts := make([]Verdict, len(suspects))
	for i, s := range suspects {
		v := Verdict{Suspect: s.label(), Seeds: ns}
		for j, run := range runs[i*ns : (i+1)*ns] {
			broken := false
			if v.FirstError == nil {
				v.FirstError = run.firstError
			}
			for _, c := range o.Clients() {
				cr := run.clients[c]
				v.Requests += cr.Requests
				v.Errors += cr.Errors
				if cr.Violation == nil || broken {
					continue
				}
				broken = true
				if !v.Caught {
					v.Caught, v.FirstSeed, v.FirstClient, v.First = true, o.Seeds[j], c, cr.Violation
				}
			}
			if broken {
				v.SeedsCaught++
			}
		}
		verdicts[i] = v
	}
	return verdicts, nil
}
