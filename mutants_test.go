package overshoot_test

// A checker that never finds anything proves nothing. Under the mutants'
// conditions (4 nodes, a 1 ms round trip, clocks in agreement, nothing
// restarting, all nine clients, 200 seeds of 12 s) every limiter must keep
// its whole contract, so every breach is a bug: each planted bug must be
// caught (plantedSuspects), the contract bugs by their own breach on at
// least 95% of the seeds (contractBugs), and the twelve correct
// deployments must stay clean on every seed.

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/differential"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
	"github.com/overshoot-go/overshoot/traffic"
)

// correctSuspects are the six algorithms behind a store (the script reads
// the store's clock) and the six split correctly across the nodes (each node
// L/N with burst B/N, no restarts).
func correctSuspects() []scenarios.Suspect {
	var out []scenarios.Suspect
	for _, d := range []model.Deployment{model.StoreClock, model.LocalSplit} {
		for _, a := range algos.All() {
			out = append(out, scenarios.Suspect{Limiter: limiter.FromAlgorithm(a), Deployment: d})
		}
	}
	return out
}

// plantedSuspects are four algorithms one line away from correct that
// admit too much, behind a correct store; those that break the contract
// without breaking the promise: a window one µs off (deployed local, where
// each node decides at the µs it was sent, and again behind a store, where
// a jittered leg blurs the µs and it is seldom seen), a burst one short, a
// Retry-After rounded down, and a sliding counter whose estimate is wrong,
// judged against the real one, a Reset from a whole-second Unix time (a
// wait in the past), a Reset past the longest idle (the tolerance counted
// twice), a Remaining read before the admit took its token, a Reset from
// the wrong edge of the window, a keyed limiter whose keys 1024
// apart share a bucket; and two deployment mistakes of correct algorithms.
func plantedSuspects() []scenarios.Suspect {
	return []scenarios.Suspect{
		{Limiter: limiter.FromAlgorithm(planted.UncappedTokenBucket), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.GCRAWideTolerance), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.FixedWindowOffByOne), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.SlidingLogTrimsTooMuch), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.FixedWindowShifted), Deployment: model.LocalSplit},
		{Limiter: limiter.FromAlgorithm(planted.FixedWindowShifted), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.TokenBucketBurstOneShort), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.GCRARetryAfterFloored), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.SlidingCounterWrongWeight), Deployment: model.StoreClock,
			Reference: limiter.FromAlgorithm(algos.SlidingCounter)},
		{Limiter: limiter.FromAlgorithm(planted.GCRAResetWholeSeconds), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.GCRAResetPlusTolerance), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.TokenBucketRemainingBeforeTake), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(planted.FixedWindowResetFromStart), Deployment: model.StoreClock},
		{Limiter: planted.KeysShareBuckets(), Deployment: model.StoreClock},
		{Limiter: planted.StoreClockClaimReadsNode(), Deployment: model.StoreClock},
		{Name: "fixed-window, GET then decide then SET", Limiter: limiter.FromAlgorithm(algos.FixedWindow), Deployment: model.GetSet},
		{Name: "token-bucket, local, each node the full limit", Limiter: limiter.FromAlgorithm(algos.TokenBucket), Deployment: model.LocalFull},
	}
}

// claimsStoreClockReadsNode is the planted bug only clocks apart can show.
var claimsStoreClockReadsNode = planted.StoreClockClaimReadsNode().Name

// contractBugs are the planted bugs that keep their promise, each where
// the hunt must find it, with the breach it must find it by: on at least
// 95% of the seeds.
var contractBugs = map[string]breach.Kind{
	planted.FixedWindowShifted.Name + ", local-split":             breach.OverAdmission,
	planted.TokenBucketBurstOneShort.Name + ", store-clock":       breach.HonestTurnedAway,
	planted.GCRARetryAfterFloored.Name + ", store-clock":          breach.RetryDenied,
	planted.SlidingCounterWrongWeight.Name + ", store-clock":      breach.OffReference,
	planted.GCRAResetWholeSeconds.Name + ", store-clock":          breach.BadAnswer,
	planted.GCRAResetPlusTolerance.Name + ", store-clock":         breach.ResetPastIdle,
	planted.TokenBucketRemainingBeforeTake.Name + ", store-clock": breach.RemainingTooHigh,
	planted.FixedWindowResetFromStart.Name + ", store-clock":      breach.ResetTooShort,
	planted.KeysShareBuckets().Name + ", store-clock":             breach.KeysShareState,
	planted.StoreClockClaimReadsNode().Name + ", store-clock":     breach.ReadsNodeClock,
}

