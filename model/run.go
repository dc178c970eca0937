package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/record"
)

// Outcome is what happened to one request: whether it was admitted, the
// true time it was decided, its key (its index in Result.Keys), and the
// node that handled it (0 for Ideal).
//
// "Decided" is where the promise is checked: for the atomic store
// deployments, when the script ran in the store; for Ideal and the local
// deployments, when the request reached its node (its send time); for
// GetSet, when the GET's reply reached the node and it decided on its copy.
//
// Failed is set when the limiter answered an error instead of a decision:
// the request is then neither admitted nor denied, and is counted in
// KeyResult.Errors. Panicked is set too when that error was a panic
// (limiter.Panic).
//
// Told is the time the limiter was told or read for it, carried from the
// decision so that no judge rebuilds it: the sending node's clock when it
// sent (NodeClock, LocalSplit, LocalFull; Ideal's node has a true clock),
// the store's clock when it decided (StoreClock, StoreWiped), and the
// node's clock when the GET's reply reached it (GetSet).
//
// Remaining, RetryAfter and Reset are the rest of the answer (0 for an
// error), for the judge to hold against what no limiter may say and against
// the admits before it.
type Outcome struct {
	Decided    int64
	Told       int64
	Remaining  int64
	RetryAfter int64
	Reset      int64
	Key        int32
	Node       int32
	Admitted   bool
	Failed     bool
	Panicked   bool
}

// Decision is the answer o records (the zero Decision for an error).
func (o *Outcome) Decision() algos.Decision {
	return algos.Decision{Allowed: o.Admitted, Remaining: o.Remaining, RetryAfter: o.RetryAfter, Reset: o.Reset}
}

// KeyResult totals one key over a run. Errors counts the requests the
// limiter answered with an error. Violation is the first place the key's
// admits, placed at their true decision times, break Limiter.Promise(Limit),
// or nil if they keep it.
type KeyResult struct {
	Requests  int
	Admitted  int
	Errors    int
	Violation *algos.Violation
}

