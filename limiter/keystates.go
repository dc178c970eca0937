package limiter

import "github.com/overshoot-go/overshoot/algos"

// KeyStates is one algorithm's state per key, as a store holds it: one
// algos.State per key, the zero State for a key never written, room made
// for a key on its first use; and, for an algorithm with a KeyTTL, a key
// written at time c that answered d is gone from ExpiresAt(c, KeyTTL(d, l))
// on, as a key SET with PX is in Redis. It is the one table of keys of
// both Memory (a pure algorithm as a Limiter) and the simulator's store
// (model.Store); neither holds keys another way.
//
// Design notes: a key expires lazily, when it is next asked about (At),
// and by the time the caller says, not by a clock of its own: Memory's is
// each call's time, the simulator's the store's clock. An expired key left
// unasked is still held (Held), as a store keeps a lazily expired key
// until it is touched. Without a KeyTTL no expiry is kept at all, so that
// the simulator's every call can decide on the state in place (Fast). The
// zero KeyStates holds no key and never expires one. It is not safe for
// concurrent use.
type KeyStates struct {
	states  []algos.State
	ttl     func(algos.Decision, algos.Limit) int64 // the algorithm's KeyTTL, or nil
	expires []int64                                 // with ttl: the time from which each key is gone, 0 for never
}

// NewKeyStates returns keys absent keys (more are added on first use) of
// an algorithm whose KeyTTL is ttl: nil for keys that never expire.
func NewKeyStates(ttl func(algos.Decision, algos.Limit) int64, keys int) KeyStates {
	k := KeyStates{states: make([]algos.State, max(0, keys)), ttl: ttl}
	if ttl != nil {
		k.expires = make([]int64, len(k.states))
	}
	return k
}

// Len is the number of keys there is room for.
func (k *KeyStates) Len() int { return len(k.states) }

// Held is key's state as held, expired or not, making room for key: what
// a caller counting what the keys hold (Memory.Cells) reads before At may
// drop it. A negative key panics, as a negative slice index does; so do
// At's and Written's.
func (k *KeyStates) Held(key int) *algos.State {
	if n := key + 1 - len(k.states); n > 0 {
		k.states = append(k.states, make([]algos.State, n)...)
		if k.ttl != nil {
			k.expires = append(k.expires, make([]int64, n)...)
		}
	}
	return &k.states[key]
}

// At is key's state at time now, to read or to change in place: Held's,
// dropped first (made the zero State) if its TTL has run out by now. The
// pointer is good until the next call that adds keys. It is kept small
// enough to inline (its expiry test as one condition: as two nested ifs it
// costs just over the compiler's budget), as the simulator's GET and SET of
// the non-atomic bug call it once per request.
func (k *KeyStates) At(key int, now int64) *algos.State {
	st := k.Held(key)
	if k.ttl != nil && k.expires[key] != 0 && now >= k.expires[key] {
		*st, k.expires[key] = algos.State{}, 0
	}
	return st
}

// Written starts key's TTL at now after a write whose decision, under l,
// was d: the key is gone from ExpiresAt(now, KeyTTL(d, l)) on. Without a
// KeyTTL it does nothing. key must have room (At, Held).
func (k *KeyStates) Written(key int, now int64, d algos.Decision, l algos.Limit) {
	if k.ttl != nil { // tested here, where it inlines: most algorithms have no KeyTTL
		k.startTTL(key, now, d, l)
	}
}

// startTTL is Written for an algorithm with a KeyTTL.
func (k *KeyStates) startTTL(key int, now int64, d algos.Decision, l algos.Limit) {
	k.expires[key] = ExpiresAt(now, k.ttl(d, l))
}

// Fast is key's state to decide on in place when a call needs nothing
// else, and nil otherwise: without a KeyTTL, for a key there is room for
// (every call of a simulated run of the six algorithms), a decision on
// Fast(key) at now is a decision on At(key, now) followed by Written. It
// inlines, even into a caller's inlined method, so that the simulator's
// loops call the algorithm directly (model.Store's fast path).
func (k *KeyStates) Fast(key int) *algos.State {
	if k.ttl == nil && uint(key) < uint(len(k.states)) {
		return &k.states[key]
	}
	return nil
}

// Wipe drops every key, keeping the room made for them, as a store that
// restarts without persistence does.
func (k *KeyStates) Wipe() { clear(k.states); clear(k.expires) }

// ExpiresAt is the time from which a key written at now with a TTL of ttl
// µs is gone: now + ttl, where a TTL below 1 µs keeps the key 1 µs, and a
// time past algos.MaxTime is algos.MaxTime+1, so that a key written at or
// before MaxTime lasts at least to MaxTime.
func ExpiresAt(now, ttl int64) int64 {
	ttl = max(ttl, 1)
	if ttl > algos.MaxTime-now {
		return algos.MaxTime + 1
	}
	return now + ttl
}