// mutantOptions are HuntOptions; -short keeps the first 25 of the 200
// seeds: the shifted window behind a store is first caught on seed 23
// (golden/mutants.txt), and every planted bug must be caught there too.
func mutantOptions() scenarios.Options {
	o := scenarios.HuntOptions()
	if testing.Short() {
		o.Seeds = o.Seeds[:25]
	}
	return o
}

// mutantSuspects are the hunt's suspects: the correct deployments, then
// the planted bugs.
func mutantSuspects() []scenarios.Suspect {
	return append(correctSuspects(), plantedSuspects()...)
}

// mutantsHunt is the hunt of every suspect under mutantOptions, computed
// once, or merged from its shards (shard_test.go).
var mutantsHunt = shardedHunt("mutants", mutantSuspects, mutantOptions)

func TestMutantsCaughtAndCorrectDeploymentsClean(t *testing.T) {
	t.Parallel() // deterministic; overlaps the live tests' waiting
	correct, planted := correctSuspects(), plantedSuspects()
	start := time.Now()
	h := mutantsHunt.result(t)
	o, verdicts := h.o, h.verdicts
	elapsed := time.Since(start)
	requests := 0
	for _, v := range verdicts {
		requests += v.Requests
	}
	how := fmt.Sprintf("in %v (%.1fM requests/s)", elapsed.Round(time.Millisecond), float64(requests)/elapsed.Seconds()/1e6)
	if *mergeFlag {
		how = "on the shards' machines"
	}
	t.Logf("%d suspects × %d seeds of %s: %d simulated requests %s",
		len(verdicts), len(o.Seeds), algos.FormatMicros(o.Duration), requests, how)

	for _, v := range verdicts[:len(correct)] {
		if v.Caught {
			t.Errorf("correct deployment %s broke its promise on %d of %d seeds, first seed %d, %s client: %s",
				v.Suspect, v.SeedsCaught, v.Seeds, v.FirstSeed, v.FirstClient, v.First.Reason)
		}
	}
	caught, matched := 0, 0
	for _, v := range verdicts[len(correct):] {
		if !v.Caught {
			t.Errorf("planted bug %s was not caught on any of %d seeds", v.Suspect, v.Seeds)
			continue
		}
		caught++
		t.Logf("%s: caught on %d of %d seeds, first seed %d, %s client, %s: %s",
			v.Suspect, v.SeedsCaught, v.Seeds, v.FirstSeed, v.FirstClient, v.FirstBreach, v.First.Reason)
		if want, ok := contractBugs[v.Suspect]; ok {
			matched++
			if 100*v.SeedsBy[want] < 95*v.Seeds {
				t.Errorf("%s: %s on %d of %d seeds, want at least 95%%", v.Suspect, want, v.SeedsBy[want], v.Seeds)
			}
		}
	}
	// The window one µs off is seen only by the client that aims at the µs.
	if v := verdicts[len(correct)+4]; v.FirstClient != traffic.Edge {
		t.Errorf("%s was first caught by the %s client, want the edge client", v.Suspect, v.FirstClient)
	}
	if matched != len(contractBugs) || matched != 10 {
		t.Errorf("%d of the %d contract bugs were hunted, want the 10 kinds", matched, len(contractBugs))
	}
	t.Logf("measured: %d of %d planted bugs caught, %d correct deployments clean, %d seeds", caught, len(planted), len(correct), len(o.Seeds))

	text, js := mutantsReports(t, o, verdicts, len(correct), planted)
	if testing.Short() {
		t.Logf("-short: %d seeds, golden/mutants.txt not compared", len(o.Seeds))
		return
	}
	golden.Check(t, "mutants.txt", text)
	golden.Check(t, "mutants.json", js)
}

