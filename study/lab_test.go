package study

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	_ "github.com/overshoot-go/overshoot/internal/golden" // every test package takes -update
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// full turns on the full sweep in TestStudy (`make study`); the default run
// is the findings' small trials and a one-path table.
var full = flag.Bool("study.full", false, "run the study's full sweep (about 1,500 trials, some 10 minutes) and print its report")

// lab is one test's Redis, key prefix, paths and deadline.
type lab struct {
	t      *testing.T
	ctx    context.Context
	redis  redistest.Redis
	opt    *redis.Options // the Redis's address and credentials
	prefix string
}

// newLab starts (or finds) a Redis for t, skipping t without one (failing it
// under OVERSHOOT_REQUIRE_REDIS=1), and bounds everything t sends by budget.
func newLab(t *testing.T, budget time.Duration) *lab {
	t.Helper()
	srv := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	t.Cleanup(cancel)
	return &lab{t: t, ctx: ctx, redis: srv, opt: srv.Options(), prefix: srv.Prefix(t)}
}

// path is the loopback path for legs {0, 0}, else a proxy with those
// latency toxics (ms); it is closed when the test ends.
func (l *lab) path(legs [2]int) *Path {
	l.t.Helper()
	var p *Path
	var err error
	if legs == [2]int{} {
		p, err = Direct(l.ctx, l.opt)
	} else {
		p, err = Delayed(l.ctx, l.opt, time.Duration(legs[0])*time.Millisecond, time.Duration(legs[1])*time.Millisecond)
	}
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(p.Close)
	l.t.Logf("path %s: measured RTT %s (median of %d PINGs)", p.Name, fmtDur(p.RTT), RTTSamples)
	return p
}

// fleet opens n worker connections through p, closed when the test ends.
func (l *lab) conns(p *Path, n int) *Conns {
	l.t.Helper()
	f, err := NewConns(l.ctx, p, n)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(f.Close)
	return f
}

// point runs reps trials of one strategy, c workers sending per requests
// each under a limit of limit, and returns them as a GridPoint. It fails
// the test on an error, so it runs on the test's goroutine; concurrent
// trials use pointUntil.
func (l *lab) point(f *Conns, s Strategy, c, per, limit int, rel Release, reps int) GridPoint {
	l.t.Helper()
	pt, err := l.pointUntil(f, s, c, per, limit, rel, reps, reps, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	return pt
}

// pointUntil is point with a stopping rule: it runs at least minReps trials
// and at most maxReps, and stops after minReps once enough (when not nil)
// says the trials so far settle what the caller asks. Each run has its own
// key, so that pointUntil may run on several goroutines at once, each with
// its own fleet.
func (l *lab) pointUntil(f *Conns, s Strategy, c, per, limit int, rel Release, minReps, maxReps int, enough func(GridPoint) bool) (GridPoint, error) {
	lim, err := ConcurrencyLimitFor(limit)
	if err != nil {
		return GridPoint{}, err
	}
	pt := GridPoint{Strategy: s.Name(), Atomicity: s.Atomicity(), Workers: c, Path: f.Path.Name, RTT: f.Path.RTT, Release: rel, Limit: limit}
	key := fmt.Sprintf("%strial:%s:%d:%s:%s:%d", l.prefix, s.Name(), c, f.Path.Name, rel, limit)
	for rep := range maxReps {
		if rep >= minReps && enough != nil && enough(pt) {
			break
		}
		r, err := f.Run(l.ctx, Trial{Strategy: s, Workers: c, PerWorker: per, Limit: lim,
			Release: rel, Spread: Spread(f.Path, per), Seed: uint64(rep + 1)}, key)
		if err != nil {
			return GridPoint{}, err
		}
		pt.Results = append(pt.Results, r)
	}
	return pt, nil
}

// concurrently runs every job at once and waits for all of them, failing
// the test with their errors. Jobs must not call t.Fatal (they may log).
func (l *lab) concurrently(jobs ...func() error) {
	l.t.Helper()
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() { errs[i] = job() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		l.t.Fatal(err)
	}
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
func mustScripts(t *testing.T) []LuaScript {
	t.Helper()
	var scripts []LuaScript
	for _, name := range LuaAlgorithms {
		s, err := NewLuaScript(name)
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
