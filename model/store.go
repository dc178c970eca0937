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
// Design notes: the store has no clock of its own and no latency; it is
// the "script runs when it arrives, one at a time" half of the model, so
// whoever calls it decides the order and the time (Run: by arrival at the
// store; a replay: by what Redis reported). Call is one atomic script; Get
// and Set are the two halves of the non-atomic bug, with the decision in
// between made by the caller on its copy. A Store is not safe for
// concurrent use, like the single-threaded server it stands for.
//
// An algorithm with a KeyTTL has its keys expire on the store's clock,
// which the caller moves with SetClock before each operation (Run sets it
// to the true time the operation reaches the store): the keys are a
// limiter.KeyStates told that clock, so a key written at clock c with TTL
// t is absent from c+t on, as a key SET with PX is in Redis.
type Store struct {
	decide algos.DecideFunc
	fields algos.FieldsFunc // decide's, when it has one (decideInto)
	limit  algos.Limit
	keys   limiter.KeyStates // the run's loops decide on keys.Fast in place
	clock  int64
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
	return &Store{decide: algo.Decide, fields: algo.Fields(), limit: limit, keys: limiter.NewKeyStates(algo.KeyTTL, keys)}
}

// SetClock sets the store's clock, in µs of true time, by which keys
// expire. It matters only for an algorithm with a KeyTTL.
func (s *Store) SetClock(now int64) { s.clock = now }

// Keys is the number of keys the store has room for.
func (s *Store) Keys() int { return s.keys.Len() }

// Call runs the atomic script for key: the algorithm decides with the time
// it is told (now, µs) on the stored state and the store keeps the new state.
func (s *Store) Call(key int, now int64) algos.Decision {
	if st := s.keys.Fast(key); st != nil { // the run's every call
		return s.decide(st, now, s.limit)
	}
	d := s.decide(s.keys.At(key, s.clock), now, s.limit)
	s.keys.Written(key, s.clock, d, s.limit)
	return d
}

// decideInto writes to *dec the decision on st (the state keys.Fast gave
// for a key) at now, as decide(st, now, limit) returns it: from the
// algorithm's FieldsFunc where it has one, whose fields come back in
// registers and are stored once, where a Decision returned would be stored
// and then copied (algos.FieldsFunc says why that costs). It is too big to
// inline, so the run's hottest loops write it out.
func (s *Store) decideInto(st *algos.State, now int64, dec *algos.Decision) {
	if s.fields == nil {
		s.decideCopy(st, now, dec)
		return
	}
	dec.Allowed, dec.Remaining, dec.RetryAfter, dec.Reset = s.fields(st, now, &s.limit)
	dec.Delay = 0
}

// decideCopy is decideInto by the algorithm's Decide, for an algorithm
// without a FieldsFunc: kept out of line, out of the run's loops that call
// it in that rarer case.
//
//go:noinline
func (s *Store) decideCopy(st *algos.State, now int64, dec *algos.Decision) {
	*dec = s.decide(st, now, s.limit)
}

// Get returns a copy of key's stored state (the zero State if absent), as a
// GET over the network would: later changes to the store do not show in it.
func (s *Store) Get(key int) algos.State {
	return s.keys.At(key, s.clock).Clone()
}

// GetInto is Get into *dst, reusing dst's own buffer when it is large
// enough, so that a caller keeping a copy per request in flight (the
// simulator's GET/SET nodes) allocates nothing once its buffers have grown.
func (s *Store) GetInto(key int, dst *algos.State) {
	copyState(dst, s.keys.At(key, s.clock))
}

// Set overwrites key's stored state with a copy of st, whatever the store
// held: the SET of the non-atomic bug, whose node decided d on its copy
// (the key's TTL restarts from d, as a SET with PX does). The store keeps
// no reference to st.
func (s *Store) Set(key int, st algos.State, d algos.Decision) { s.setFrom(key, &st, d) }

// setFrom is Set from *st, which it copies and does not keep.
func (s *Store) setFrom(key int, st *algos.State, d algos.Decision) {
	copyState(s.keys.At(key, s.clock), st)
	s.keys.Written(key, s.clock, d, s.limit)
}

// Wipe drops every key, as a store that restarts without persistence does.
func (s *Store) Wipe() { s.keys.Wipe() }

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
