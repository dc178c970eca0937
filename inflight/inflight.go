package inflight

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// Name is the Spec's name when it assumes no service time; with one it is
// "concurrency(assumed 50ms)".
const Name = "concurrency"

// Spec is the concurrency limiter as a limiter under test: at most
// l.Burst units in flight per key at once (Rate and Window unused).
// assumed is the service time, in µs, used for a request whose
// Weight.Service is 0; with assumed 0, such a request is an error, and so
// is every plain Allow. Spec fails for an assumed service time that is
// negative or longer than algos.MaxTime.
//
// It reads the caller's clock and promises Promise. ExactRetry is true: a
// denial's RetryAfter is the release that makes room, so one µs earlier
// the same request is still refused (with no other traffic, on one true
// clock). Conservative is true: the cap refuses, by design, requests its
// promise (which speaks of one µs only) would allow.
func Spec(assumed int64) (limiter.Spec, error) {
	if err := checkAssumed(assumed); err != nil {
		return limiter.Spec{}, err
	}
	name := Name
	if assumed > 0 {
		name = fmt.Sprintf("%s(assumed %s)", Name, algos.FormatMicros(assumed))
	}
	return limiter.Spec{
		Name:    name,
		Clock:   limiter.CallerClock,
		Promise: Promise,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			return New(l, assumed)
		},
		ExactRetry:   true,
		Conservative: true,
	}, nil
}

func checkAssumed(assumed int64) error {
	switch {
	case assumed < 0:
		return fmt.Errorf("inflight: the assumed service time must not be negative, got %d µs", assumed)
	case assumed > algos.MaxTime:
		return fmt.Errorf("inflight: an assumed service time of %d µs is longer than algos.MaxTime", assumed)
	}
	return nil
}

// Promise is all a cap of l.Burst in flight promises about the times of
// its admits: at most l.Burst requests admitted within any single µs,
// which holds because every admitted request holds at least one unit for
// at least 1 µs. It says nothing of any longer interval, and its check
// counts requests, not units. The check reports the first µs holding more.
func Promise(l algos.Limit) algos.Promise {
	text := fmt.Sprintf("at most %d requests admitted within any single µs (a cap of %d in flight, with every service time at least 1 µs; nothing about rate)", l.Burst, l.Burst)
	return algos.NewPromise(text, func(sorted []int64) *algos.Violation {
		if l.Burst < 1 {
			return &algos.Violation{Reason: fmt.Sprintf("promise: the cap in flight must be positive, got %d", l.Burst)}
		}
		// The longest run of one time: what algos.MostInAnyWindow(sorted, 1)
		// counts, stopping at the first run too long.
		for i := 0; i < len(sorted); {
			j := i
			for j < len(sorted) && sorted[j] == sorted[i] {
				j++
			}
			if n := int64(j - i); n > l.Burst {
				at := sorted[i]
				return &algos.Violation{From: at, To: at, Admits: n, Allowed: l.Burst, Reason: fmt.Sprintf(
					"%d requests admitted at %s, but a cap of %d in flight admits at most %d within one µs",
					n, algos.FormatTime(at), l.Burst, l.Burst)}
			}
			i = j
		}
		return nil
	})
}

// entry is one admitted request still held: cost units until end.
type entry struct {
	end, cost int64
}

// entries is a min-heap of held requests by end (container/heap).
type entries []entry

func (h entries) Len() int           { return len(h) }
func (h entries) Less(i, j int) bool { return h[i].end < h[j].end }
func (h entries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entries) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *entries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// keyState is one key: the requests it holds, their units, and the latest
// end among them (valid while any is held).
type keyState struct {
	held     entries
	inFlight int64
	lastEnd  int64
}

// Limiter is the concurrency limiter under one limit, holding every key.
// It implements limiter.Limiter, limiter.Weighed and limiter.Sized. It is
// not safe for concurrent use (limiters are not called concurrently).
type Limiter struct {
	limit   algos.Limit
	assumed int64
	keys    []keyState
	cells   int64
}

var (
	_ limiter.Weighed = (*Limiter)(nil)
	_ limiter.Sized   = (*Limiter)(nil)
)

// New returns a concurrency limiter with every key idle, capping each key
// at l.Burst units in flight and assuming a service time of assumed µs for
// a request that names none. It fails for an invalid limit or an assumed
// service time Spec would refuse.
func New(l algos.Limit, assumed int64) (*Limiter, error) {
	if err := checkAssumed(assumed); err != nil {
		return nil, err
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("inflight: invalid limit: %w", err)
	}
	return &Limiter{limit: l, assumed: assumed}, nil
}