// Result is one run. Outcomes is parallel to Config.Requests, followed by
// the closed-loop clients' requests in the order they were sent
// (LoopRequests, planned as Plan plans the others); Keys has one entry per
// key index up to the largest key in the requests and the clients.
//
// FirstError is the first error the limiter answered, in request order,
// with the request it answered, or nil when it answered none.
//
// Order lists the indices of Outcomes in the order the run decided them:
// the order the store ran its scripts, each node its decisions. In every
// deployment but GetSet (whose nodes decide on their copies in the order
// the GETs reached the store, each when its reply arrives) that is by
// Outcome.Decided, ties in request order.
type Result struct {
	Outcomes     []Outcome
	LoopRequests []Planned
	Order        []int32
	Keys         []KeyResult
	FirstError   error

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

// Admitted counts the admits of every key.
func (r Result) Admitted() int {
	n := 0
	for _, k := range r.Keys {
		n += k.Admitted
	}
	return n
}

// Errors counts the requests the limiter answered with an error.
func (r Result) Errors() int {
	n := 0
	for _, k := range r.Keys {
		n += k.Errors
	}
	return n
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

// Run simulates cfg and checks every key's admits against the limiter's
// promise. It returns an error, and never panics, for an invalid Config
// (see Config.Validate), a deployment the limiter does not fit (a
// *NotApplicableError) and a limiter that cannot be made; an error the
// limiter answers a request with is counted in the Result instead. The same
// Config always gives the same Result, for a limiter that is itself
// deterministic.
func Run(cfg Config) (Result, error) {
	var res Result
	err := run(cfg, &res, false)
	return res, err
}

// RunInto is Run with its Result written into *res: the same Result, in
// the memory *res holds from an earlier run (its outcomes, closed-loop
// requests, keys and admit times), grown where this run needs more. A
// program that plays many runs one after another and is done with each
// Result before the next (a hunt's worker) keeps one Result and allocates
// per run only what outgrows it. *res is overwritten whole, so nothing
// taken from the earlier Result (a slice, AdmitTimes) may be used after;
// the Violations and FirstError it pointed to are not reused. On an error
// *res is the zero Result.
func RunInto(cfg Config, res *Result) error {
	err := run(cfg, res, true)
	if err != nil {
		*res = Result{}
	}
	return err
}

// run is Run into *res, reusing its memory when reuse is set.
func run(cfg Config, res *Result, reuse bool) error {
	s := scratchPool.Get().(*scratch)
	// The requests of the scratch's last run, compared whole once: when
	// they are these, neither their check nor their plan is made again.
	// (The memo keeps what it holds until planInto replaces it whole.)
	same := s.memo.requests != nil && slices.Equal(s.memo.requests, cfg.Requests)
	known := s.memo.known
	keys, err := cfg.validateKnown(&known, same)
	var local algos.Limit
	if err == nil {
		local, err = cfg.localLimit()
	}
	if err == nil && cfg.Deployment.PerNode() && int64(cfg.Nodes)*int64(keys) > 1<<24 {
		err = fmt.Errorf("model: %d nodes × %d keys is more local state than the model keeps (2^24)", cfg.Nodes, keys)
	}
	if err != nil {
		scratchPool.Put(s)
		return err
	}
	n := len(cfg.Requests)
	algo, pure := cfg.Limiter.Algorithm()
	r := &runner{
		cfg:    &cfg,
		algo:   algo,
		pure:   pure,
		static: n,
	}
	if !pure {
		r.nodeTime = limiter.NewNodeTimeContext(context.Background())
	}
	if reuse {
		r.res = Result{
			Outcomes:     res.Outcomes[:0],
			LoopRequests: res.LoopRequests[:0],
			Order:        res.Order[:0],
			Keys:         slices.Grow(res.Keys[:0], keys)[:keys],
			admits:       res.admits[:0],
			starts:       res.starts[:0],
		}
		clear(r.res.Keys)
		r.reuse = true
	} else {
		r.res.Keys = make([]KeyResult, keys)
		r.res.Order = make([]int32, 0, n)
	}
	defer r.giveBack(s)
	r.borrow(s, n)
	s.planInto(&cfg, r.plan, same, known)
	r.memo = &s.memo
	if err := r.startLoop(); err != nil {
		return err
	}

	switch d := cfg.Deployment; {
	case d == Ideal:
		err = r.runIdeal()
	case d.usesStore():
		err = r.runStore()
	case d.PerNode():
		err = r.runLocal(local)
	}
	if err != nil {
		return err
	}
	r.tally()

	promise := cfg.Limiter.Promise(cfg.Limit)
	for k := range r.res.Keys {
		r.res.Keys[k].Violation = promise.CheckAdmits(r.res.AdmitTimes(k))
	}
	*res = r.res
	return nil
}

// tally places each key's admit times, sorted, in its own region of
// admits, and gives the Result its own copies of what the run kept in
// scratch memory. record and fail counted the requests as they were
// decided.
func (r *runner) tally() {
	res := &r.res
	switch {
	case r.reuse: // res's own memory from an earlier run (run)
		res.Outcomes = r.out
		if len(r.plan) > r.static {
			res.LoopRequests = append(res.LoopRequests, r.plan[r.static:]...)
		}
	case !r.outPooled:
		res.Outcomes = r.out // allocated for the Result (borrow)
	default:
		res.Outcomes = slices.Clone(r.out)
		if len(r.plan) > r.static {
			res.LoopRequests = slices.Clone(r.plan[r.static:])
		}
	}
	nk := len(res.Keys)
	if r.reuse {
		res.starts = slices.Grow(res.starts, 2*nk)[:2*nk]
	} else {
		res.starts = make([]int, 2*nk)
	}
	// next (the second half) is where each key's next admit goes below;
	// the Result keeps the first.
	next := res.starts[nk : 2*nk]
	res.starts = res.starts[:nk]
	admitted := 0
	for k := range res.Keys {
		res.starts[k] = admitted
		next[k] = admitted
		admitted += res.Keys[k].Admitted
	}
	// A counting sort of the admits by key; within a key they are in the
	// order they were decided, and sorted below when that is not time order.
	if r.reuse {
		res.admits = slices.Grow(res.admits, admitted)[:admitted]
	} else {
		res.admits = make([]int64, admitted)
	}
	for _, a := range r.admitted {
		res.admits[next[a.key]] = a.at
		next[a.key]++
	}
	for k := range res.Keys {
		if times := res.AdmitTimes(k); !slices.IsSorted(times) {
			// GetSet and closed-loop clients decide out of request order,
			// but never far out: by a leg's jitter.
			sortNearlySorted(times)
		}
	}
}

// runner is one run's working state.
type runner struct {
	cfg      *Config
	algo     algos.Algorithm          // the pure algorithm, when pure
	pure     bool                     // the limiter is a pure algorithm, run on Store
	nodeTime *limiter.NodeTimeContext // the context of every call of a Limiter
	plan     []Planned                // the static requests, then the closed-loop ones as they are sent
	out      []Outcome                // parallel to plan; tally hands it (or a copy) to res
	res      Result
	static   int        // len(Config.Requests)
	next     int        // the next static request to send
	loop     *loopState // nil without closed-loop clients
	owner    []int32    // the client of each closed-loop request, by index - static

	// outPooled is true when out is scratch memory (closed-loop clients
	// append to it), so that the Result gets a copy.
	outPooled bool
	// reuse is true when res holds the memory of an earlier Result
	// (RunInto): out is its Outcomes, and the Result keeps its own.
	reuse bool

	slots []slot  // GetSet: the copies in flight
	free  []int32 // GetSet: unused slots

	static2  []packedEvent // the static requests' operations, sorted (runStore)
	staticKN []keyNode     // parallel to static2: each operation's key and node
	memo     *memo         // what plan and static2 hold from earlier runs
	decideAt []int64       // GetSet: each static request's decision time
	slotOf   []int32       // GetSet: each static request's slot, from its GET

	admitted []admit // every admit, in the order decided
}

// keyNode is a static request's key and node, kept beside its sorted
// operations (runner.staticKN) so that running them reads one small array
// in order instead of the plan in the order the store runs them.
type keyNode struct {
	key, node int32
}

// admit is one admitted request: its key and its true decision time.
type admit struct {
	key int32 // < record.MaxKeys
	at  int64
}

// scratch is the memory a run works in and drops when it ends: the plan,
// the outcomes of a run with closed-loop clients (which grow as the clients
// send), and the free lists of what is in flight. Runs take it from
// scratchPool and give it back, so that a program playing thousands of runs
// (a matrix, a sweep, a hunt) does not allocate, copy as it grows and
// collect all of it again for every run. Nothing in it outlives the run
// that borrowed it: tally copies what the Result keeps. Nothing a run
// left in it reaches the next run's result: borrow empties every slice, and
// the plan and the outcomes are overwritten whole, except where memo shows
// that the next run would write them exactly as they are.
type scratch struct {
	plan     []Planned
	static   []packedEvent
	staticKN []keyNode
	decideAt []int64
	slotOf   []int32
	memo     memo
	out      []Outcome
	slots    []slot
	free     []int32
	owner    []int32
	admitted []admit
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// memo says what the plan and the static operations in a scratch were
// made from, so that the next run of the same traffic, seed and shape (a
// matrix's, a sweep's or a hunt's next limiter on the same seed) uses them
// instead of drawing and sorting them again. Both depend on nothing else:
// the plan on the requests, the seed, the nodes, their clocks and whether
// the run is ideal; the static operations on the plan, the legs, the
// jitter and whether the run is GET/SET. The requests are compared whole,
// so a caller that reuses a Requests slice with other contents is
// planned afresh.
type memo struct {
	requests []record.Request // a copy; nil: no plan remembered
	known    knownRequests    // how the last requests checked were checked
	plan     planShape
	// static: what scratch.static (and decideAt) were made from, valid
	// while the plan is the same one (staticPlan == planGen).
	staticOK   bool
	static     staticShape
	planGen    uint64
	staticPlan uint64
}

// planShape is what Config.plan reads besides the requests (with no clock
// faults: a run with Clocks is never remembered).
type planShape struct {
	seed   uint64
	nodes  int
	skew   int64
	pinned bool
	ideal  bool
}

type staticShape struct {
	legs   Legs
	jitter int
	getSet bool
}

func shapeOf(c *Config) planShape {
	return planShape{seed: c.Seed, nodes: c.Nodes, skew: c.Skew, pinned: c.Pinned, ideal: c.Deployment == Ideal}
}

// planInto fills r.plan (the scratch's) for c, or leaves it as the last
// run planned it when that run's plan is this one's. same says that c's
// requests are those memo holds (run compared them), and known how they
// were checked (validateKnown), which memo keeps with them.
func (s *scratch) planInto(c *Config, plan []Planned, same bool, known knownRequests) {
	s.memo.known = known // of c's requests, whichever memo keeps below
	shape := shapeOf(c)
	if c.Clocks.IsZero() && same && s.memo.plan == shape {
		return // plan already holds it: nothing since has written its first len(c.Requests)
	}
	c.plan(plan)
	s.memo.planGen++
	buf := s.memo.requests[:0]
	s.memo.requests = nil
	if c.Clocks.IsZero() {
		s.memo.requests = append(buf, c.Requests...)
		s.memo.plan = shape
	}
}

// borrow makes r work in s, for n static requests.
func (r *runner) borrow(s *scratch, n int) {
	r.plan = slices.Grow(s.plan[:0], n)[:n]
	r.outPooled = len(r.cfg.Loop) > 0 && !r.reuse
	// Memory of an earlier run is not cleared: a run that ends without an
	// error has decided, and so written, every one of its outcomes (and
	// one that ends with an error hands none of them out).
	switch {
	case r.reuse:
		r.out = slices.Grow(r.res.Outcomes[:0], n)[:n]
	case r.outPooled:
		r.out = slices.Grow(s.out[:0], n)[:n]
	default:
		// The outcomes are exactly the static requests': allocate them for
		// the Result at once, and copy nothing at the end.
		r.out = make([]Outcome, n)
	}
	r.slots, r.free = s.slots[:0], s.free[:0]
	r.owner = s.owner[:0]
	r.static2, r.staticKN, r.decideAt, r.slotOf = s.static[:0], s.staticKN[:0], s.decideAt[:0], s.slotOf[:0]
	// At most one admit per static request (and the closed-loop clients'
	// beyond): sized once, so that a run on a fresh scratch (sync.Pool
	// drops some under the race detector) allocates the same whatever n.
	r.admitted = slices.Grow(s.admitted[:0], n)
}

// giveBack returns r's scratch memory, grown as the run needed, to the pool.
func (r *runner) giveBack(s *scratch) {
	s.plan = r.plan[:0]
	if r.outPooled {
		s.out = r.out[:0]
	}
	s.owner = r.owner[:0]
	s.admitted = r.admitted[:0]
	s.slots, s.free = r.slots[:0], r.free[:0]
	s.static, s.staticKN, s.decideAt, s.slotOf = r.static2[:0], r.staticKN[:0], r.decideAt[:0], r.slotOf[:0]
	scratchPool.Put(s)
}

// slot is one GET/SET request in flight: the copy it read and decides on,
// and the true time it decides.
type slot struct {
	st       algos.State
	d        algos.Decision
	decideAt int64
}

// record stores request i's outcome (for key, the limiter told told,
// decided at true time at on node) and counts it for its key; tally places
// the admits once the run ends.
func (r *runner) record(i, key int, told, at int64, node int, d *algos.Decision) {
	o := &r.out[i] // field by field: a composite literal is zeroed in place first
	o.Decided, o.Told, o.Remaining, o.RetryAfter, o.Reset = at, told, d.Remaining, d.RetryAfter, d.Reset
	o.Key, o.Node, o.Admitted, o.Failed, o.Panicked = int32(key), int32(node), d.Allowed, false, false
	r.res.Order = append(r.res.Order, int32(i))
	k := &r.res.Keys[key]
	k.Requests++
	if d.Allowed {
		k.Admitted++
		r.admitted = append(r.admitted, admit{key: int32(key), at: at})
	}
}

// decider is where the requests of one node (or of the store) are decided:
// a Store for a pure algorithm, a Limiter made by the Spec otherwise.
type decider struct {
	r     *runner
	limit algos.Limit
	store *Store
	lim   limiter.Limiter
	// dec is where a Limiter writes its decision (limiter.AllowInto): a
	// Decision handed to a limiter.Into escapes, and one on the stack would
	// be allocated anew for every request.
	dec algos.Decision
}

// open makes the decider fresh: every key absent.
func (r *runner) open(l algos.Limit) (*decider, error) {
	d := &decider{r: r, limit: l}
	if r.pure {
		d.store = newStore(r.algo, l, len(r.res.Keys))
		return d, nil
	}
	lim, err := r.cfg.Limiter.Open(l)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	d.lim = lim
	return d, nil
}

// wipe drops every key: a Store forgets them, a Limiter is closed and made
// anew.
func (d *decider) wipe() error {
	if d.store != nil {
		d.store.Wipe()
		return nil
	}
	if err := d.close(); err != nil {
		return err
	}
	fresh, err := d.r.open(d.limit)
	if err != nil {
		return err
	}
	d.lim = fresh.lim
	return nil
}

func (d *decider) close() error {
	if d == nil || d.lim == nil {
		return nil
	}
	lim := d.lim
	d.lim = nil
	if err := limiter.Close(lim); err != nil {
		return fmt.Errorf("model: closing %s: %w", d.r.cfg.Limiter.Name, err)
	}
	return nil
}

// decide decides request i for its key at store time at (by which keys
// expire), telling the limiter now, records the outcome as decided at true
// time decided on node, and writes the decision to *out (the zero Decision
// for an error) and returns the limiter's error.
//
// The decision goes out through a pointer, not as a result: a Decision has
// five fields, too many for the compiler to keep in registers, so every
// call that returns one has its result stored in narrow moves and copied
// in wider ones, which the processor cannot forward from those stores (a
// stall as long as the decision itself). The model copies one field by
// field (copyDecision), and takes each from a call once.
func (d *decider) decide(i int, at, now, decided int64, node int, out *algos.Decision) error {
	key := d.r.plan[i].Key
	if d.store != nil {
		d.store.SetClock(at)
		var dec algos.Decision
		if st := d.store.keys.Fast(key); st != nil {
			d.store.decideInto(st, now, &dec)
		} else {
			dec = d.store.Call(key, now)
		}
		d.r.record(i, key, now, decided, node, &dec)
		copyDecision(out, &dec)
		return nil
	}
	// The node's clock at sending, for a limiter that sends it along (and
	// for the judge to see that a store-clock limiter ignores it).
	d.r.nodeTime.Set(d.r.plan[i].Told)
	err := limiter.AllowInto(d.r.nodeTime, d.lim, key, now, &d.dec)
	copyDecision(out, &d.dec)
	if err != nil {
		d.r.fail(i, key, now, decided, node, err)
		copyDecision(out, &algos.Decision{})
		return err
	}
	d.r.record(i, key, now, decided, node, out)
	return nil
}

// copyDecision is *dst = *src, field by field (decider.decide says why).
func copyDecision(dst, src *algos.Decision) {
	dst.Allowed, dst.Remaining, dst.RetryAfter, dst.Reset, dst.Delay = src.Allowed, src.Remaining, src.RetryAfter, src.Reset, src.Delay
}

// fail records that the limiter answered request i (for key, told told)
// with err.
func (r *runner) fail(i, key int, told, at int64, node int, err error) {
	var panicked *limiter.Panic
	r.out[i] = Outcome{Decided: at, Told: told, Key: int32(key), Node: int32(node), Failed: true, Panicked: errors.As(err, &panicked)}
	r.res.Order = append(r.res.Order, int32(i))
	k := &r.res.Keys[key]
	k.Requests++
	k.Errors++
	if r.res.FirstError == nil {
		r.res.FirstError = fmt.Errorf("request %d (key %d, sent at %s): %w", i, key, algos.FormatTime(r.plan[i].Sent), err)
	}
}

func (r *runner) runIdeal() error {
	d, err := r.open(r.cfg.Limit)
	if err != nil {
		return err
	}
	for {
		if d.store != nil {
			// The static requests sent before the next closed-loop one,
			// decided without the general path's sending (runLocal).
			until := r.nextLoopSend()
			for r.next < r.static {
				p := &r.plan[r.next]
				if p.Sent > until {
					break
				}
				d.store.SetClock(p.Sent)
				var dec algos.Decision
				if st := d.store.keys.Fast(p.Key); st != nil {
					d.store.decideInto(st, p.Sent, &dec)
				} else {
					dec = d.store.Call(p.Key, p.Sent)
				}
				r.record(r.next, p.Key, p.Sent, p.Sent, 0, &dec)
				r.next++
			}
		}
		if _, more := r.peekSend(); !more {
			break
		}
		i := r.takeSend()
		send := r.plan[i].Sent
		var dec algos.Decision
		err := d.decide(i, send, send, send, 0, &dec)
		if err := r.answer(i, send, &dec, err); err != nil {
			d.close()
			return err
		}
	}
	return d.close()
}

// runLocal: every node keeps its own state per key and decides on its own
// clock when the request reaches it; a restart drops the node's state.
func (r *runner) runLocal(l algos.Limit) (err error) {
	c := r.cfg
	nodes := make([]*decider, c.Nodes) // opened on a node's first request
	defer func() {
		for _, d := range nodes {
			if cerr := d.close(); err == nil {
				err = cerr
			}
		}
	}()
	var restarts []record.Stream
	var next []int64
	if c.RestartEvery > 0 {
		restarts = make([]record.Stream, c.Nodes)
		next = make([]int64, c.Nodes)
		for i := range restarts {
			restarts[i] = record.NewStream(c.Seed, purposeRestart|uint64(i))
			next[i] = 1 + int64(restarts[i].Below(uint64(2*c.RestartEvery)))
		}
	}
	for {
		if r.pure {
			// The static requests sent before the next closed-loop one,
			// decided here without the general path's sending: a static
			// request is no client's, so deciding one answers nobody and
			// the next closed-loop send stays where it is. A node not yet
			// opened, or due to restart, is left to the general path.
			until := r.nextLoopSend()
			for r.next < r.static {
				p := &r.plan[r.next]
				own := nodes[p.Node]
				if p.Sent > until || own == nil || (next != nil && next[p.Node] <= p.Sent) {
					break
				}
				own.store.SetClock(p.Sent)
				var dec algos.Decision
				if st := own.store.keys.Fast(p.Key); st == nil {
					dec = own.store.Call(p.Key, p.Told)
				} else if f := own.store.fields; f != nil { // decideInto, written out: once per request
					dec.Allowed, dec.Remaining, dec.RetryAfter, dec.Reset = f(st, p.Told, &own.store.limit)
				} else {
					own.store.decideCopy(st, p.Told, &dec)
				}
				r.record(r.next, p.Key, p.Told, p.Sent, p.Node, &dec)
				r.next++
			}
		}
		if _, more := r.peekSend(); !more {
			return nil
		}
		i := r.takeSend()
		p := r.plan[i]
		own := nodes[p.Node]
		if own == nil {
			if own, err = r.open(l); err != nil {
				return err
			}
			nodes[p.Node] = own
		}
		if next != nil {
			restarted := false
			for next[p.Node] <= p.Sent {
				restarted = true
				next[p.Node] += 1 + int64(restarts[p.Node].Below(uint64(2*c.RestartEvery)))
			}
			if restarted {
				if err := own.wipe(); err != nil {
					return err
				}
			}
		}
		var dec algos.Decision
		var derr error        // the limiter's answer, handed to the client
		if own.store != nil { // own.decide for a pure algorithm, written out: once per request
			own.store.SetClock(p.Sent)
			if st := own.store.keys.Fast(p.Key); st == nil {
				dec = own.store.Call(p.Key, p.Told)
			} else if f := own.store.fields; f != nil { // decideInto, written out
				dec.Allowed, dec.Remaining, dec.RetryAfter, dec.Reset = f(st, p.Told, &own.store.limit)
			} else {
				own.store.decideCopy(st, p.Told, &dec)
			}
			r.record(i, p.Key, p.Told, p.Sent, p.Node, &dec)
		} else {
			derr = own.decide(i, p.Sent, p.Told, p.Sent, p.Node, &dec)
		}
		if err := r.answer(i, p.Sent, &dec, derr); err != nil {
			return err
		}
	}
}

// runStore plays the store deployments. Requests are taken in send order;
// each one's operations are pushed with the true time they reach the store,
// and every operation that no later request can precede (it reaches the
// store no later than the next send) is run, in (time, request, GET before
// SET) order.
//
// The static requests' operations are not pushed one by one: their legs
// come from streams of their own, drawn in request order whatever the
// closed-loop clients do, so they are drawn and sorted once, before the run
// (staticEvents), and merged with the heap, which then holds only the
// closed-loop clients' operations and answers. When every leg to the store
// takes time, no operation of a request not yet sent can be due before the
// next send, so the merge runs the operations in exactly the order the heap
// alone would; with a leg of zero it might not, and the heap takes them all.
func (r *runner) runStore() (err error) {
	c := r.cfg
	d, err := r.open(c.Limit) // for a pure algorithm, the Store replay.Replay drives too
	if err != nil {
		return err
	}
	defer func() {
		if cerr := d.close(); err == nil {
			err = cerr
		}
	}()
	store := d.store
	var fields algos.FieldsFunc // store's, read once
	if store != nil {
		fields = store.fields
	}
	legs := c.legs()
	out, back, set := newLeg(legs.Out, c.Jitter), newLeg(legs.Back, c.Jitter), newLeg(legs.Set, c.Jitter)
	outs := record.NewStream(c.Seed, purposeOut)
	rest := record.NewStream(c.Seed, purposeBack)
	getSet := c.Deployment == GetSet
	nodeClock := c.Deployment == NodeClock
	wipe := c.Deployment == StoreWiped
	clocks := c.clockSet()
	// A GET/SET node's clock, read when its reply arrives: its offset, when
	// no clock drifts or steps (clockSet.node, without its call).
	offsets := clocks.offsets
	if clocks.drift != nil || clocks.steps != nil {
		offsets = nil
	}
	nodeAt := func(node int, t int64) int64 {
		if offsets != nil {
			return t + offsets[node]
		}
		return clocks.node(node, t)
	}
	limit := c.Limit
	h := make(eventHeap, 0, 64)
	static, sorted := r.staticEvents(out, back, set, &outs, &rest, getSet)
	si := 0 // the next of static to run
	if sorted {
		// Sending a static request now does nothing but hold back the
		// operations due after it: every operation due by a closed-loop
		// send still runs before it, as it reached the store first. So the
		// static requests count as sent, and only the closed-loop ones are
		// sent in turn.
		r.next = r.static
	}
	for {
		// Run every operation (and reply) that no later send can precede,
		// then send the next request.
		next, more := r.peekSend()
		if store != nil && si < len(static) {
			// The static scripts due before the next send and the heap's
			// next event, run here without the general path's choosing: a
			// static request is no closed-loop client's, so running one
			// sends, answers and pushes nothing, and next, more and the
			// heap stay as they are until the last of them. Packed as the
			// static operations are, "due" is one comparison: below the
			// first (time, ord) that is not (after the next send, the
			// heap's next event, or at the wipe).
			until := packedEvent(math.MaxInt64)
			if more && next < maxPacked {
				until = packedEvent((next + 1) << ordBits)
			}
			if len(h) > 0 && h[0].t <= maxPacked {
				if h[0].ord < 1<<ordBits {
					until = min(until, packedEvent(h[0].t<<ordBits|int64(h[0].ord)))
				} else if h[0].t < maxPacked { // a closed-loop request past 2^24: after every static one at its time
					until = min(until, packedEvent((h[0].t+1)<<ordBits))
				}
			}
			if wipe && c.WipeAt <= maxPacked {
				until = min(until, packedEvent(c.WipeAt<<ordBits))
			}
			for si < len(static) && static[si] < until {
				e := static[si]
				t, ord := int64(e)>>ordBits, uint64(e)&(1<<ordBits-1)
				key, node := int(r.staticKN[si].key), int(r.staticKN[si].node)
				si++
				j := int(ord >> 2)
				storeNow := clocks.store(t)
				store.SetClock(storeNow)
				switch {
				case !getSet:
					told := storeNow
					if nodeClock {
						told = r.plan[j].Told
					}
					var dec algos.Decision
					if st := store.keys.Fast(key); st == nil {
						dec = store.Call(key, told)
					} else if fields != nil { // decideInto, written out: once per request
						dec.Allowed, dec.Remaining, dec.RetryAfter, dec.Reset = fields(st, told, &store.limit)
					} else {
						store.decideCopy(st, told, &dec)
					}
					r.record(j, key, told, t, node, &dec)
				case ord&evSet == 0: // GET, as the general path below
					s := r.alloc(r.decideAt[j])
					r.slotOf[j] = s
					sl := &r.slots[s]
					store.GetInto(key, &sl.st)
					told := nodeAt(node, sl.decideAt)
					if fields != nil { // the store's limit is limit: store.decideInto, written out
						sl.d.Allowed, sl.d.Remaining, sl.d.RetryAfter, sl.d.Reset = fields(&sl.st, told, &store.limit)
						sl.d.Delay = 0
					} else {
						sl.d = r.algo.Decide(&sl.st, told, limit)
					}
					r.record(j, key, told, sl.decideAt, node, &sl.d)
				default: // SET
					s := r.slotOf[j]
					sl := &r.slots[s]
					store.setFrom(key, &sl.st, sl.d)
					r.free = append(r.free, s)
				}
			}
		}
		var ev event
		due, fromStatic := false, false
		if si < len(static) {
			if e := static[si].event(); !more || e.t <= next {
				ev, due, fromStatic = e, true, true
			}
		}
		if len(h) > 0 && (!more || h[0].t <= next) && (!due || h[0].before(ev)) {
			ev, due, fromStatic = h[0], true, false
		}
		if due {
			if fromStatic {
				si++
			} else {
				h.pop()
			}
			j := ev.request()
			if ev.ord&evReply != 0 {
				if err := r.answer(j, ev.t, &r.loop.held[ev.slot].d, r.loop.held[ev.slot].err); err != nil {
					return err
				}
				continue
			}
			if wipe && ev.t >= c.WipeAt {
				if err := d.wipe(); err != nil {
					return err
				}
				wipe = false
			}
			q := r.plan[j]
			storeNow := clocks.store(ev.t) // what TIME reads, and what keys expire by
			switch {
			case !getSet:
				told := storeNow
				if nodeClock {
					told = q.Told
				}
				var dec algos.Decision
				var err error
				if store != nil { // d.decide for a pure algorithm, written out: once per request
					store.SetClock(storeNow)
					if st := store.keys.Fast(q.Key); st == nil {
						dec = store.Call(q.Key, told)
					} else if fields != nil { // decideInto, written out: once per request
						dec.Allowed, dec.Remaining, dec.RetryAfter, dec.Reset = fields(st, told, &store.limit)
					} else {
						store.decideCopy(st, told, &dec)
					}
					r.record(j, q.Key, told, ev.t, q.Node, &dec)
				} else {
					err = d.decide(j, storeNow, told, ev.t, q.Node, &dec)
				}
				if r.isLoop(j) {
					h.push(event{t: ev.t + r.loop.back.draw(&r.loop.replies), ord: ev.ord | evReply, slot: r.holdReply(j, &dec, err)})
				}
			case ev.ord&evSet == 0: // GET: read a copy; the node decides on it when the reply arrives
				if fromStatic {
					ev.slot = r.alloc(r.decideAt[j])
					r.slotOf[j] = ev.slot
				}
				sl := &r.slots[ev.slot]
				store.SetClock(storeNow)
				store.GetInto(q.Key, &sl.st)
				told := nodeAt(q.Node, sl.decideAt)
				if fields != nil {
					sl.d.Allowed, sl.d.Remaining, sl.d.RetryAfter, sl.d.Reset = fields(&sl.st, told, &store.limit)
					sl.d.Delay = 0
				} else {
					sl.d = r.algo.Decide(&sl.st, told, limit)
				}
				r.record(j, q.Key, told, sl.decideAt, q.Node, &sl.d)
				if r.isLoop(j) {
					h.push(event{t: sl.decideAt, ord: ev.ord | evReply, slot: r.holdReply(j, &sl.d, nil)})
				}
			default: // SET: the node's copy overwrites the store
				if fromStatic {
					ev.slot = r.slotOf[j]
				}
				sl := &r.slots[ev.slot]
				store.SetClock(storeNow)
				store.setFrom(q.Key, &sl.st, sl.d)
				r.free = append(r.free, ev.slot)
			}
			continue
		}
		if !more {
			return nil
		}
		i := r.takeSend()
		p := r.plan[i]
		o, b := &outs, &rest
		if r.isLoop(i) { // streams of their own, so that no static request's legs move
			o, b = &r.loop.outs, &r.loop.rest
		}
		at := p.Sent + out.draw(o)
		ord := uint64(i) << 2
		if getSet {
			decideAt := at + back.draw(b)
			setAt := decideAt + set.draw(b)
			s := r.alloc(decideAt)
			h.push(event{t: at, ord: ord, slot: s})
			h.push(event{t: setAt, ord: ord | evSet, slot: s})
		} else {
			h.push(event{t: at, ord: ord})
		}
	}
}

// Packing a static operation: its time above the low ordBits bits, its
// ord in them, so that sorting the packed integers sorts the operations
// by (time, ord), the order the heap hands them out in.
const (
	ordBits   = 26 // ord is 4 × the request's index plus evSet: indices below 2^24
	maxPacked = 1<<(63-ordBits) - 1
)

// packedEvent is a static request's operation (never an answer: only
// closed-loop requests have those), packed.
type packedEvent int64

func (p packedEvent) event() event {
	return event{t: int64(p) >> ordBits, ord: uint64(p) & (1<<ordBits - 1)}
}

// staticEvents draws every static request's legs, in request order from
// outs and rest as the sends would, and returns its operations sorted by
// (time, ord), with true, when they can be merged with the heap (see
// runStore): every leg to the store takes time, and every time and index
// packs. For GET/SET it keeps each request's decision time in r.decideAt.
// Otherwise it draws nothing and returns false.
func (r *runner) staticEvents(out, back, set leg, outs, rest *record.Stream, getSet bool) ([]packedEvent, bool) {
	n := r.static
	if out.base <= 0 || n >= 1<<24 || n == 0 {
		return nil, false
	}
	// The latest any operation can reach the store.
	last := r.plan[n-1].Sent + out.base + int64(out.span)
	if getSet {
		last += back.base + int64(back.span) + set.base + int64(set.span)
	}
	if last > maxPacked || r.plan[0].Sent < 0 {
		return nil, false
	}
	m := n
	if getSet {
		m = 2 * n
		r.decideAt = slices.Grow(r.decideAt[:0], n)[:n]
		r.slotOf = slices.Grow(r.slotOf[:0], n)[:n]
	}
	ev := slices.Grow(r.static2[:0], m)[:m]
	r.static2 = ev
	kn := slices.Grow(r.staticKN[:0], m)[:m]
	r.staticKN = kn
	shape := staticShape{legs: r.cfg.legs(), jitter: r.cfg.Jitter, getSet: getSet}
	if mm := r.memo; mm.staticOK && mm.staticPlan == mm.planGen && mm.requests != nil && mm.static == shape {
		return ev, true // drawn and sorted for the same plan by an earlier run
	}
	r.memo.staticOK = false
	defer func() {
		r.memo.staticOK, r.memo.static, r.memo.staticPlan = r.memo.requests != nil, shape, r.memo.planGen
	}()
	for i := range n {
		at := r.plan[i].Sent + out.draw(outs)
		ord := int64(i) << 2
		if !getSet {
			ev[i] = packedEvent(at<<ordBits | ord)
			continue
		}
		decideAt := at + back.draw(rest)
		setAt := decideAt + set.draw(rest)
		r.decideAt[i] = decideAt
		ev[2*i] = packedEvent(at<<ordBits | ord)
		ev[2*i+1] = packedEvent(setAt<<ordBits | ord | evSet)
	}
	sortNearlySorted(ev)
	for x, e := range ev {
		q := &r.plan[uint64(e)&(1<<ordBits-1)>>2]
		kn[x] = keyNode{key: int32(q.Key), node: int32(q.Node)}
	}
	return ev, true
}

// sortNearlySorted sorts a, whose elements are each near their place (a
// send time plus a leg no longer than the jitter allows): by insertion,
// which then moves each element only past the few it overtakes, while a
// general sort would partition the whole slice again and again. Should
// the elements stray far (long legs under heavy traffic), it hands the
// rest of the work to slices.Sort.
func sortNearlySorted[T ~int64](a []T) {
	budget := 16 * len(a)
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i
		for j > 0 && a[j-1] > x {
			a[j] = a[j-1]
			j--
		}
		a[j] = x
		if budget -= i - j; budget < 0 {
			slices.Sort(a)
			return
		}
	}
}

// heldReply is a closed-loop request's answer on its way back to the client.
type heldReply struct {
	d   algos.Decision
	err error
}

// holdReply keeps the answer to closed-loop request j until its reply
// event reaches the client, in the client's own place (a client has one
// request out at a time), and returns the place.
func (r *runner) holdReply(j int, d *algos.Decision, err error) int32 {
	c := r.owner[j-r.static]
	// Field by field: a composite literal is built on the stack and copied
	// over in wider moves than it was written in, which the processor
	// cannot forward (a stall, on every closed-loop request).
	h := &r.loop.held[c]
	copyDecision(&h.d, d)
	h.err = err
	return c
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

// event is one operation reaching the store at true time t, or a
// closed-loop request's answer reaching its client. ord is 4 × the
// request's index, plus evSet for a SET and evReply for an answer, so that
// one comparison of ord breaks ties in t as the model orders them: in
// request order, a request's GET before its SET, an operation before its
// answer. No two events have the same (t, ord), so the heap hands them out
// in one order whatever its layout.
type event struct {
	t    int64
	ord  uint64
	slot int32 // the GET/SET slot, or for an answer its client (loopState.held)
}

const (
	evSet   = 2 // the event is a SET
	evReply = 1 // the event is an answer reaching its client
)

// request is the index of the event's request.
func (e event) request() int { return int(e.ord >> 2) }

func (a event) before(b event) bool {
	return a.t < b.t || (a.t == b.t && a.ord < b.ord)
}
