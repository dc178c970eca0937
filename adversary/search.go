package adversary

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
	"pgregory.net/rapid"
)

// Bounds are what the attacker may send. Every request is on key 0.
type Bounds struct {
	// MaxRequests is the most requests one attack sends (at least 1).
	MaxRequests int
	// Duration is the span of an attack: every request is sent at a true
	// time in [0, Duration] µs (0 puts every request at instant 0).
	Duration int64
	// MaxRate bounds the offered rate, as a multiple of the limit: at most
	// MaxRate·Limit.Rate requests are sent in any window [s, s+W) of the
	// limit's window W (at least 1).
	MaxRate int64
	// Tries is the search's budget of simulated runs: no new round starts
	// once it has used that many (a round under way finishes). 0 means
	// DefaultTries.
	Tries int
}

// DefaultTries is the budget of simulated runs when Bounds.Tries is 0.
const DefaultTries = 20000

// checksPerRound is how many attacks one rapid round draws before it gives
// up on beating the threshold, and breakShrinkTries (climbShrinkTries) how
// many runs rapid may take to shrink the first attack that breaks the
// promise (one that beats the best so far). Once an attack has broken the
// promise, idleRounds rounds in a row that give up end the search; until
// then, only the budget does.
const (
	checksPerRound   = 100
	breakShrinkTries = 1500
	climbShrinkTries = 300
	idleRounds       = 10
	maxRequests      = 1 << 12 // a bound that keeps one round's runs small
)

// Fate is what became of one request of an attack: where and when it
// was decided, and how.
type Fate struct {
	// Node is the node that handled it (0 for Ideal).
	Node int
	// Sent is the true time it was sent, Clock what its node's clock read
	// then (Sent for Ideal), both in µs.
	Sent, Clock int64
	// Decided is the true time it was decided, where the promise is checked
	// (model.Outcome.Decided).
	Decided int64
	// Admitted says whether it was let through; Failed that the limiter
	// answered an error instead of a decision.
	Admitted, Failed bool
}

// Attack is one attack and what the deployment did with it.
type Attack struct {
	// Requests are the attack, sorted by Sent, all on key 0; Node is the
	// node the attacker chose when the Config is Pinned.
	Requests []record.Request
	// Fates is parallel to Requests.
	Fates []Fate
	// Admitted counts the admits.
	Admitted int
	// Excess is how many admits a limiter keeping the promise would have
	// refused (see the package doc): zero exactly when the promise holds.
	Excess int
	// Peak is the most admits in any window [s, s+W) of the limit's window.
	Peak int
	// Violation is the first place the admits break the promise, as the
	// model reports it, or nil.
	Violation *algos.Violation
}

// SearchReport is what a Search found.
type SearchReport struct {
	// Config is the deployment under attack, as given (Requests empty).
	Config model.Config
	// Bounds are the attacker's, with Tries filled in.
	Bounds Bounds
	// Seed is the search's seed.
	Seed uint64
	// Minimal is the fewest requests found that break the promise, shrunk
	// so that removing any one of them keeps the promise; nil when no
	// attack within the bounds broke it.
	Minimal *Attack
	// Strongest is the attack with the largest Excess found, shrunk to the
	// fewest requests that still reach it; when no attack broke the
	// promise, the one with the highest Peak, shrunk the same way.
	Strongest Attack
	// Tries counts the simulated runs, Rounds the rapid rounds.
	Tries, Rounds int
}

