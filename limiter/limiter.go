package limiter

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/overshoot-go/overshoot/algos"
)

// Clock says whose clock a limiter reads to decide.
type Clock uint8

const (
	// CallerClock limiters are told the time by whoever calls them: the
	// node's clock in a fleet, the store's time when a script reads TIME on
	// their behalf. overshoot's six and golang.org/x/time/rate are such.
	CallerClock Clock = iota + 1
	// StoreClock limiters read the clock of the store that holds their
	// state (Redis TIME) and nothing else: a node's clock cannot reach them,
	// so the node-clock and local deployments do not apply to them.
	StoreClock
)

// String is "caller clock" or "store clock".
func (c Clock) String() string {
	switch c {
	case CallerClock:
		return "caller clock"
	case StoreClock:
		return "store clock"
	}
	return fmt.Sprintf("Clock(%d)", uint8(c))
}

// Limiter is one limiter under test, holding the state of every key: a Go
// object per key, a client of a (simulated) Redis, or the store of a pure
// algorithm. It is created fresh (Spec.New) for every run, every node of a
// local deployment, and every case of a property, so it needs no reset.
//
// Allow decides one request for key (a small index, 0 and up) at now µs.
// For a CallerClock limiter, now is the time its caller's clock reads. For
// a StoreClock limiter, now is the true time at which the request reaches
// the store: a limiter on a simulated store sets that store's clock to now
// before it calls (simredis.Server.SetClock), and one on a real store
// ignores it. Calls come in order of now for a StoreClock limiter; a
// CallerClock limiter may be told a time earlier than the last (skewed
// callers). The simulator's calls also carry, in ctx, what the calling
// node's clock read when it sent the request (NodeTime), for a limiter
// that sends that along. An error is reported as an error, never as a
// denial: the simulator counts it apart from the admits and denials.
//
// A Limiter that also implements io.Closer is closed by whoever created it
// once its run is over. Limiters are not called concurrently.
type Limiter interface {
	Allow(ctx context.Context, key int, now int64) (algos.Decision, error)
}

// Into is a Limiter that can also write its decision into *out, exactly
// as Allow returns it (the zero Decision with an error), which AllowInto
// then calls instead of Allow: a limiter that wraps another, or decides by
// an algos.FieldsFunc, hands its decision on without the copies of a
// Decision returned through each call (algos.FieldsFunc says why they
// cost). It is for the simulator's millions of calls; Allow is still what
// every other caller uses.
type Into interface {
	Limiter
	AllowInto(ctx context.Context, key int, now int64, out *algos.Decision) error
}

// Spec is a limiter under test as overshoot's checks take it: how to make
// one for a limit, whose clock it reads, and what it promises. The
// simulator, the tables, the sweeps, the hunt and the properties all take a
// Spec; FromAlgorithm makes one of a pure algorithm, PerKey of a Go object
// that takes the time as a parameter, and a Redis-backed library is a Spec
// whose New connects it to a store (see package adapters).
type Spec struct {
	// Name labels the limiter in reports.
	Name string
	// Clock is whose clock the limiter reads.
	Clock Clock
	// Promise is what the limiter guarantees under a limit, on one node
	// with a true clock: what every run is checked against.
	Promise func(l algos.Limit) algos.Promise
	// New makes a fresh limiter, with every key absent, enforcing l.
	New func(l algos.Limit) (Limiter, error)
	// ExactRetry is true when a retry one µs before RetryAfter is still
	// denied, so that the properties can hold the limiter to it.
	ExactRetry bool
	// Conservative is true when the limiter refuses requests its promise
	// would allow, by design (a sliding counter's estimate). Otherwise a
	// hunt holds every refusal to the promise: one that the promise, given
	// the admits before it, would have allowed is an honest request turned
	// away.
	Conservative bool
	// Reference, when named, is the algorithm the limiter claims to
	// implement (a GCRA library names algos.GCRA). The table then also
	// measures its over against the reference's ideal run on the same
	// requests: its own ideal run carries any defect built into it, and
	// shows +0.0% over itself.
	Reference algos.Algorithm

	algo *algos.Algorithm // set by FromAlgorithm
}

// FromAlgorithm is the Spec of a pure algorithm: a caller-clock limiter
// whose keys' states live in memory, each dropped at its KeyTTL if it has
// one. The simulator recognises such a Spec (Spec.Algorithm) and runs the
// algorithm on its own store, which also plays the GET-then-SET bug.
func FromAlgorithm(a algos.Algorithm) Spec {
	return Spec{
		Name:         a.Name,
		Clock:        CallerClock,
		Promise:      a.Promise,
		New:          func(l algos.Limit) (Limiter, error) { return NewMemory(a, l) },
		ExactRetry:   a.ExactRetry,
		Conservative: a.Conservative,
		algo:         &a,
	}
}

