package judge_test

import (
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// A simulated run judged exactly, as the hunt judges each of its runs: a
// token bucket deployed on 4 nodes with the full limit on each, the
// simulator's open-loop clients on seed 1, and the first breach of each
// kind the flood client's requests show: over-admission only, since each
// node's own bucket keeps the rest of the contract (the mutants' golden
// file shows the same window for this deployment).
func ExampleSimulation() {
	l := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(1, l, 3*algos.Second)
	if err != nil {
		panic(err)
	}
	cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Limit: l, Deployment: model.LocalFull,
		Nodes: 4, RTT: 1000, Jitter: model.DefaultJitter, Seed: 1, Requests: requests}
	var sim judge.Simulation
	cfg.Loop = sim.Watch(cfg.Loop) // no closed-loop clients here; a run that has them must be watched
	res, err := model.Run(cfg)
	if err != nil {
		panic(err)
	}
	var found [traffic.NumClients]judge.Kinds
	sim.Judge(&cfg, &res, &found)
	for _, e := range found[traffic.Flood] {
		if e != nil {
			fmt.Printf("%s: %s\n", e.Kind, e.Violation.Reason)
		}
	}
	// Output:
	// over-admission: 122 admits from 0.000054s to 0.219643s (219589µs), but at most 100 + 100·219589µs/1s = 121 are promised
}
