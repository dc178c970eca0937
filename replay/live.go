package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Subject is any limiter a live run can play: a library or script whose
// state lives in Redis.
//
// Spec names it, says whose clock it reads and what it promises; its New
// is the simulated twin (on the model's store, or on a simredis server)
// that the recording is compared with. Connect makes the limiter one node
// of the live fleet calls, on the real store.
type Subject struct {
	Spec    limiter.Spec
	Connect func(n Node) (limiter.Limiter, error)
}

// Node is what Connect is given for one node of a live run.
type Node struct {
	Index int
	// Client is the node's own connection to the store: one connection,
	// already connected, that never retries a command.
	Client *redis.Client
	// Prefix is the run's key prefix, the same for every node, so that
	// the nodes share each key's state as a fleet does. The limiter must
	// keep every key it writes under it.
	Prefix string
	Limit  algos.Limit
	// Origin is the store's TIME, in µs of Unix time, at the run's time 0.
	// A CallerClock limiter is told times on the run's timeline (µs since
	// Origin, on the node's skewed clock); one that stores absolute times
	// adds Origin. Origin is a whole number of windows.
	Origin int64
}

// Live is one live run of a subject: its traffic played by Nodes
// goroutines against a real Redis.
//
// A CallerClock subject is deployed model.NodeClock: each node tells it
// the time on its own clock, the nodes' clocks spread evenly over Skew µs
// (record.Offset). A StoreClock subject is deployed model.StoreClock: it
// reads the store's TIME itself, and Skew must be 0.
type Live struct {
	Name       string
	Subject    Subject
	Limit      algos.Limit
	Deployment model.Deployment
	Nodes      int
	Skew       int64
	// Clocks are the nodes' drift and steps beyond Skew's offsets (a
	// CallerClock subject only): each node is told its clock as
	// model.Config.ClockAt reads it. A step of the store's clock cannot be
	// injected from here; a real store's clock is stepped on the store.
	Clocks   model.Clocks
	Seed     uint64           // the balancer's, as in model.Config
	Requests []record.Request // sorted, from time 0
}

// config is the model's view of lv: the plan, the simulation and the ideal
// run share it.
func (lv Live) config() model.Config {
	return model.Config{
		Limiter:    lv.Subject.Spec,
		Limit:      lv.Limit,
		Deployment: lv.Deployment,
		Nodes:      lv.Nodes,
		Skew:       lv.Skew,
		Clocks:     lv.Clocks,
		Seed:       lv.Seed,
		Requests:   lv.Requests,
	}
}

// check says why lv cannot be played, or nil.
func (lv Live) check() error {
	spec := lv.Subject.Spec
	if err := spec.Validate(); err != nil {
		return err
	}
	switch {
	case lv.Subject.Connect == nil:
		return fmt.Errorf("%q has no Connect: nothing to play on the real store", spec.Name)
	case len(lv.Requests) == 0:
		return errors.New("no requests")
	case spec.Clock == limiter.CallerClock && lv.Deployment != model.NodeClock:
		return fmt.Errorf("%q reads its caller's clock: it is played live with node clocks (model.NodeClock), not %v", spec.Name, lv.Deployment)
	case spec.Clock == limiter.StoreClock && lv.Deployment != model.StoreClock:
		return fmt.Errorf("%q reads the store's clock: it is played live as model.StoreClock, not %v", spec.Name, lv.Deployment)
	case spec.Clock == limiter.StoreClock && lv.Skew != 0:
		return fmt.Errorf("%q reads the store's clock: a node's skew of %s cannot reach it", spec.Name, algos.FormatMicros(lv.Skew))
	case spec.Clock == limiter.StoreClock && !lv.Clocks.IsZero():
		return fmt.Errorf("%q reads the store's clock: the nodes' clock faults (%v) cannot reach it", spec.Name, lv.Clocks)
	}
	for _, st := range lv.Clocks.Steps {
		if st.Clock == model.StoreClockStep {
			return errors.New("a step of the store's clock is made on the store itself, not injected by the nodes")
		}
	}
	return nil
}

