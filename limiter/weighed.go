package limiter

import (
	"context"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
)

// Weight is what one request asks of a limiter beyond its key and its
// time: how many units it spends, and how long it holds its slot once
// admitted. The Weight of a plain Allow is Unit.
type Weight struct {
	// Cost is how many units the request spends, at least 1.
	Cost int64
	// Service is how long, in µs, an admitted request stays in flight;
	// 0 means unknown.
	Service int64
}

// Unit is the Weight of one request of cost 1 and unknown service time.
var Unit = Weight{Cost: 1}

// Validate reports a cost below 1 or a negative service time.
func (w Weight) Validate() error {
	switch {
	case w.Cost < 1:
		return fmt.Errorf("limiter: a request's cost must be at least 1, got %d", w.Cost)
	case w.Service < 0:
		return fmt.Errorf("limiter: a request's service time must not be negative, got %d µs", w.Service)
	}
	return nil
}

// Weighed is a Limiter that takes each request's Weight: a cost (a request
// of cost n is admitted whole or not at all) and a service time (a
// concurrency limit holds a slot for it). Allow is AllowWeighed with Unit.
// A limiter that is not Weighed can only be given requests of cost 1, and
// never sees service times.
type Weighed interface {
	Limiter
	AllowWeighed(ctx context.Context, key int, now int64, w Weight) (algos.Decision, error)
}

// Sized is a limiter that can say how big its state is: Cells is the number
// of integers or entries it holds over all keys at this moment (a token
// bucket's key is 2 cells, a sliding log's one cell per admitted time still
// in its window), the measure of memory a capacity plan reports.
type Sized interface {
	Cells() int64
}

// AllowWeighed decides a request of w.Cost units as that many unit
// decisions at the same instant, on a copy of key's state: admitted, and
// the copy kept, only if every unit is; otherwise the key's state is left
// as it was and the answer is the first refused unit's decision (so its
// RetryAfter is when that unit, after the ones before it, would fit: exact
// for a cost of 1, and a lower bound on the whole request's wait for the
// six algorithms). Each of the six stores its state in integers that a
// unit's decision advances, so n units at one instant are what the
// algorithm would do with a request of cost n. Service is ignored: a rate
// limit does not hold slots.
func (m *Memory) AllowWeighed(ctx context.Context, key int, now int64, w Weight) (algos.Decision, error) {
	if err := w.Validate(); err != nil {
		return algos.Decision{}, err
	}
	if w.Cost == 1 {
		return m.Allow(ctx, key, now)
	}
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("limiter: negative key %d", key)
	}
	held := m.stateCells(m.keys.Held(key)) // an expired state's too: At drops it
	cur := m.keys.At(key, now)
	st := cur.Clone()
	var d algos.Decision
	for range w.Cost {
		if d = m.algo.Decide(&st, now, m.limit); !d.Allowed {
			break
		}
	}
	if d.Allowed {
		*cur = st
		m.keys.Written(key, now, d, m.limit)
	}
	m.cells += m.stateCells(cur) - held
	return d, nil
}

// Cells is the number of integers the keys hold now: three for every key
// that has a state, or the live entries of a sliding log's. It is kept as
// the keys change, so asking costs nothing. A key past its KeyTTL still
// counts until it is next asked about, as a store's lazily expired key
// does.
func (m *Memory) Cells() int64 { return m.cells }

// stateCells is how many integers *s holds: the algorithm's StateInts
// (when it is a fixed number), or the live entries of a log.
func (m *Memory) stateCells(s *algos.State) int64 {
	switch {
	case !s.Set:
		return 0
	case s.Log != nil:
		return int64(len(s.Log) - s.Head)
	case m.algo.StateInts != nil:
		return m.algo.StateInts(m.limit)
	}
	return int64(len(s.Ints))
}