// Allow is AllowWeighed with limiter.Weight{Cost: 1, Service: 0}: one unit
// for the assumed service time (an error when there is none).
func (c *Limiter) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	return c.AllowWeighed(ctx, key, now, limiter.Weight{Cost: 1})
}

// AllowWeighed decides a request of w.Cost units, held for w.Service µs
// (or the assumed service time when w.Service is 0), for key at now, as
// the package documentation describes: it first releases every request of
// key ending at or before now, then admits when the units in flight plus
// w.Cost are at most Burst. It fails, changing nothing, for an invalid
// Weight, a Service of 0 with no assumed service time, a service time
// longer than algos.MaxTime, a cost above Burst (it could never be
// admitted), a negative key or a time outside ±algos.MaxTime.
func (c *Limiter) AllowWeighed(_ context.Context, key int, now int64, w limiter.Weight) (algos.Decision, error) {
	if err := w.Validate(); err != nil {
		return algos.Decision{}, err
	}
	service := w.Service
	if service == 0 {
		service = c.assumed
	}
	switch {
	case key < 0:
		return algos.Decision{}, fmt.Errorf("inflight: negative key %d", key)
	case now < -algos.MaxTime || now > algos.MaxTime:
		return algos.Decision{}, fmt.Errorf("inflight: time %d µs is outside ±algos.MaxTime", now)
	case service == 0:
		return algos.Decision{}, fmt.Errorf("inflight: a request on key %d names no service time, and the limiter assumes none", key)
	case service > algos.MaxTime:
		return algos.Decision{}, fmt.Errorf("inflight: a service time of %d µs is longer than algos.MaxTime", service)
	case w.Cost > c.limit.Burst:
		return algos.Decision{}, fmt.Errorf("inflight: a request of cost %d can never fit under a cap of %d in flight", w.Cost, c.limit.Burst)
	}
	for key >= len(c.keys) {
		c.keys = append(c.keys, keyState{})
	}
	k := &c.keys[key]
	for len(k.held) > 0 && k.held[0].end <= now {
		k.inFlight -= heap.Pop(&k.held).(entry).cost
		c.cells--
	}

	var d algos.Decision
	if w.Cost <= c.limit.Burst-k.inFlight {
		end := now + service
		if len(k.held) == 0 || end > k.lastEnd {
			k.lastEnd = end
		}
		heap.Push(&k.held, entry{end: end, cost: w.Cost})
		k.inFlight += w.Cost
		c.cells++
		d.Allowed = true
	} else {
		d.RetryAfter = k.freeAt(k.inFlight+w.Cost-c.limit.Burst) - now
	}
	d.Remaining = c.limit.Burst - k.inFlight
	if len(k.held) > 0 {
		d.Reset = k.lastEnd - now
	}
	return d, nil
}

// freeAt is the earliest end by which the requests held release at least
// need units (0 < need ≤ the units in flight). It visits the heap's
// entries in order of end without changing the heap: a second heap holds
// the frontier, the children of every entry visited, so it costs
// O(m log m) for the m entries it releases, not the whole heap.
func (k *keyState) freeAt(need int64) int64 {
	f := frontier{held: k.held, idx: []int{0}}
	var freed int64
	for f.Len() > 0 {
		i := heap.Pop(&f).(int)
		if freed += k.held[i].cost; freed >= need {
			return k.held[i].end
		}
		for _, child := range []int{2*i + 1, 2*i + 2} {
			if child < len(k.held) {
				heap.Push(&f, child)
			}
		}
	}
	return k.lastEnd // unreachable while need ≤ the units in flight
}

// frontier is a min-heap of indices into held, by their entries' end.
type frontier struct {
	held entries
	idx  []int
}

func (f *frontier) Len() int           { return len(f.idx) }
func (f *frontier) Less(i, j int) bool { return f.held[f.idx[i]].end < f.held[f.idx[j]].end }
func (f *frontier) Swap(i, j int)      { f.idx[i], f.idx[j] = f.idx[j], f.idx[i] }
func (f *frontier) Push(x any)         { f.idx = append(f.idx, x.(int)) }
func (f *frontier) Pop() any {
	i := f.idx[len(f.idx)-1]
	f.idx = f.idx[:len(f.idx)-1]
	return i
}

// Cells is the number of admitted requests still held over all keys: those
// not yet released as of the latest call on their key (a request whose end
// has passed stays held until its key is next asked about, as a store's
// sorted set keeps an ended entry until the next ZREMRANGEBYSCORE).
func (c *Limiter) Cells() int64 { return c.cells }

// InFlight is the units key holds as of its latest call: its admitted
// requests not yet released.
func (c *Limiter) InFlight(key int) int64 {
	if key < 0 || key >= len(c.keys) {
		return 0
	}
	return c.keys[key].inFlight
}
