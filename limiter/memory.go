package limiter

import (
	"context"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
)

// Memory is a pure algorithm's keys held in memory: its KeyStates,
// decided by the algorithm at the time each call is told, each key dropped
// at the algorithm's KeyTTL, if it has one, by that same clock. It is the
// limiter of a Spec made by FromAlgorithm.
type Memory struct {
	algo  algos.Algorithm
	limit algos.Limit
	keys  KeyStates
	cells int64 // the integers every key's state holds, kept for Cells
}

// NewMemory returns an empty Memory of a under l.
func NewMemory(a algos.Algorithm, l algos.Limit) (*Memory, error) {
	if a.Decide == nil {
		return nil, fmt.Errorf("limiter: algorithm %q has no Decide function", a.Name)
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("limiter: invalid limit: %w", err)
	}
	return &Memory{algo: a, limit: l, keys: NewKeyStates(a.KeyTTL, 0)}, nil
}

// Allow decides on key's state at now; it never fails for a key ≥ 0.
func (m *Memory) Allow(_ context.Context, key int, now int64) (algos.Decision, error) {
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("limiter: negative key %d", key)
	}
	held := m.stateCells(m.keys.Held(key)) // an expired state's too: At drops it
	st := m.keys.At(key, now)
	d := m.algo.Decide(st, now, m.limit)
	m.cells += m.stateCells(st) - held
	m.keys.Written(key, now, d, m.limit)
	return d, nil
}

// Decider is one key's limiter as a Go object that takes the time as a
// parameter, as golang.org/x/time/rate's Limiter does (AllowN(t, n)).
type Decider interface {
	Decide(now int64) algos.Decision
}

// DeciderFunc is a Decider as a function, for one key's closure over a
// library's object.
type DeciderFunc func(now int64) algos.Decision

// Decide calls f.
func (f DeciderFunc) Decide(now int64) algos.Decision { return f(now) }

// PerKey is the New of a Spec whose limiter is a Go object per key: newKey
// makes a fresh one under l, called once per key on the key's first
// request with that request's time (first, on the caller's clock), so that
// an object that starts its clock when it is built (a window opened at
// construction, a last-refill time set to now) starts it in the run's time,
// not at 0 or at the machine's. It is also called once up front, with first
// 0, so that a limit it refuses is an error of New rather than of the first
// call.
func PerKey(newKey func(l algos.Limit, first int64) (Decider, error)) func(l algos.Limit) (Limiter, error) {
	return func(l algos.Limit) (Limiter, error) {
		if _, err := newKey(l, 0); err != nil {
			return nil, err
		}
		return &perKey{newKey: newKey, limit: l}, nil
	}
}

type perKey struct {
	newKey func(algos.Limit, int64) (Decider, error)
	limit  algos.Limit
	// keys holds the keys below denseKeys by index, sparse the others: a
	// run whose keys were moved far apart (the hunt's isolation check puts
	// them at i + 65536) must not pay for every index below them.
	keys   []Decider
	sparse map[int]Decider
}

// denseKeys is how many keys perKey keeps by index.
const denseKeys = 4096

func (p *perKey) Allow(_ context.Context, key int, now int64) (algos.Decision, error) {
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("limiter: negative key %d", key)
	}
	var d Decider
	if key < denseKeys {
		if key >= len(p.keys) {
			p.keys = append(p.keys, make([]Decider, key+1-len(p.keys))...)
		}
		d = p.keys[key]
	} else {
		d = p.sparse[key]
	}
	if d == nil {
		var err error
		if d, err = p.newKey(p.limit, now); err != nil {
			return algos.Decision{}, err
		}
		if key < denseKeys {
			p.keys[key] = d
		} else {
			if p.sparse == nil {
				p.sparse = map[int]Decider{}
			}
			p.sparse[key] = d
		}
	}
	return d.Decide(now), nil
}