// Call is one request as a live run made it. Every time is in µs on the
// run's timeline: the store's TIME minus the recording's Origin.
type Call struct {
	Plan     model.Planned // the request as planned
	Sent     int64         // when the node called the limiter (Plan.Sent is when it was planned to)
	Returned int64         // when the limiter returned
	Told     int64         // the time the limiter was told: the node's clock at Sent
	Decision algos.Decision
	Err      error // the limiter's error; Decision is then meaningless
	// Commands is how many commands the call sent to the store.
	Commands int
	// Seq is the place of the call's last command among every command
	// MONITOR showed (from 1). Ran is the store's clock when that command
	// ran: when its script called TIME, if it called it, else when
	// MONITOR showed the command. Both are 0 when the call sent nothing
	// or the recording is not ordered (LiveRecording.Order).
	Seq, Ran int64
}

// Reached is when the call most likely reached the store: Ran, when MONITOR
// showed it; otherwise halfway between the call and its return, an
// estimate off by at most half the call's round trip.
func (c Call) Reached() int64 {
	if c.Seq > 0 {
		return c.Ran
	}
	return c.Sent + (c.Returned-c.Sent)/2
}

// LiveRecording is a played Live.
type LiveRecording struct {
	Case      Live
	Origin    int64          // the store's TIME, in µs, at the run's time 0
	StoreTime conn.StoreTime // the store's TIME as this machine followed it during the run
	Calls     []Call
	// Order is "MONITOR" when every call's commands were found, in order,
	// among the lines MONITOR showed for its node's connection; otherwise
	// it says why not, and the calls are ordered by estimate (Reached).
	Order string
}

