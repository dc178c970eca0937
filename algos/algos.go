package algos

import (
	"fmt"
	"slices"
)

// Decision is what a limiter answers for one request.
type Decision struct {
	Allowed bool
	// Remaining is how many more requests would be admitted at this instant.
	Remaining int64
	// RetryAfter is 0 when allowed; otherwise the µs to wait before a retry
	// is admitted, on one node with a true clock and no other traffic.
	RetryAfter int64
	// Reset is the µs until the key is back to its idle state (full bucket,
	// empty window) if no other request arrives.
	Reset int64
	// Delay is the µs an admitted request is held before it is let
	// through: it reaches what the limiter protects at now + Delay. Only a
	// queueing limiter (QueueingGCRA) holds a request; Delay is 0 for a
	// refusal and for every algorithm that lets its admits through at once.
	Delay int64
}

// State is one key's stored state. The zero State is an absent key, which is
// also what a wiped store holds. A, B and C are the algorithm's stored
// integers, in the order its script stores them; each algorithm documents
// which is which ("Stored: A = tokens, B = last") and its Decide reads them
// into locals of those names (tokens, last := s.A, s.B) and writes them
// back, so the arithmetic reads in the algorithm's words. Log is the
// sliding log's admitted times, sorted, live from index Head (non-nil once
// set).
type State struct {
	Set     bool
	A, B, C int64
	Log     []int64
	Head    int
}

// Clone returns a State that shares no memory with s, as a value read over
// the network would.
func (s State) Clone() State {
	if s.Log != nil {
		s.Log = slices.Clone(s.Log[s.Head:])
		s.Head = 0
	}
	return s
}

// Stored lists the values the store holds for this key, in the order the
// Lua scripts return them, for comparing Go with Redis.
func (s State) Stored() []int64 {
	if !s.Set {
		return nil
	}
	if s.Log != nil {
		return slices.Clone(s.Log[s.Head:])
	}
	return []int64{s.A, s.B, s.C}
}

// DecideFunc decides one request for a key at time now (µs) under limit l,
// updating *s in place to the new stored state. It must not keep s.
type DecideFunc func(s *State, now int64, l Limit) Decision

// Algorithm is a rate limiter as a value: its decision, its promise, and what
// it stores. A user's own limiter is an Algorithm too, and goes through the
// same properties and simulations.
type Algorithm struct {
	Name    string
	Decide  DecideFunc
	Promise func(l Limit) Promise
	// StateDoc says in words what the store keeps for one key.
	StateDoc string
	// StateInts is how many integers one key stores at most under l.
	StateInts func(l Limit) int64
	// ExactRetry is true when a retry one µs before RetryAfter is still
	// denied, so that the properties can hold the algorithm to it.
	ExactRetry bool
	// Conservative is true when the algorithm refuses requests its promise
	// would allow, by design (the sliding counter's estimate): a hunt then
	// does not count such a refusal as an honest request turned away.
	Conservative bool
	// KeyTTL, when set, is the key's expiry as the store keeps it: after a
	// call that answered d, the key is dropped KeyTTL(d, l) µs later by the
	// store's clock, unless another call writes it first (a TTL below 1 µs
	// keeps it 1 µs). It is how a script that SETs its state with PX
	// behaves, and where a TTL shorter than the state's idle time hands out
	// a fresh burst. nil keeps every key until the store is wiped, which is
	// what the six do in the model (their scripts' TTLs cover the idle time
	// with a margin, which the Lua differential checks on Redis).
	KeyTTL func(d Decision, l Limit) int64
}

// All is the registry of the six correct algorithms, in a fixed order.
func All() []Algorithm {
	return []Algorithm{TokenBucket, LeakyBucket, GCRA, FixedWindow, SlidingLog, SlidingCounter}
}

// ByName finds a registered algorithm.
func ByName(name string) (Algorithm, error) {
	for _, a := range All() {
		if a.Name == name {
			return a, nil
		}
	}
	return Algorithm{}, fmt.Errorf("algos: no algorithm named %q (have %s)", name, Names())
}

// Names lists the registered names.
func Names() []string {
	var names []string
	for _, a := range All() {
		names = append(names, a.Name)
	}
	return names
}

func two(Limit) int64 { return 2 }
