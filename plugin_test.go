package overshoot_test

// A user's limiter goes through the same checks as the six built-ins, using
// only the public API. This file is the README's "Plug in your own limiter"
// section, compiled and run: if the API changes, it stops compiling.

import (
	"bytes"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// mine is a token bucket as a user might fix it after reading the findings:
// last only moves forward, so a node whose clock is behind cannot rewind it.
// Stored: A = tokens in scaled units (one request costs l.Unit, one µs
// refills l.Refill), B = last.
var mine = algos.Algorithm{
	Name:       "my-limiter",
	Decide:     decideMine,
	Promise:    algos.BucketPromise,
	StateDoc:   "tokens (scaled), last refill",
	StateInts:  func(algos.Limit) int64 { return 2 },
	ExactRetry: true,
}

func decideMine(s *algos.State, now int64, l algos.Limit) algos.Decision {
	capacity := l.Burst * l.Unit
	if !s.Set {
		*s = algos.State{Set: true, A: capacity, B: now}
	}
	if elapsed := now - s.B; elapsed > 0 {
		if room := capacity - s.A; elapsed >= (room+l.Refill-1)/l.Refill {
			s.A = capacity
		} else {
			s.A += elapsed * l.Refill
		}
		s.B = now
	}
	behind := s.B - now // the tokens are as of s.B; a caller behind waits the gap too
	d := algos.Decision{}
	if s.A >= l.Unit {
		s.A -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = behind + (l.Unit-s.A+l.Refill-1)/l.Refill
	}
	d.Remaining = s.A / l.Unit
	d.Reset = behind + (capacity-s.A+l.Refill-1)/l.Refill
	return d
}

func TestMyLimiterKeepsTheContract(t *testing.T) { properties.Check(t, limiter.FromAlgorithm(mine)) }

func TestMyLimiterDeployed(t *testing.T) {
	matrix, err := scenarios.RunMatrix(limiter.FromAlgorithms(mine), scenarios.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	matrix.WriteTo(&b)
	t.Log("\n" + b.String())
	cell, _ := matrix.Cell("my-limiter", model.NodeClock)
	if cell.PeakX > 2.1 {
		t.Errorf("peaks at %.2fx under 50 ms of skew", cell.PeakX)
	}
}

func TestMyLimiterNeverBreaksItsPromise(t *testing.T) {
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: limiter.FromAlgorithm(mine), Deployment: model.StoreClock}}, scenarios.HuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts[0]; v.Caught {
		t.Errorf("seed %d, %s client: %s", v.FirstSeed, v.FirstClient, v.First.Reason)
	}
}

// A Go library you already ship, told the time as a time.Time: a GCRA in
// a struct (a stand-in for yours; adapters/xtimerate does the same for
// golang.org/x/time/rate). Nothing in it knows overshoot.
type gcraLibrary struct {
	tat                 time.Time
	interval, tolerance time.Duration
}

func (g *gcraLibrary) Allow(now time.Time) (ok bool, retryAfter, resetAfter time.Duration) {
	tat := g.tat
	if tat.Before(now) {
		tat = now
	}
	if allowAt := tat.Add(g.interval - g.tolerance); now.Before(allowAt) {
		return false, allowAt.Sub(now), tat.Sub(now)
	}
	g.tat = tat.Add(g.interval)
	return true, 0, g.tat.Sub(now)
}

// myLibrary is all it takes to put the library through overshoot: a Spec
// making one object per key, and a Decider telling it the time.
var myLibrary = limiter.Spec{
	Name: "my-library", Clock: limiter.CallerClock, Promise: algos.BucketPromise, ExactRetry: true,
	New: limiter.PerKey(func(l algos.Limit, _ int64) (limiter.Decider, error) {
		interval := time.Duration(l.Window/l.Rate) * time.Microsecond
		g := &gcraLibrary{interval: interval, tolerance: time.Duration(l.Burst) * interval}
		return limiter.DecideFunc(func(now int64) algos.Decision {
			ok, retry, reset := g.Allow(time.UnixMicro(now))
			remaining := int64((g.tolerance - reset) / interval)
			return algos.Decision{Allowed: ok, Remaining: max(remaining, 0), RetryAfter: retry.Microseconds(), Reset: reset.Microseconds()}
		}), nil
	}),
}

func TestMyLibraryKeepsTheContract(t *testing.T) {
	properties.Check(t, myLibrary, properties.WithLimit(algos.MustLimit(100, algos.Second, 100)))
}

func TestMyLibraryDeployed(t *testing.T) {
	matrix, err := scenarios.RunMatrix([]limiter.Spec{myLibrary}, scenarios.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if cell, _ := matrix.Cell("my-library", model.StoreClock); cell.Violations != 0 || cell.PeakX > 2 {
		t.Errorf("behind a store: %d violations, peak %.2fx", cell.Violations, cell.PeakX)
	}
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: myLibrary, Deployment: model.StoreClock}}, scenarios.HuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts[0]; v.Caught || v.Errors > 0 {
		t.Errorf("seed %d, %s client: %v (%d errors)", v.FirstSeed, v.FirstClient, v.First, v.Errors)
	}
}