// mutantsReports are golden/mutants.txt and mutants.json of the hunt's
// verdicts under o, the first correct of them the correct deployments'
// and the rest planted's.
func mutantsReports(t *testing.T, o scenarios.Options, verdicts []scenarios.Verdict, correct int, planted []scenarios.Suspect) (text, js []byte) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "overshoot mutants\n\n")
	fmt.Fprintf(&b, "%d nodes, a %s round trip (±%d%% a leg), clocks in agreement, nothing restarting; the %d clients\n",
		o.Nodes, algos.FormatMicros(o.RTT), o.Jitter, len(o.Clients()))
	fmt.Fprintf(&b, "(%s) at %s, each on its own key; %d seeds of %s.\n", clientList(o), o.Limit, len(o.Seeds), algos.FormatMicros(o.Duration))
	fmt.Fprintf(&b, "Under these conditions every limiter must keep its whole contract: its promise (no over-admission),\n"+
		"no honest request turned away, every retry at its Retry-After admitted and no early retry told to wait\n"+
		"longer, no answer that no limiter may give (a negative wait, say), no Remaining above what the promise\n"+
		"still allows, no Reset before the promise gives a whole burst again nor past the longest any key of it\n"+
		"needs to become idle, no key's answers changed by other keys, no answer of a limiter that claims the\n"+
		"store's clock changed by the nodes' clocks, and, where a reference is named, its admits per window. So the first %d rows must be clean and the last %d caught.\n\n", correct, len(planted))
	if err := scenarios.WriteVerdicts(&b, verdicts); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nEvery kind of breach each caught suspect showed, on how many seeds, and its first example:\n\n")
	if err := scenarios.WriteBreaches(&b, verdicts[correct:]); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nThe requests that show each first breach, on the limiter that decided them (for an over-admission,\nthe admits that opened the window and those that closed it):\n")
	if err := scenarios.WriteTraces(&b, verdicts); err != nil {
		t.Fatal(err)
	}
	writeShrunkCounterexamples(t, &b, planted)
	var j bytes.Buffer
	if err := scenarios.WriteVerdictsJSON(&j, o, verdicts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), j.Bytes()
}

// BenchmarkMutantsHunt is the judged hunt of
// TestMutantsCaughtAndCorrectDeploymentsClean: its 29 suspects on 200 seeds
// of 12 s (-short: 25), every run simulated and judged, on GOMAXPROCS
// workers. It reports the judged requests per second of wall time per
// core (GOMAXPROCS), and the seconds one hunt takes.
func BenchmarkMutantsHunt(b *testing.B) {
	o, suspects := mutantOptions(), mutantSuspects()
	requests := 0
	b.ReportAllocs()
	for b.Loop() {
		verdicts, err := scenarios.Hunt(suspects, o)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range verdicts {
			requests += v.Requests
		}
	}
	cores := float64(min(runtime.GOMAXPROCS(0), len(suspects)*len(o.Seeds)))
	b.ReportMetric(float64(requests)/b.Elapsed().Seconds()/cores, "judged-req/s/core")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/hunt")
}

