package algos

import (
	"math/rand/v2"
	"testing"
)

// While the admits so far keep the promise, Allows(t) says exactly whether
// CheckAdmits would still find nothing with t added: on seeded runs of
// every built-in promise, at small limits where edges are often hit, each
// candidate time is asked and then admitted only if the envelope allows it
// (so the run stays within the promise), or, now and then, admitted anyway
// to leave the promise broken and check that Allows then follows the run.
func TestEnvelopeAgreesWithCheck(t *testing.T) {
	promises := []func(Limit) Promise{BucketPromise, AlignedWindowPromise, SlidingWindowPromise, AnchoredWindowPromise}
	asked := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		l := MustLimit(1+r.Int64N(4), 1+r.Int64N(12), 1+r.Int64N(4))
		for _, promise := range promises {
			p := promise(l)
			e, ok := p.Envelope()
			if !ok {
				t.Fatalf("%s has no envelope", p.Text)
			}
			var admits []int64
			now := int64(0)
			broken := false
			for range 60 {
				now += r.Int64N(2*l.Window/max(1, l.Rate) + 2)
				if r.IntN(3) == 0 {
					now -= min(now, r.Int64N(2)) // repeat an instant now and then
					if len(admits) > 0 {
						now = max(now, admits[len(admits)-1])
					}
				}
				allows := e.Allows(now)
				if !broken {
					want := p.CheckAdmits(append(append([]int64(nil), admits...), now)) == nil
					asked++
					if allows != want {
						t.Fatalf("seed %d, %s: admits %v, then %d: Allows = %v, CheckAdmits says %v", seed, p.Text, admits, now, allows, want)
					}
				}
				if allows || r.IntN(40) == 0 {
					e.Admit(now)
					admits = append(admits, now)
					broken = broken || !allows
				}
			}
		}
	}
	t.Logf("%d times asked", asked)
}

// A promise of a user's own has no envelope: its check judges whole runs.
func TestOwnPromiseHasNoEnvelope(t *testing.T) {
	if _, ok := NewPromise("anything", func([]int64) *Violation { return nil }).Envelope(); ok {
		t.Error("an own promise has an envelope")
	}
}
