package model

import (
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// Store is the shared store on its own: one algos.State per key, changed
// only by the operations a caller applies, in the order it applies them.
// Run drives one; a live replay can drive another with the execution order
// and times it measured on Redis, and so get the model's decisions for
// exactly what Redis ran.
//
// Design notes: the store has no clock and no latency; it is the "script
// runs when it arrives, one at a time" half of the model, so whoever calls
// it decides the order (Run: by arrival at the store; a replay: by what
// Redis reported). Call is one atomic script; Get and Set are the two halves
// of the non-atomic bug, with the decision in between made by the caller
// on its copy. A Store is not safe for concurrent use, like the
// single-threaded server it stands for.
//
// An algorithm with a KeyTTL has its keys expire on the store's clock,
// which the caller moves with SetClock before each operation (Run sets it
// to the true time the operation reaches the store): a key written at clock
// c with TTL t is absent from c+t on, as a key SET with PX is in Redis.
type Store struct {
	decide algos.DecideFunc
	fields algos.FieldsFunc // decide's, when it has one (decideInto)
	limit  algos.Limit
	states []algos.State

	ttl     func(algos.Decision, algos.Limit) int64 // the algorithm's KeyTTL, or nil
	clock   int64
	expires []int64 // with ttl: the clock from which each key is gone, 0 for never
}

// NewStore returns an empty store (every key absent) for keys keys of algo
// under limit. It fails on an invalid limit or an algorithm without Decide.
// Keys beyond keys are added on first use; a negative key panics, as a
// negative slice index does.
func NewStore(algo algos.Algorithm, limit algos.Limit, keys int) (*Store, error) {
	if algo.Decide == nil {
		return nil, fmt.Errorf("model: algorithm %q has no Decide function", algo.Name)
	}
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("model: invalid limit: %w", err)
	}
	return newStore(algo, limit, keys), nil
}

func newStore(algo algos.Algorithm, limit algos.Limit, keys int) *Store {
	s := &Store{decide: algo.Decide, fields: algo.Fields(), limit: limit, states: make([]algos.State, max(0, keys)), ttl: algo.KeyTTL}
	if s.ttl != nil {
		s.expires = make([]int64, len(s.states))
	}
	return s
}

// SetClock sets the store's clock, in µs of true time, by which keys
// expire. It matters only for an algorithm with a KeyTTL.
func (s *Store) SetClock(now int64) { s.clock = now }

// state is the stored state of key, adding keys as needed and dropping the
// key first if it has expired.
func (s *Store) state(key int) *algos.State {
	if key >= len(s.states) {
		s.states = append(s.states, make([]algos.State, key+1-len(s.states))...)
		if s.ttl != nil {
			s.expires = append(s.expires, make([]int64, key+1-len(s.expires))...)
		}
	}
	if s.ttl != nil {
		if e := s.expires[key]; e != 0 && s.clock >= e {
			s.states[key], s.expires[key] = algos.State{}, 0
		}
	}
	return &s.states[key]
}

// written starts key's TTL after a write whose decision was d.
func (s *Store) written(key int, d algos.Decision) {
	if s.ttl != nil {
		s.expires[key] = limiter.ExpiresAt(s.clock, s.ttl(d, s.limit))
	}
}

// Keys is the number of keys the store has room for.
func (s *Store) Keys() int { return len(s.states) }

// Call runs the atomic script for key: the algorithm decides with the time
// it is told (now, µs) on the stored state and the store keeps the new state.
func (s *Store) Call(key int, now int64) algos.Decision {
	if s.ttl == nil && key < len(s.states) { // no expiry, a key it has room for: the run's every call
		return s.decide(&s.states[key], now, s.limit)
	}
	d := s.decide(s.state(key), now, s.limit)
	s.written(key, d)
	return d
}

// fast is the state a call of key reads and writes in place, when the
// call needs nothing else (no expiry, a key the store has room for: every
// call of a run of the six), and nil otherwise. It inlines, so that the
// runner's loops call the algorithm directly where Call would be one more
// call in between: decide(fast(key), now, limit) is then Call(key, now).
func (s *Store) fast(key int) *algos.State {
	if s.ttl == nil && uint(key) < uint(len(s.states)) {
		return &s.states[key]
	}
	return nil
}

// decideInto writes to *dec the decision on st (fast's state of a key)
// at now, as decide(st, now, limit) returns it: from the algorithm's
// FieldsFunc where it has one, whose fields come back in registers and are
// stored once, where a Decision returned would be stored and then copied
// (algos.FieldsFunc says why that costs).
func (s *Store) decideInto(st *algos.State, now int64, dec *algos.Decision) {
	if s.fields == nil {
		s.decideCopy(st, now, dec)
		return
	}
	dec.Allowed, dec.Remaining, dec.RetryAfter, dec.Reset = s.fields(st, now, &s.limit)
	dec.Delay = 0
}

// decideCopy is decideInto by the algorithm's Decide (kept apart so that
// decideInto inlines).
//
//go:noinline
func (s *Store) decideCopy(st *algos.State, now int64, dec *algos.Decision) {
	*dec = s.decide(st, now, s.limit)
}

// Get returns a copy of key's stored state (the zero State if absent), as a
// GET over the network would: later changes to the store do not show in it.
func (s *Store) Get(key int) algos.State {
	return s.state(key).Clone()
}

// GetInto is Get into *dst, reusing dst's own buffer when it is large
// enough, so that a caller keeping a copy per request in flight (the
// simulator's GET/SET nodes) allocates nothing once its buffers have grown.
func (s *Store) GetInto(key int, dst *algos.State) {
	copyState(dst, s.state(key))
}

// Set overwrites key's stored state with a copy of st, whatever the store
// held: the SET of the non-atomic bug, whose node decided d on its copy
// (the key's TTL restarts from d, as a SET with PX does). The store keeps
// no reference to st.
func (s *Store) Set(key int, st algos.State, d algos.Decision) { s.setFrom(key, &st, d) }

// setFrom is Set from *st, which it copies and does not keep.
func (s *Store) setFrom(key int, st *algos.State, d algos.Decision) {
	copyState(s.state(key), st)
	s.written(key, d)
}

// Wipe drops every key, as a store that restarts without persistence does.
func (s *Store) Wipe() { clear(s.states); clear(s.expires) }

// copyState makes *dst a copy of *src that shares no memory with it, reusing
// dst's own log buffer when it is large enough, so that the GET/SET
// simulation allocates nothing once its buffers have grown. dst and src
// must own distinct buffers (or be the same State).
func copyState(dst, src *algos.State) {
	// Field by field (every field of algos.State): a State holds a
	// pointer (Log), and a whole-value copy of one goes through the write
	// barrier's bulk path, while every algorithm's state but the sliding
	// log's has no pointer to copy. Ints too, one by one: the decisions
	// write them one by one, and the compiler copies an array in wider
	// moves, which the processor cannot forward from those stores.
	dst.Set, dst.Head = src.Set, src.Head
	dst.Ints[0], dst.Ints[1], dst.Ints[2] = src.Ints[0], src.Ints[1], src.Ints[2]
	if src.Log == nil {
		if dst.Log != nil {
			dst.Log = nil
		}
		return
	}
	buf := dst.Log
	live := src.Log[src.Head:]
	if cap(buf) < len(live) || buf == nil {
		buf = make([]int64, len(live), max(16, 2*len(live)))
	} else {
		buf = buf[:len(live)]
	}
	copy(buf, live)
	dst.Log, dst.Head = buf, 0
}