// FromAlgorithms is FromAlgorithm of each algorithm, in order.
func FromAlgorithms(algs ...algos.Algorithm) []Spec {
	specs := make([]Spec, len(algs))
	for i, a := range algs {
		specs[i] = FromAlgorithm(a)
	}
	return specs
}

// Algorithm returns the pure algorithm s was made from, and whether it was
// made by FromAlgorithm.
func (s Spec) Algorithm() (algos.Algorithm, bool) {
	if s.algo == nil {
		return algos.Algorithm{}, false
	}
	return *s.algo, true
}

// Validate reports the first thing missing from s: a name, a known clock,
// a promise, a way to make the limiter (and, for an algorithm, Decide).
func (s Spec) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("limiter: a Spec needs a Name")
	case s.Clock != CallerClock && s.Clock != StoreClock:
		return fmt.Errorf("limiter: %q has no Clock (CallerClock or StoreClock)", s.Name)
	case s.Promise == nil:
		return fmt.Errorf("limiter: %q has no Promise", s.Name)
	case s.New == nil:
		return fmt.Errorf("limiter: %q has no New function", s.Name)
	case s.algo != nil && s.algo.Decide == nil:
		return fmt.Errorf("limiter: algorithm %q has no Decide function", s.Name)
	case s.Reference.Name != "" && s.Reference.Decide == nil:
		return fmt.Errorf("limiter: %q names reference %q, which has no Decide function", s.Name, s.Reference.Name)
	}
	return nil
}

// Open validates s and l and makes a fresh limiter, turning a New that
// fails, returns nil or panics into an error naming the Spec.
func (s Spec) Open(l algos.Limit) (lim Limiter, err error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("limiter: %q: invalid limit: %w", s.Name, err)
	}
	defer func() {
		if v := recover(); v != nil {
			lim, err = nil, fmt.Errorf("limiter: %q: New panicked: %v", s.Name, v)
		}
	}()
	lim, err = s.New(l)
	switch {
	case err != nil:
		return nil, fmt.Errorf("limiter: %q under %v: %w", s.Name, l, err)
	case lim == nil:
		return nil, fmt.Errorf("limiter: %q: New returned no limiter and no error", s.Name)
	}
	return lim, nil
}

// Close closes lim if it is an io.Closer.
func Close(lim Limiter) error {
	if c, ok := lim.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Allow calls lim, turning a panic into an error (a *Panic), so that a
// user's limiter that panics is reported rather than taking the run down
// with it.
func Allow(ctx context.Context, lim Limiter, key int, now int64) (d algos.Decision, err error) {
	// Not through AllowInto: the pointer it hands to an interface's method
	// escapes, so every call would allocate its Decision (a tenth of what
	// the properties cost). An Into decides the same by either method.
	defer func() {
		if v := recover(); v != nil {
			d, err = algos.Decision{}, &Panic{Key: key, Told: now, Value: v}
		}
	}()
	return lim.Allow(ctx, key, now)
}

// AllowInto is Allow with the decision written to *out (the zero Decision
// when lim panicked), for a caller that makes millions of calls: a
// Decision returned is stored and copied again at every call it passes
// through, in moves the processor cannot forward (algos.FieldsFunc), and
// this way it is copied once, field by field. A limiter that is an Into
// writes it there itself.
func AllowInto(ctx context.Context, lim Limiter, key int, now int64, out *algos.Decision) (err error) {
	defer func() {
		if v := recover(); v != nil {
			out.Allowed, out.Remaining, out.RetryAfter, out.Reset, out.Delay = false, 0, 0, 0, 0
			err = &Panic{Key: key, Told: now, Value: v}
		}
	}()
	if into, ok := lim.(Into); ok {
		return into.AllowInto(ctx, key, now, out)
	}
	d, err := lim.Allow(ctx, key, now)
	out.Allowed, out.Remaining, out.RetryAfter, out.Reset, out.Delay = d.Allowed, d.Remaining, d.RetryAfter, d.Reset, d.Delay
	return err
}

// Panic is the error Allow returns for a limiter that panicked: a panic is
// never an answer, so the judge counts it as a bad answer, where an error
// the limiter returned is only counted.
type Panic struct {
	Key   int
	Told  int64
	Value any // what the limiter panicked with
}

// Error says where the limiter panicked and with what.
func (p *Panic) Error() string {
	return fmt.Sprintf("limiter: Allow panicked at %s on key %d: %v", algos.FormatTime(p.Told), p.Key, p.Value)
}