// Search looks for the traffic on one key, within b, that makes the
// deployment cfg exceed its limiter's promise, with rapid seeded from seed
// (see the package doc). cfg is every field of a model.Config but Requests
// (which must be empty: the search fills them, on key 0) and Loop (which
// must be empty); with cfg.Pinned the attacker also picks each request's
// node, otherwise the balancer does, from cfg.Seed.
//
// Bad input (an invalid limit, a deployment that does not apply to the
// limiter, a Config the model refuses, bounds out of range) is an error,
// never a panic; an error of the model during the search is returned too.
// The same arguments give the same SearchReport.
func Search(cfg model.Config, b Bounds, seed uint64) (SearchReport, error) {
	s, err := newSearcher(cfg, b)
	if err != nil {
		return SearchReport{}, err
	}
	if !testing.Testing() {
		return SearchReport{}, errors.New("adversary: Search runs rapid, which reads the test flags: call it from a test")
	}
	rep := SearchReport{Config: cfg, Bounds: s.b, Seed: seed}

	// Climb: each round asks rapid for an attack that breaks the promise,
	// and once one has, for one that beats the best score so far (more
	// excess, or as much and a higher peak), and keeps rapid's shrunk
	// counterexample. Once there is a best attack, two rounds in three edit
	// it (the targeting: a search near the best); the third draws afresh.
	// The search ends when its budget is spent, or idleRounds rounds in a
	// row beat nothing after a break.
	var breaking [][]record.Request
	for idle := 0; s.tries < s.b.Tries && idle < idleRounds; {
		draw := s.draw
		if base := s.best.reqs; base != nil && rep.Rounds%3 != 0 {
			draw = func(t *rapid.T) []record.Request { return s.mutate(t, base) }
		}
		threshold, shrink := s.best.score, climbShrinkTries
		if threshold.excess == 0 {
			// A break, first, shrunk in full: the minimal attack's start.
			threshold.peak, shrink = math.MaxInt, breakShrinkTries
		}
		found, sc, err := s.round(roundSeed(seed, rep.Rounds), threshold, shrink, draw)
		rep.Rounds++
		if err != nil {
			return SearchReport{}, err
		}
		if found == nil {
			if threshold.excess > 0 {
				idle++
			}
			continue
		}
		idle = 0
		if sc.excess > 0 {
			breaking = append(breaking, found)
		}
	}

	if len(breaking) > 0 {
		// Our shrink from the first break rapid shrank, from the shortest
		// of the rounds' counterexamples and from the best attack, each
		// dropping the latest requests first and the earliest first:
		// rapid's shrink and ours are greedy, and a different start or
		// order can end shorter. The fewest requests win; the first on a
		// tie.
		starts := [][]record.Request{breaking[0], shortest(breaking), s.best.reqs}
		var min []record.Request
		for i, start := range starts {
			if slices.ContainsFunc(starts[:i], func(r []record.Request) bool { return slices.Equal(r, start) }) {
				continue
			}
			for _, latestFirst := range []bool{true, false} {
				m, err := s.shrink(start, func(sc score) bool { return sc.excess >= 1 }, latestFirst)
				if err != nil {
					return SearchReport{}, err
				}
				if min == nil || len(m) < len(min) {
					min = m
				}
			}
		}
		a, err := s.attack(min)
		if err != nil {
			return SearchReport{}, err
		}
		rep.Minimal = &a
	}

	target := s.best.score
	keep := func(sc score) bool { return sc.excess >= target.excess && sc.peak >= target.peak }
	if target.excess > 0 {
		keep = func(sc score) bool { return sc.excess >= target.excess }
	}
	strongest, err := s.shrink(s.best.reqs, keep, true)
	if err != nil {
		return SearchReport{}, err
	}
	if rep.Strongest, err = s.attack(strongest); err != nil {
		return SearchReport{}, err
	}
	rep.Tries = s.tries
	return rep, nil
}

// Measure plays cfg, whose requests must all be on key 0 (an attack, or
// any trace of one key), and describes what the deployment did with them
// as an Attack: each request's fate, the admits, the Excess and Peak of
// the search's measure, and the model's first violation. An invalid Config
// is an error.
func Measure(cfg model.Config) (Attack, error) {
	if err := cfg.Validate(); err != nil {
		return Attack{}, fmt.Errorf("adversary: %w", err)
	}
	for i, r := range cfg.Requests {
		if r.Key != 0 {
			return Attack{}, fmt.Errorf("adversary: request %d is on key %d; an attack is on key 0", i, r.Key)
		}
	}
	if len(cfg.Loop) > 0 {
		return Attack{}, fmt.Errorf("adversary: the Config has %d closed-loop clients; Measure plays requests alone", len(cfg.Loop))
	}
	s := &searcher{cfg: cfg, promise: cfg.Limiter.Promise(cfg.Limit)}
	reqs := cfg.Requests
	s.cfg.Requests = nil
	return s.attack(reqs)
}

// shortest is the first of the shortest attacks in list.
func shortest(list [][]record.Request) []record.Request {
	best := list[0]
	for _, l := range list[1:] {
		if len(l) < len(best) {
			best = l
		}
	}
	return best
}

// roundSeed is rapid's seed for one round: a mix of the search's seed and
// the round, never 0 (which rapid takes for "pick one at random").
func roundSeed(seed uint64, round int) uint64 {
	z := seed + uint64(round+1)*0x9e3779b97f4a7c15 // splitmix64
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return z
}

// searcher is one search's state: the deployment, the bounds, what the
// best attack seen so far is, and how many runs it took.
type searcher struct {
	cfg       model.Config
	b         Bounds
	promise   algos.Promise
	env       traffic.AttackBounds // the bounds, resolved against the deployment
	landmarks []int64              // true times worth starting an attack near
	gen       generators

	tries int
	best  candidate
	times []int64 // scratch for the measure
}

// candidate is an attack and its measure.
type candidate struct {
	reqs  []record.Request
	score score
}

