package fleet

import (
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
)

// Occurrence is one thing a fleet did, as a recorded run hands it to
// Replay: a node deciding a request, or a node's tick. A live fleet's timers fire
// late and its load balancer need not be a round robin; a replay takes
// both as they happened instead of the model's schedule.
type Occurrence struct {
	// At is when, in µs on the calls' clock.
	At int64
	// Node is the node that decided the request, or that ticked.
	Node int
	// Key and Cost (at least 1) are the request's; a tick has neither.
	Key  int
	Cost int64
	// Tick marks a tick of Node instead of a request: for the cached
	// counter, Node's sync (every key it holds); for the owner fleet,
	// Node's broadcast of every key it owns.
	Tick bool
}

func (e Occurrence) check(nodes int) error {
	switch {
	case e.Node < 0 || e.Node >= nodes:
		return fmt.Errorf("fleet: node %d is outside a fleet of %d", e.Node, nodes)
	case e.At < -algos.MaxTime || e.At > algos.MaxTime:
		return fmt.Errorf("fleet: time %d µs is outside ±algos.MaxTime", e.At)
	case e.Tick:
		return nil
	case e.Cost < 1:
		return fmt.Errorf("fleet: a request's cost must be at least 1, got %d", e.Cost)
	case e.Key < 0:
		return fmt.Errorf("fleet: negative key %d", e.Key)
	}
	return nil
}

// Replay plays events, in the order given, on a fresh cached-counter fleet
// c enforcing l, and returns the decision of each (the zero Decision for a
// tick). Each request is decided by its Node, and each node syncs at its
// ticks only: Sync's schedule is not applied, but a Sync of 0 still makes
// the fleet synchronous (every tick does nothing). Fed the ticks of the
// schedule (every k·Sync + Offset(j), before the requests of the same µs,
// in node order) it decides every request as Spec's limiter does.
func (c CachedCounter) Replay(l algos.Limit, events []Occurrence) ([]algos.Decision, error) {
	f, err := New(c, l)
	if err != nil {
		return nil, err
	}
	tick := func(e Occurrence) {
		for key := range f.keys {
			if k := &f.keys[key]; k.views != nil {
				f.sync(k, e.Node, e.At)
			}
		}
	}
	return replay(c.Nodes, c.Sync, events, tick, f.decideOn)
}

// decideOn is AllowWeighed's decision on node, with no sync applied.
func (f *Limiter) decideOn(node, key int, now, cost int64) algos.Decision {
	for key >= len(f.keys) {
		f.keys = append(f.keys, keyState{})
	}
	k := &f.keys[key]
	f.calls++
	f.handled[node]++
	idx := algos.FloorDiv(now, f.limit.Window)
	end := (idx+1)*f.limit.Window - now
	if f.cfg.Sync == 0 {
		return f.decideSynchronous(k, idx, end, cost)
	}
	if k.views == nil {
		k.seen, k.upto = true, now
		k.views = make([]view, f.cfg.Nodes)
	}
	return f.decideOnView(k, node, idx, end, cost)
}

// Replay plays events, in the order given, on a fresh owner fleet c
// enforcing l, and returns the decision of each (the zero Decision for a
// tick). Each request is decided by its Node, and a tick of node j is its
// broadcast of every key it owns that has been asked about: Sync's schedule
// is not applied, but a Sync of 0 still makes the fleet synchronous. Fed
// the broadcasts of the schedule (before the requests of the same µs) it
// decides every request as Spec's limiter does.
func (c OwnerConfig) Replay(l algos.Limit, events []Occurrence) ([]algos.Decision, error) {
	o, err := NewOwner(c, l)
	if err != nil {
		return nil, err
	}
	o.manual = true
	tick := func(e Occurrence) {
		for key := e.Node; key < len(o.keys); key += c.Nodes {
			o.broadcast(key, &o.keys[key], e.At)
		}
	}
	return replay(c.Nodes, c.Sync, events, tick, o.decide)
}

// replay is both fleets' Replay on a fleet of nodes nodes syncing every
// sync µs: each event checked, a tick handed to tick (none when sync is 0,
// where the fleet is synchronous) and decided as the zero Decision, a
// request decided by decide on its node.
func replay(nodes int, sync int64, events []Occurrence, tick func(Occurrence), decide func(node, key int, now, cost int64) algos.Decision) ([]algos.Decision, error) {
	out := make([]algos.Decision, len(events))
	for i, e := range events {
		if err := e.check(nodes); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		if e.Tick {
			if sync > 0 {
				tick(e)
			}
			continue
		}
		out[i] = decide(e.Node, e.Key, e.At, e.Cost)
	}
	return out, nil
}