func clientList(o scenarios.Options) string {
	var names []string
	for _, c := range o.Clients() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

// writeShrunkCounterexamples runs the rapid properties on every planted
// algorithm (the deployment mistakes are invisible on one node) and records
// the first property each one breaks, with rapid's shrunk counterexample.
// rapid's seed is fixed here unless -rapid.seed was given, so the file is
// the same on every run.
func writeShrunkCounterexamples(t *testing.T, b *bytes.Buffer, planted []scenarios.Suspect) {
	t.Helper()
	fmt.Fprintf(b, "\nThe same planted algorithms on one node with a true clock: the first property of\nproperties.Check that breaks, and rapid's shrunk counterexample (-rapid.seed=1).\n")
	for _, s := range planted {
		if s.Deployment == model.GetSet || s.Deployment == model.LocalFull {
			continue
		}
		if s.Limiter.Name == claimsStoreClockReadsNode {
			continue // its callers' clocks agree with the store's here: nothing tells
		}
		props := properties.Properties(s.Limiter)
		if s.Reference.Name != "" {
			// Its promise and contract hold; only its reference tells.
			props = []properties.Property{{Name: "agrees-with-" + s.Reference.Name, Checks: 100,
				Claim: "it admits as many as " + s.Reference.Name + " in every aligned window, on the same requests",
				Prop:  properties.AgreesWith(s.Limiter, s.Reference, differential.Bound{Over: s.Tolerance, Under: s.Tolerance})}}
		}
		caught := false
		for _, p := range props {
			failed, report := properties.FailsWithSeed(p.Prop, p.Checks, 1)
			if !failed {
				continue
			}
			caught = true
			fmt.Fprintf(b, "\n%s breaks %s (%s)\n", s.Limiter.Name, p.Name, p.Claim)
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
			t.Errorf("no property of properties.Check catches %s on one node", s.Limiter.Name)
		}
	}
}

// tokenBucketWithTTL is the token bucket as a Redis-backed script that
// stores its key with an expiry (SET ... PX): the bucket's reset (the µs
// until it is full again) plus extra. With extra 0 the key expires exactly
// when it is idle, which changes no decision; with extra -1 s it expires a
// second before the bucket has refilled, and the next request finds a full
// bucket: the TTL bug of Redis-backed limiters, which only a store with key
// expiry can show.
func tokenBucketWithTTL(name string, extra int64) algos.Algorithm {
	a := algos.TokenBucket
	a.Name = name
	a.KeyTTL = func(d algos.Decision, _ algos.Limit) int64 { return d.Reset + extra }
	return a
}

// A keyed limiter whose key expires one second before its state is idle is
// caught by the default hunt (HuntOptions, the script reading the store's
// clock) on every seed it runs (200 of 200) and by the properties (the
// first of Properties to break is logged), at 10 per second with a burst
// of 20 and at 100 per second; the same limiter whose key lives exactly
// until idle is clean in both.
func TestKeyTTLOneSecondShortIsCaught(t *testing.T) {
	t.Parallel()
	short := tokenBucketWithTTL("token-bucket, key TTL 1 s short", -algos.Second)
	exact := tokenBucketWithTTL("token-bucket, key TTL exactly to idle", 0)
	for _, l := range []algos.Limit{algos.MustLimit(10, algos.Second, 20), algos.MustLimit(100, algos.Second, 100)} {
		t.Run(l.String(), func(t *testing.T) {
			o := mutantOptions()
			o.Limit = l
			verdicts, err := scenarios.Hunt([]scenarios.Suspect{
				{Limiter: limiter.FromAlgorithm(short), Deployment: model.StoreClock},
				{Limiter: limiter.FromAlgorithm(exact), Deployment: model.StoreClock},
			}, o)
			if err != nil {
				t.Fatal(err)
			}
			caught, clean := verdicts[0], verdicts[1]
			if caught.SeedsCaught != caught.Seeds {
				t.Errorf("the hunt caught %s on %d of %d seeds, not every one", caught.Suspect, caught.SeedsCaught, caught.Seeds)
			}
			if caught.Caught {
				t.Logf("hunt: %s caught on %d of %d seeds, first seed %d, %s client: %s",
					caught.Suspect, caught.SeedsCaught, caught.Seeds, caught.FirstSeed, caught.FirstClient, caught.First.Reason)
			}
			if clean.Caught || clean.Errors != 0 {
				t.Errorf("the hunt flagged %s: seed %d: %v (%d errors)", clean.Suspect, clean.FirstSeed, clean.First, clean.Errors)
			}
			caughtBy := ""
			for _, p := range properties.Properties(limiter.FromAlgorithm(short), properties.WithLimit(l)) {
				if failed, report := properties.Fails(p.Prop, min(p.Checks, 1000)); failed {
					first, _, _ := strings.Cut(report, "\n")
					caughtBy = p.Name + ": " + first
					break
				}
			}
			if caughtBy == "" {
				t.Errorf("no property catches %s at %v", short.Name, l)
			} else {
				t.Logf("properties: %s breaks %s", short.Name, caughtBy)
			}
			for _, p := range properties.Properties(limiter.FromAlgorithm(exact), properties.WithLimit(l)) {
				if failed, report := properties.Fails(p.Prop, min(p.Checks, 500)); failed {
					t.Errorf("%s breaks %s at %v:\n%s", exact.Name, p.Name, l, report)
				}
			}
		})
	}
}