// PlayLive plays lv against the Redis that store reaches (its Addr,
// and its Username and Password, TLSConfig and Dialer when set), in real
// time, with every key under prefix, and returns what each node's limiter
// decided. Each node is a goroutine with its own connection, made from a
// copy of store, and its own limiter (lv.Subject's Connect), sending its
// requests of the plan at their planned times, or as soon as its previous
// call has returned. A limiter's error is recorded, never taken for a
// denial. It gives up GiveUpAfter past the traffic's last planned send; the
// limiters are closed (limiter.Close) before it returns.
func PlayLive(ctx context.Context, store *redis.Options, prefix string, lv Live) (rec *LiveRecording, err error) {
	if err := lv.check(); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	plan, err := model.Plan(lv.config())
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	span := lv.Requests[len(lv.Requests)-1].Sent
	ctx, cancel := context.WithTimeout(ctx, time.Duration(span)*time.Microsecond+GiveUpAfter)
	defer cancel()

	clients, err := conn.Dial(ctx, store, "", lv.Nodes)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	defer conn.Close(clients)
	nodeAddrs := make([]string, len(clients))
	counters := make([]*commandCounter, len(clients))
	for i, c := range clients {
		info, err := c.ClientInfo(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("replay: %s: CLIENT INFO: %w", lv.Name, err)
		}
		nodeAddrs[i], counters[i] = info.Addr, &commandCounter{}
		c.AddHook(counters[i])
	}
	clock, err := conn.Sync(ctx, clients[0])
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	w := lv.Limit.Window
	start := clock.Now() + 300_000 // time for every node to connect its limiter and wait
	rec = &LiveRecording{Case: lv, Origin: (start/w + 1) * w, StoreTime: clock, Calls: make([]Call, len(plan))}

	limiters := make([]limiter.Limiter, lv.Nodes)
	defer func() {
		for _, lim := range limiters {
			if lim == nil {
				continue
			}
			if cerr := limiter.Close(lim); cerr != nil && err == nil {
				rec, err = nil, fmt.Errorf("replay: %s: closing a node's limiter: %w", lv.Name, cerr)
			}
		}
	}()
	for i := range limiters {
		n := Node{Index: i, Client: clients[i], Prefix: prefix, Limit: lv.Limit, Origin: rec.Origin}
		if limiters[i], err = connect(lv.Subject, n); err != nil {
			return nil, fmt.Errorf("replay: %s: node %d: %w", lv.Name, i, err)
		}
	}
	// A store that refuses MONITOR (an ACL, a managed service) is still
	// played: its calls are then ordered by estimate, and Order says why.
	mon, monErr := startMonitor(ctx, store, nodeAddrs, clients[0])
	for _, c := range counters {
		c.commands.Store(0)
		c.dials.Store(0)
	}
	cfg := lv.config()
	err = playNodes(ctx, clock, rec.Origin, lv.Nodes, plan, func(node, i int) error {
		return rec.call(ctx, &cfg, limiters[node], counters[node], plan[i], &rec.Calls[i])
	})
	if err != nil {
		if mon != nil {
			mon.conn.Close()
		}
		return nil, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	if monErr != nil {
		rec.Order = fmt.Sprintf("estimate: %v", monErr)
		return rec, nil
	}
	lines, err := mon.stop(ctx, clients[0])
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	rec.Order = rec.order(lines, nodeAddrs, counters)
	return rec, nil
}

// order gives each call its Seq and Ran from the nodes' MONITOR lines, and
// returns "MONITOR"; or, when a node's lines do not add up to its calls'
// commands (a connection redialled, a command Redis does not show), leaves
// every call unordered and returns why.
func (rec *LiveRecording) order(lines []monitored, nodeAddrs []string, counters []*commandCounter) string {
	byAddr := make(map[string][]monitored, len(nodeAddrs))
	for _, l := range lines {
		byAddr[l.addr] = append(byAddr[l.addr], l)
	}
	for node, c := range counters {
		if n := c.dials.Load(); n > 0 {
			return fmt.Sprintf("estimate: node %d dialled %d new connections during the run", node, n)
		}
		sent := 0
		for _, call := range rec.Calls {
			if call.Plan.Node == node {
				sent += call.Commands
			}
		}
		// The end mark's ECHO went through node 0 and was not kept.
		if shown := len(byAddr[nodeAddrs[node]]); shown != sent {
			return fmt.Sprintf("estimate: node %d sent %d commands and MONITOR showed %d", node, sent, shown)
		}
	}
	next := make([]int, len(nodeAddrs))
	for i := range rec.Calls {
		c := &rec.Calls[i]
		if c.Commands == 0 {
			continue
		}
		node := byAddr[nodeAddrs[c.Plan.Node]]
		next[c.Plan.Node] += c.Commands
		last := node[next[c.Plan.Node]-1]
		c.Seq, c.Ran = last.seq, cmp.Or(last.clock, last.at)-rec.Origin
	}
	return "MONITOR"
}

// connect is Subject.Connect, turning a panic or a nil limiter into an
// error.
func connect(s Subject, n Node) (lim limiter.Limiter, err error) {
	defer func() {
		if v := recover(); v != nil {
			lim, err = nil, fmt.Errorf("Connect panicked: %v", v)
		}
	}()
	lim, err = s.Connect(n)
	if err == nil && lim == nil {
		err = errors.New("Connect returned no limiter and no error")
	}
	return lim, err
}

// call makes one planned call, p, on its node's limiter, telling it the
// node's clock as cfg (the run's model.Config) reads it, and records it in
// c. A limiter's error is recorded with the call; only a cancelled context
// stops the node.
func (rec *LiveRecording) call(ctx context.Context, cfg *model.Config, lim limiter.Limiter, sent *commandCounter, p model.Planned, c *Call) error {
	now := func() int64 { return rec.StoreTime.Now() - rec.Origin }
	before := sent.commands.Load()
	*c = Call{Plan: p, Sent: now()}
	c.Told = cfg.ClockAt(p.Node, c.Sent)
	c.Decision, c.Err = limiter.Allow(ctx, lim, p.Key, c.Told)
	c.Returned = now()
	c.Commands = int(sent.commands.Load() - before)
	return ctx.Err()
}

// Live is what the live fleet decided: admits placed at Reached.
func (rec *LiveRecording) Live() Tally {
	t := summarize(rec.Case.Limit, len(rec.Calls),
		func(i int) int { return rec.Calls[i].Plan.Key },
		func(i int) (int64, bool) {
			c := rec.Calls[i]
			return c.Reached(), c.Err == nil && c.Decision.Allowed
		})
	t.Errors = rec.errors()
	return t
}

func (rec *LiveRecording) errors() int {
	n := 0
	for _, c := range rec.Calls {
		if c.Err != nil {
			n++
		}
	}
	return n
}

// Replay decides every call again on one fresh simulated twin
// (Subject.Spec's New), in the order the store most likely ran them (by
// Reached), telling a CallerClock limiter what it was told live and a
// StoreClock one the time its call Reached the store. It returns the
// twin's tally (admits placed at Reached, as in Live) and how many of the
// calls that succeeded live it decided otherwise. A call that failed live
// is left out: whether the store applied it is unknown.
//
// The order and the store's time are estimates (see Call.Reached), so a
// call whose round trip overlaps another's, or that reached the store
// within half a round trip of a refill, can be decided otherwise by a
// correct twin: the count is a measure of agreement, not a proof.
func (rec *LiveRecording) Replay() (Tally, int, error) {
	lv := rec.Case
	twin, err := lv.Subject.Spec.Open(lv.Limit)
	if err != nil {
		return Tally{}, 0, fmt.Errorf("replay: %s: %w", lv.Name, err)
	}
	defer limiter.Close(twin)
	order := make([]int, 0, len(rec.Calls))
	for i, c := range rec.Calls {
		if c.Err == nil {
			order = append(order, i)
		}
	}
	// By Reached, and among calls MONITOR showed at the same µs, by Seq;
	// a call it did not show (one that sent nothing) after them.
	seq := func(c Call) int64 {
		if c.Seq > 0 {
			return c.Seq
		}
		return math.MaxInt64
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ca, cb := rec.Calls[a], rec.Calls[b]
		return cmp.Or(cmp.Compare(ca.Reached(), cb.Reached()), cmp.Compare(seq(ca), seq(cb)))
	})
	allowed := make([]bool, len(rec.Calls))
	differ := 0
	for _, i := range order {
		c := rec.Calls[i]
		at := c.Told
		if lv.Subject.Spec.Clock == limiter.StoreClock {
			at = c.Reached()
		}
		d, err := limiter.Allow(context.Background(), twin, c.Plan.Key, at)
		if err != nil {
			return Tally{}, 0, fmt.Errorf("replay: %s: the twin, on request %d: %w", lv.Name, i, err)
		}
		allowed[i] = d.Allowed
		if d.Allowed != c.Decision.Allowed {
			differ++
		}
	}
	t := summarize(lv.Limit, len(rec.Calls),
		func(i int) int { return rec.Calls[i].Plan.Key },
		func(i int) (int64, bool) { return rec.Calls[i].Reached(), allowed[i] })
	return t, differ, nil
}

