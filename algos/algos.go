package algos

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
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

// FieldsFunc is a decision returned as its fields, the limit read in
// place: what a DecideFunc returns as a Decision, with Delay 0.
//
// A Decision has five fields, one more than the compiler keeps in
// registers, so every call that returns one has its result stored in
// narrow moves and then copied in wider ones, which the processor cannot
// forward from those stores: a stall that costs more than the decision
// itself. A caller that makes millions of decisions (the simulator) calls
// an algorithm's FieldsFunc where it has one (Fields).
type FieldsFunc func(s *State, now int64, l *Limit) (allowed bool, remaining, retryAfter, reset int64)

// Fields returns a FieldsFunc that decides exactly as a.Decide does, when
// a.Decide is one of this package's own decisions that never hold a
// request (the six and FirstHitWindow, whatever a is named) or a decision
// given one by RegisterFields, and nil otherwise: an algorithm of a user's
// own, or one whose Decide was replaced, is decided by its Decide.
func (a Algorithm) Fields() FieldsFunc {
	if a.Decide == nil {
		return nil
	}
	p := reflect.ValueOf(a.Decide).Pointer()
	for _, f := range ownFields {
		if f.decide == p {
			return f.fields
		}
	}
	registered.Lock()
	defer registered.Unlock()
	return registered.fields[p]
}

// RegisterFields has Fields return fields for every algorithm whose Decide
// is decide, a decision of another package (a planted bug) that the
// simulator is to call the fast way. decide must be a top-level function,
// which Fields tells apart by its code (every value of one closure shares
// its code), and fields must decide exactly as it does, call for call;
// a nil argument, or a decide registered already, panics: a package
// registers its decisions once, when it is initialized.
func RegisterFields(decide DecideFunc, fields FieldsFunc) {
	if decide == nil || fields == nil {
		panic("algos: RegisterFields with a nil function")
	}
	p := reflect.ValueOf(decide).Pointer()
	registered.Lock()
	defer registered.Unlock()
	if _, dup := registered.fields[p]; dup || slices.ContainsFunc(ownFields, func(f ownField) bool { return f.decide == p }) {
		panic("algos: RegisterFields: that decision has a FieldsFunc already")
	}
	if registered.fields == nil {
		registered.fields = map[uintptr]FieldsFunc{}
	}
	registered.fields[p] = fields
}

// registered is the FieldsFuncs RegisterFields gave other packages'
// decisions, by their code pointers.
var registered struct {
	sync.Mutex
	fields map[uintptr]FieldsFunc
}

// ownField pairs one of this package's decisions (by code pointer, which
// a top-level function has alone) with its FieldsFunc.
type ownField struct {
	decide uintptr
	fields FieldsFunc
}

// ownFields is every ownField.
var ownFields = []ownField{
	{reflect.ValueOf(DecideFunc(decideTokenBucket)).Pointer(), tokenBucketFields},
	{reflect.ValueOf(DecideFunc(decideLeakyBucket)).Pointer(), leakyBucketFields},
	{reflect.ValueOf(DecideFunc(decideGCRA)).Pointer(), gcraFields},
	{reflect.ValueOf(DecideFunc(decideFixedWindow)).Pointer(), fixedWindowFields},
	{reflect.ValueOf(DecideFunc(decideSlidingLog)).Pointer(), slidingLogFields},
	{reflect.ValueOf(DecideFunc(decideSlidingCounter)).Pointer(), slidingCounterFields},
	{reflect.ValueOf(DecideFunc(decideFirstHitWindow)).Pointer(), firstHitWindowFields},
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
