package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
)

// Outcome is what happened to one request: whether it was admitted, the
// true time it was decided, and the node that handled it (0 for Ideal).
//
// "Decided" is where the promise is checked: for the atomic store
// deployments, when the script ran in the store; for Ideal and the local
// deployments, when the request reached its node (its send time); for
// GetSet, when the GET's reply reached the node and it decided on its copy.
type Outcome struct {
	Decided  int64
	Node     int32
	Admitted bool
}

// KeyResult totals one key over a run. Violation is the first place the
// key's admits, placed at their true decision times, break
// Algorithm.Promise(Limit), or nil if they keep it.
type KeyResult struct {
	Requests  int
	Admitted  int
	Violation *algos.Violation
}

// Result is one run. Outcomes is parallel to Config.Requests; Keys has one
// entry per key index up to the largest key in the requests.
type Result struct {
	Outcomes []Outcome
	Keys     []KeyResult

	admits []int64 // each key's admit times, sorted, in its own region
	starts []int   // key k's region starts at admits[starts[k]]
}

// AdmitTimes returns the true decision times of key's admits, sorted. The
// slice shares memory with r: read it, do not modify it. A key the run never
// saw has none.
func (r Result) AdmitTimes(key int) []int64 {
	if key < 0 || key >= len(r.Keys) {
		return nil
	}
	from := r.starts[key]
	return r.admits[from : from+r.Keys[key].Admitted : from+r.Keys[key].Admitted]
}

// Violations counts the keys whose admits broke the promise.
func (r Result) Violations() int {
	n := 0
	for _, k := range r.Keys {
		if k.Violation != nil {
			n++
		}
	}
	return n
}

// Run simulates cfg and checks every key's admits against the algorithm's
// promise. It returns an error, and never panics, for an invalid Config
// (see Config.Validate). The same Config always gives the same Result.
func Run(cfg Config) (Result, error) {
	keys, err := cfg.validate()
	if err != nil {
		return Result{}, err
	}
	local, err := cfg.localLimit()
	if err != nil {
		return Result{}, err
	}
	if cfg.Deployment.local() && int64(cfg.Nodes)*int64(keys) > 1<<24 {
		return Result{}, fmt.Errorf("model: %d nodes × %d keys is more local state than the model keeps (2^24)", cfg.Nodes, keys)
	}
	n := len(cfg.Requests)
	r := &runner{
		cfg:    &cfg,
		decide: cfg.Algorithm.Decide,
		plan:   make([]Planned, n),
		res: Result{
			Outcomes: make([]Outcome, n),
			Keys:     make([]KeyResult, keys),
			admits:   make([]int64, n),
			starts:   make([]int, keys),
		},
	}
	cfg.plan(r.plan)
	for _, a := range cfg.Requests {
		r.res.Keys[a.Key].Requests++
	}
	for k, from := 0, 0; k < keys; k++ {
		r.res.starts[k] = from
		from += r.res.Keys[k].Requests
	}

	switch d := cfg.Deployment; {
	case d == Ideal:
		r.runIdeal()
	case d.usesStore():
		r.runStore()
	case d.local():
		r.runLocal(local)
	}

	promise := cfg.Algorithm.Promise(cfg.Limit)
	for k := range r.res.Keys {
		times := r.res.AdmitTimes(k)
		if !slices.IsSorted(times) {
			slices.Sort(times) // GetSet decides out of store order
		}
		r.res.Keys[k].Violation = promise.CheckAdmits(times)
	}
	return r.res, nil
}

// runner is one run's working state.
type runner struct {
	cfg    *Config
	decide algos.DecideFunc
	plan   []Planned
	res    Result

	slots []slot  // GetSet: the copies in flight
	free  []int32 // GetSet: unused slots
}

// slot is one GET/SET request in flight: the copy it read and decides on,
// and the true time it decides.
type slot struct {
	st       algos.State
	decideAt int64
}

// record stores request i's outcome.
func (r *runner) record(i int, at int64, node int, admitted bool) {
	r.res.Outcomes[i] = Outcome{Decided: at, Node: int32(node), Admitted: admitted}
	if admitted {
		k := &r.res.Keys[r.plan[i].Key]
		r.res.admits[r.res.starts[r.plan[i].Key]+k.Admitted] = at
		k.Admitted++
	}
}

func (r *runner) runIdeal() {
	states := make([]algos.State, len(r.res.Keys))
	l := r.cfg.Limit
	for i := range r.plan {
		p := &r.plan[i]
		d := r.decide(&states[p.Key], p.Send, l)
		r.record(i, p.Send, 0, d.Allowed)
	}
}