// MeanOut is the mean time, in µs, from a request's planned send to its
// call reaching the store (Reached), including the time its node was still
// busy with the call before: the one leg an atomic call has in the model.
func (rec *LiveRecording) MeanOut() int64 {
	var out int64
	for _, c := range rec.Calls {
		out += c.Reached() - c.Plan.Sent
	}
	return max(1, out/int64(len(rec.Calls)))
}

// Simulate runs the model on the planned traffic, the subject's twin
// deployed as played, every call reaching the store exactly MeanOut after
// it was planned: what the simulator predicts for this fleet when it knows
// the mean latency but not how it clumps.
func (rec *LiveRecording) Simulate() (Tally, error) {
	cfg := rec.Case.config()
	cfg.Legs = model.Legs{Out: rec.MeanOut()}
	return run(cfg)
}

// SimulateAsSent runs the model on the calls as the nodes made them: each
// request sent when its node called the limiter (Call.Sent), by that node,
// told what its clock read then, and reaching the store the mean of Reached
// less Sent later (MeanSentOut). It is Simulate on the traffic the machine
// really played: a node the machine held back, or that was still busy
// with its previous call, sends late in both, so the two differ only by
// how the calls' round trips clump, however busy the machine was.
func (rec *LiveRecording) SimulateAsSent() (Tally, error) {
	cfg := rec.Case.config()
	sent := make([]record.Request, len(rec.Calls))
	for i, c := range rec.Calls {
		sent[i] = record.Request{Key: c.Plan.Key, Sent: c.Sent, Node: c.Plan.Node}
	}
	slices.SortStableFunc(sent, func(a, b record.Request) int { return cmp.Compare(a.Sent, b.Sent) })
	cfg.Requests, cfg.Pinned = sent, true
	cfg.Legs = model.Legs{Out: rec.MeanSentOut()}
	return run(cfg)
}

