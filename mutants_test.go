package overshoot_test

// A checker that never finds anything proves nothing. Under the mutants'
// conditions (4 nodes, a 1 ms round trip, clocks in agreement, nothing
// restarting, all four clients, 200 seeds of 12 s) every promise must hold
// exactly, so every violation is a bug: the six planted bugs must each be
// caught, and the twelve correct deployments must stay clean on every seed.

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// correctSuspects are the six algorithms behind a store (the script reads
// the store's clock) and the six split correctly across the nodes (each node
// L/N with burst B/N, no restarts).
func correctSuspects() []scenarios.Suspect {
	var out []scenarios.Suspect
	for _, d := range []model.Deployment{model.StoreClock, model.LocalSplit} {
		for _, a := range algos.All() {
			out = append(out, scenarios.Suspect{Algorithm: a, Deployment: d})
		}
	}
	return out
}

// plantedSuspects are four algorithms one line away from correct, behind a
// correct store, and two deployment mistakes of correct algorithms.
func plantedSuspects() []scenarios.Suspect {
	return []scenarios.Suspect{
		{Algorithm: algos.PlantedUncappedTokenBucket, Deployment: model.StoreClock},
		{Algorithm: algos.PlantedGCRAWideTolerance, Deployment: model.StoreClock},
		{Algorithm: algos.PlantedFixedWindowOffByOne, Deployment: model.StoreClock},
		{Algorithm: algos.PlantedSlidingLogTrimsTooMuch, Deployment: model.StoreClock},
		{Name: "fixed-window, GET then decide then SET", Algorithm: algos.FixedWindow, Deployment: model.GetSet},
		{Name: "token-bucket, local, each node the full limit", Algorithm: algos.TokenBucket, Deployment: model.LocalFull},
	}
}

// mutantOptions are HuntOptions; -short keeps 20 of the 200 seeds.
func mutantOptions() scenarios.Options {
	o := scenarios.HuntOptions()
	if testing.Short() {
		o.Seeds = o.Seeds[:20]
	}
	return o
}

func TestMutantsCaughtAndCorrectDeploymentsClean(t *testing.T) {
	o := mutantOptions()
	correct, planted := correctSuspects(), plantedSuspects()
	start := time.Now()
	verdicts, err := scenarios.Hunt(append(correct, planted...), o)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	requests := 0
	for _, v := range verdicts {
		requests += v.Requests
	}
	t.Logf("%d suspects × %d seeds of %s: %d simulated requests in %v (%.1fM requests/s)",
		len(verdicts), len(o.Seeds), algos.FormatMicros(o.Duration), requests, elapsed.Round(time.Millisecond),
		float64(requests)/elapsed.Seconds()/1e6)

	for _, v := range verdicts[:len(correct)] {
		if v.Caught {
			t.Errorf("correct deployment %s broke its promise on %d of %d seeds, first seed %d, %s client: %s",
				v.Suspect, v.SeedsCaught, v.Seeds, v.FirstSeed, v.FirstClient, v.First.Reason)
		}
	}
	caught := 0
	for _, v := range verdicts[len(correct):] {
		if !v.Caught {
			t.Errorf("planted bug %s was not caught on any of %d seeds", v.Suspect, v.Seeds)
			continue
		}
		caught++
		t.Logf("%s: caught on %d of %d seeds, first seed %d: %s", v.Suspect, v.SeedsCaught, v.Seeds, v.FirstSeed, v.First.Reason)
	}
	t.Logf("measured: %d of %d planted bugs caught, %d correct deployments clean, %d seeds", caught, len(planted), len(correct), len(o.Seeds))

	var b bytes.Buffer
	fmt.Fprintf(&b, "overshoot mutants\n\n")
	fmt.Fprintf(&b, "%d nodes, a %s round trip (±%d%% a leg), clocks in agreement, nothing restarting; the four clients\n",
		o.Nodes, algos.FormatMicros(o.RTT), o.Jitter)
	fmt.Fprintf(&b, "at %s, each on its own key; %d seeds of %s. Under these conditions every promise must hold,\n",
		o.Limit, len(o.Seeds), algos.FormatMicros(o.Duration))
	fmt.Fprintf(&b, "so the first %d rows must be clean and the last %d caught.\n\n", len(correct), len(planted))
	if err := scenarios.WriteVerdicts(&b, verdicts); err != nil {
		t.Fatal(err)
	}
	writeShrunkCounterexamples(t, &b, planted)
	if testing.Short() {
		t.Logf("-short: %d seeds, golden/mutants.txt not compared", len(o.Seeds))
		return
	}
	golden.Check(t, "mutants.txt", b.Bytes())
}

// writeShrunkCounterexamples runs the rapid properties on every planted
// algorithm (the deployment mistakes are invisible on one node) and records
// the first property each one breaks, with rapid's shrunk counterexample.
// rapid's seed is fixed here unless -rapid.seed was given, so the file is
// the same on every run.
func writeShrunkCounterexamples(t *testing.T, b *bytes.Buffer, planted []scenarios.Suspect) {
	t.Helper()
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() == "0" {
		if err := f.Value.Set("1"); err != nil {
			t.Fatal(err)
		}
		defer f.Value.Set("0")
	}
	fmt.Fprintf(b, "\nThe same planted algorithms on one node with a true clock: the first property of\nproperties.Check that breaks, and rapid's shrunk counterexample (-rapid.seed=1).\n")
	for _, s := range planted {
		if s.Deployment == model.GetSet || s.Deployment == model.LocalFull {
			continue
		}
		caught := false
		for _, p := range properties.Properties(s.Algorithm) {
			failed, report := properties.Fails(p.Prop, p.Checks)
			if !failed {
				continue
			}
			caught = true
			fmt.Fprintf(b, "\n%s breaks %s (%s)\n", s.Algorithm.Name, p.Name, p.Claim)
			// rapid states the failure, then replays it with the draws; keep
			// its first line and the replay.
			first, _, _ := strings.Cut(report, ":")
			_, replay, _ := strings.Cut(report, "Failed test output:\n")
			fmt.Fprintf(b, "    %s, then shrunk to:\n", first)
			for _, line := range strings.Split(replay, "\n") {
				fmt.Fprintf(b, "    %s\n", line)
			}
			break
		}
		if !caught {
			t.Errorf("no property of properties.Check catches %s on one node", s.Algorithm.Name)
		}
	}
}