func newSearcher(cfg model.Config, b Bounds) (*searcher, error) {
	if err := cfg.Limit.Validate(); err != nil {
		return nil, fmt.Errorf("adversary: invalid limit %v: %w", cfg.Limit, err)
	}
	if err := cfg.Limiter.Validate(); err != nil {
		return nil, fmt.Errorf("adversary: %w", err)
	}
	if err := model.Applies(cfg.Limiter, cfg.Deployment); err != nil {
		return nil, fmt.Errorf("adversary: %w", err)
	}
	switch {
	case len(cfg.Requests) > 0:
		return nil, fmt.Errorf("adversary: the Config has %d requests; the search makes its own", len(cfg.Requests))
	case len(cfg.Loop) > 0:
		return nil, fmt.Errorf("adversary: the Config has %d closed-loop clients; the search sends alone", len(cfg.Loop))
	case b.MaxRequests < 1:
		return nil, fmt.Errorf("adversary: MaxRequests is %d; an attack needs at least one request", b.MaxRequests)
	case b.MaxRequests > maxRequests:
		return nil, fmt.Errorf("adversary: MaxRequests of %d is more than the search handles (%d)", b.MaxRequests, maxRequests)
	case b.Duration < 0:
		return nil, fmt.Errorf("adversary: negative duration %d µs", b.Duration)
	case b.Duration > algos.MaxTime/16:
		return nil, fmt.Errorf("adversary: a duration of %d µs is too long for the model", b.Duration)
	case b.MaxRate < 1:
		return nil, fmt.Errorf("adversary: MaxRate is %d; the attacker must be allowed at least the limit's rate", b.MaxRate)
	case b.Tries < 0:
		return nil, fmt.Errorf("adversary: negative budget of %d tries", b.Tries)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("adversary: %w", err)
	}
	if b.Tries == 0 {
		b.Tries = DefaultTries
	}
	promise := cfg.Limiter.Promise(cfg.Limit)
	if v := promise.CheckAdmits(nil); v != nil {
		return nil, fmt.Errorf("adversary: %s's promise under %v cannot judge a run: %v", cfg.Limiter.Name, cfg.Limit, v)
	}
	env := traffic.AttackBoundsFor(cfg.Limit, b.Duration, b.MaxRequests, b.MaxRate, cfg.Nodes)
	s := &searcher{cfg: cfg, b: b, promise: promise, env: env}
	if cfg.Deployment == model.StoreWiped && cfg.WipeAt <= b.Duration {
		s.landmarks = append(s.landmarks, cfg.WipeAt)
	}
	s.gen = s.generators()
	return s, nil
}

// run plays reqs on the deployment and measures the admits of key 0.
func (s *searcher) run(reqs []record.Request) (model.Result, score, error) {
	s.tries++
	cfg := s.cfg
	cfg.Requests = reqs
	res, err := model.Run(cfg)
	if err != nil {
		return model.Result{}, score{}, fmt.Errorf("adversary: the model refused an attack of %d requests: %w", len(reqs), err)
	}
	times := res.AdmitTimes(0)
	sc := score{excess: s.excess(times), peak: algos.MostInAnyWindow(times, s.cfg.Limit.Window)}
	s.consider(reqs, sc)
	return res, sc, nil
}

// consider keeps reqs as the best attack if it beats it: more excess, then
// a higher peak, then fewer requests.
func (s *searcher) consider(reqs []record.Request, sc score) {
	b := s.best
	better := b.reqs == nil || sc.excess > b.score.excess ||
		sc.excess == b.score.excess && (sc.peak > b.score.peak ||
			sc.peak == b.score.peak && len(reqs) < len(b.reqs))
	if better {
		s.best = candidate{reqs: slices.Clone(reqs), score: sc}
	}
}

// attack plays reqs once more and describes the fate of every request.
func (s *searcher) attack(reqs []record.Request) (Attack, error) {
	res, sc, err := s.run(reqs)
	if err != nil {
		return Attack{}, err
	}
	cfg := s.cfg
	cfg.Requests = reqs
	plan, err := model.Plan(cfg)
	if err != nil {
		return Attack{}, fmt.Errorf("adversary: %w", err)
	}
	a := Attack{Requests: slices.Clone(reqs), Fates: make([]Fate, len(reqs)), Excess: sc.excess, Peak: sc.peak}
	for i, o := range res.Outcomes[:len(reqs)] {
		a.Fates[i] = Fate{Node: int(o.Node), Sent: plan[i].Sent, Clock: plan[i].Told,
			Decided: o.Decided, Admitted: o.Admitted, Failed: o.Failed}
		if o.Admitted {
			a.Admitted++
		}
	}
	if len(res.Keys) > 0 {
		a.Violation = res.Keys[0].Violation
	}
	return a, nil
}