// MeanSentOut is the mean time, in µs, from a call to the limiter (Sent) to
// its reaching the store (Reached).
func (rec *LiveRecording) MeanSentOut() int64 {
	var out int64
	for _, c := range rec.Calls {
		out += c.Reached() - c.Sent
	}
	return max(1, out/int64(len(rec.Calls)))
}

// Ideal is the same traffic on the subject's twin, on one node with a true
// clock and no latency.
func (rec *LiveRecording) Ideal() (Tally, error) { return ideal(rec.Case.config()) }

// Script is the Subject of one of overshoot's six algorithms as its Lua
// script (package redis/lua): a CallerClock limiter told each node's time
// (Origin + now, in ARGV), whose simulated twin is the algorithm on the
// model's store. It shows what Live adds to Play: the same fleet, with no
// sequence numbers, compared with the simulator by estimate.
func Script(a algos.Algorithm) (Subject, error) {
	if _, err := lua.Source(a.Name); err != nil {
		return Subject{}, fmt.Errorf("replay: %w", err)
	}
	return Subject{
		Spec: limiter.FromAlgorithm(a),
		Connect: func(n Node) (limiter.Limiter, error) {
			script, err := lua.New(a.Name)
			if err != nil {
				return nil, err
			}
			return &scriptNode{script: script, node: n}, nil
		},
	}, nil
}

// scriptNode is one node's limiter of Script.
type scriptNode struct {
	script *lua.Script
	node   Node
}

func (s *scriptNode) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	at := s.node.Origin + now
	if at < 0 {
		return algos.Decision{}, fmt.Errorf("replay: %s is before the Unix epoch on the store's clock", algos.FormatTime(now))
	}
	reply, err := s.script.Call(ctx, s.node.Client, fmt.Sprintf("%skey%d", s.node.Prefix, key), s.node.Limit, at)
	return reply.Decision, err
}

// Report writes the recording beside its replay and the model's three
// predictions (Simulate, SimulateAsSent and Ideal), one line each: the
// calls, the admits, the peak (the most admits of a key in any window, as
// a multiple of the rate) and the errors.
func (rec *LiveRecording) Report(w io.Writer) error {
	lv := rec.Case
	replayed, differ, err := rec.Replay()
	if err != nil {
		return err
	}
	sim, err := rec.Simulate()
	if err != nil {
		return err
	}
	asSent, err := rec.SimulateAsSent()
	if err != nil {
		return err
	}
	ideal, err := rec.Ideal()
	if err != nil {
		return err
	}
	n := len(rec.Calls)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v, %d nodes, skew %s, %s, %d calls, ordered by %s\n",
		lv.Name, lv.Limit, lv.Nodes, algos.FormatMicros(lv.Skew), lv.Deployment, n, rec.Order)
	if !lv.Clocks.IsZero() {
		fmt.Fprintf(&b, "  clocks: %v\n", lv.Clocks)
	}
	row := func(what string, t Tally, note string) {
		line := fmt.Sprintf("  %-34s %8d %7.2fx %6d  %s", what, t.Admitted, t.Peak, t.Errors, note)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	fmt.Fprintf(&b, "  %-34s %8s %8s %6s\n", "", "admitted", "peak", "errors")
	row("live fleet", rec.Live(), "")
	row("twin on the recorded calls", replayed, fmt.Sprintf("%d of %d decided otherwise", differ, n-rec.errors()))
	row(fmt.Sprintf("model, %s out (the mean)", algos.FormatMicros(rec.MeanOut())), sim, "")
	row(fmt.Sprintf("model as sent, %s out", algos.FormatMicros(rec.MeanSentOut())), asSent, "")
	row("model, ideal (1 node, no latency)", ideal, "")
	_, err = io.WriteString(w, b.String())
	return err
}
