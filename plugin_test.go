package overshoot_test

// A user's limiter goes through the same checks as the six built-ins, using
// only the public API. This file is the README's "Plug in your own limiter"
// section, compiled and run: if the API changes, it stops compiling.

import (
	"bytes"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
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

func TestMyLimiterKeepsTheContract(t *testing.T) { properties.Check(t, mine) }

func TestMyLimiterDeployed(t *testing.T) {
	matrix, err := scenarios.RunMatrix([]algos.Algorithm{mine}, scenarios.DefaultOptions())
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
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Algorithm: mine, Deployment: model.StoreClock}}, scenarios.HuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts[0]; v.Caught {
		t.Errorf("seed %d, %s client: %s", v.FirstSeed, v.FirstClient, v.First.Reason)
	}
}
