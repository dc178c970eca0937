package study

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	_ "github.com/overshoot-go/overshoot/internal/golden" // every test package takes -update
	"github.com/overshoot-go/overshoot/internal/redistest"
)

// full turns on the full sweep in TestStudy (`make study`); the default run
// is the findings' small trials and a one-path table.
var full = flag.Bool("study.full", false, "run the study's full sweep (about 1,500 trials, some 10 minutes) and print its report")

// lab is one test's Redis, key prefix, paths and deadline.
type lab struct {
	t      *testing.T
	ctx    context.Context
	redis  redistest.Server
	prefix string
}

// newLab starts (or finds) a Redis for t, skipping t without one (failing it
// under OVERSHOOT_REQUIRE_REDIS=1), and bounds everything t sends by budget.
func newLab(t *testing.T, budget time.Duration) *lab {
	t.Helper()
	srv := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	t.Cleanup(cancel)
	return &lab{t: t, ctx: ctx, redis: srv, prefix: srv.Prefix(t)}
}

// path is the loopback path for legs {0, 0}, else a proxy with those
// latency toxics (ms); it is closed when the test ends.
func (l *lab) path(legs [2]int) *Path {
	l.t.Helper()
	var p *Path
	var err error
	if legs == [2]int{} {
		p, err = Direct(l.ctx, l.redis.Addr)
	} else {
		p, err = Delayed(l.ctx, l.redis.Addr, time.Duration(legs[0])*time.Millisecond, time.Duration(legs[1])*time.Millisecond)
	}
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(p.Close)
	l.t.Logf("path %s: measured RTT %s (median of %d PINGs)", p.Name, fmtDur(p.RTT), RTTSamples)
	return p
}

// fleet opens n worker connections through p, closed when the test ends.
func (l *lab) fleet(p *Path, n int) *Fleet {
	l.t.Helper()
	f, err := NewFleet(l.ctx, p, n)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(f.Close)
	return f
}

// run runs one trial, failing the test on an error.
func (l *lab) run(f *Fleet, tr Trial) TrialResult {
	l.t.Helper()
	r, err := f.Run(l.ctx, tr, l.prefix+"trial")
	if err != nil {
		l.t.Fatal(err)
	}
	return r
}

// point runs reps trials of one strategy, c workers sending per requests
// each under a limit of limit, and returns them as a GridPoint.
func (l *lab) point(f *Fleet, s Strategy, c, per, limit int, rel Release, reps int) GridPoint {
	l.t.Helper()
	lim := ConcurrencyLimit
	if limit != int(lim.Rate) {
		var err error
		if lim, err = ConcurrencyLimitFor(limit); err != nil {
			l.t.Fatal(err)
		}
	}
	pt := GridPoint{Strategy: s.Name(), Kind: s.Kind(), Workers: c, Path: f.Path.Name, RTT: f.Path.RTT, Release: rel, Limit: limit}
	for rep := range reps {
		pt.Results = append(pt.Results, l.run(f, Trial{Strategy: s, Workers: c, PerWorker: per, Limit: lim,
			Release: rel, Spread: Spread(f.Path, per), Seed: uint64(rep + 1)}))
	}
	return pt
}

func mustStrategy(t *testing.T, name string) Strategy {
	t.Helper()
	s, err := StrategyByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustScripts is the script of every one of LuaAlgorithms, in order.
func mustScripts(t *testing.T) []Script {
	t.Helper()
	var scripts []Script
	for _, name := range LuaAlgorithms {
		s, err := NewScript(name)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, s)
	}
	return scripts
}

func mustStrategies(t *testing.T) []Strategy {
	t.Helper()
	all, err := Strategies()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