// runLocal: every node keeps its own state per key and decides on its own
// clock when the request reaches it; a restart drops the node's state.
func (r *runner) runLocal(l algos.Limit) {
	c := r.cfg
	keys := len(r.res.Keys)
	states := make([]algos.State, c.Nodes*keys)
	var restarts []Stream
	var next []int64
	if c.RestartEvery > 0 {
		restarts = make([]Stream, c.Nodes)
		next = make([]int64, c.Nodes)
		for i := range restarts {
			restarts[i] = NewStream(c.Seed, purposeRestart|uint64(i))
			next[i] = 1 + int64(restarts[i].Below(uint64(2*c.RestartEvery)))
		}
	}
	for i := range r.plan {
		p := &r.plan[i]
		own := states[p.Node*keys : (p.Node+1)*keys]
		if next != nil {
			for next[p.Node] <= p.Send {
				clear(own)
				next[p.Node] += 1 + int64(restarts[p.Node].Below(uint64(2*c.RestartEvery)))
			}
		}
		d := r.decide(&own[p.Key], p.Clock, l)
		r.record(i, p.Send, p.Node, d.Allowed)
	}
}

// runStore plays the store deployments. Requests are taken in send order;
// each one's operations are pushed with the true time they reach the store,
// and every operation that no later request can precede (it reaches the
// store no later than the next send) is run, in (time, request, GET before
// SET) order.
func (r *runner) runStore() {
	c := r.cfg
	store := &Store{decide: r.decide, limit: c.Limit, states: make([]algos.State, len(r.res.Keys))} // what replay.Replay drives too
	legs := c.legs()
	out, back, set := newLeg(legs.Out, c.Jitter), newLeg(legs.Back, c.Jitter), newLeg(legs.Set, c.Jitter)
	outs := NewStream(c.Seed, purposeOut)
	rest := NewStream(c.Seed, purposeBack)
	getSet := c.Deployment == GetSet
	nodeClock := c.Deployment == NodeClock
	wipe := c.Deployment == StoreWiped
	h := make(eventHeap, 0, 64)
	for i := range r.plan {
		p := &r.plan[i]
		at := p.Send + out.draw(&outs)
		seq := 2 * int64(i)
		if getSet {
			decideAt := at + back.draw(&rest)
			setAt := decideAt + set.draw(&rest)
			s := r.alloc(decideAt)
			h.push(event{t: at, seq: seq, slot: s})
			h.push(event{t: setAt, seq: seq + 1, slot: s})
		} else {
			h.push(event{t: at, seq: seq})
		}
		next := int64(math.MaxInt64)
		if i+1 < len(r.plan) {
			next = r.plan[i+1].Send
		}
		for len(h) > 0 && h[0].t <= next {
			ev := h.pop()
			if wipe && ev.t >= c.WipeAt {
				store.Wipe()
				wipe = false
			}
			j := int(ev.seq >> 1)
			q := &r.plan[j]
			switch {
			case !getSet:
				told := ev.t
				if nodeClock {
					told = q.Clock
				}
				r.record(j, ev.t, q.Node, store.Call(q.Key, told).Allowed)
			case ev.seq&1 == 0: // GET: read a copy; the node decides on it when the reply arrives
				sl := &r.slots[ev.slot]
				store.GetInto(q.Key, &sl.st)
				d := r.decide(&sl.st, q.Clock+(sl.decideAt-q.Send), c.Limit)
				r.record(j, sl.decideAt, q.Node, d.Allowed)
			default: // SET: the node's copy overwrites the store
				store.Set(q.Key, r.slots[ev.slot].st)
				r.free = append(r.free, ev.slot)
			}
		}
	}
}

// alloc takes a free slot for a GET/SET in flight.
func (r *runner) alloc(decideAt int64) int32 {
	var s int32
	if n := len(r.free); n > 0 {
		s = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		s = int32(len(r.slots))
		r.slots = append(r.slots, slot{})
	}
	r.slots[s].decideAt = decideAt
	return s
}

// event is one operation reaching the store at true time t. seq is twice
// the request's index, plus one for a SET: ties in t run in request order,
// and a request's GET runs before its SET.
type event struct {
	t    int64
	seq  int64
	slot int32
}

func (a event) before(b event) bool { return a.t < b.t || (a.t == b.t && a.seq < b.seq) }

// eventHeap is a binary min-heap of events, written out for the two
// operations the store needs (no interface, no allocation once grown).
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].before(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if rr := l + 1; rr < len(s) && s[rr].before(s[l]) {
			m = rr
		}
		if !s[m].before(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
