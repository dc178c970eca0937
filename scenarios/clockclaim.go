package scenarios

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// A limiter that claims the store's clock (limiter.StoreClock) is run in
// the deployments where nodes' clocks cannot reach it, and the judge holds
// it to nothing about skew. The claim is the user's word: a script that
// takes the time its node sends (ARGV) while its Spec says it reads TIME
// admits as many as the nodes' clocks let it. So the judge plays each such
// run again with the nodes' clocks ±60 s apart (the simulator gives every
// call the node's time, limiter.NodeTime) and holds every client to being
// answered exactly as it was: the store's clock did not move.

// clockClaimSkew is how far from true time the second run puts the nodes'
// clocks, each way: far past any window a test uses, so that a limiter
// deciding by them cannot answer alike by chance.
const clockClaimSkew = 60 * algos.Second

// claimsStoreClock is true for a run whose limiter must be played again
// with skewed clocks: a store-clock limiter that is not a pure algorithm
// (the model's store reads its own clock), deployed behind nodes.
func claimsStoreClock(cfg model.Config) bool {
	_, pure := cfg.Limiter.Algorithm()
	return !pure && cfg.Limiter.Clock == limiter.StoreClock && cfg.Deployment != model.Ideal
}

// clockClaim plays plain (a judged run's Config, without the judge's
// recorders; res is its run) again with the nodes' clocks clockClaimSkew
// either side of true time (one node: ahead by it), and gives each client
// answered otherwise a breach.ReadsNodeClock finding at its first difference.
func (sc *runScratch) clockClaim(plain model.Config, res *model.Result, out *[traffic.NumClients]judge.Kinds) error {
	skewed := plain
	if plain.Nodes > 1 {
		skewed.Skew = 2 * clockClaimSkew
		if plain.Skew == skewed.Skew {
			skewed.Skew = 0
		}
	} else {
		skewed.Clocks.Steps = append(append([]model.Step(nil), plain.Clocks.Steps...), model.Step{Clock: 0, At: 0, By: clockClaimSkew})
	}
	return sc.answeredAlike(plain, res, skewed, playedAgain{
		kind:  breach.ReadsNodeClock,
		what:  "the nodes' clocks ±60 s apart",
		why:   "when the nodes' clocks were set ±60 s apart: it claims the store's clock but decides by a time its node sends",
		first: "clocks as run", second: "clocks ±60 s",
	}, out)
}
