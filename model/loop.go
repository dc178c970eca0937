package model

import (
	"fmt"
	"math"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// MaxLoopRequests bounds how many requests one closed-loop client sends in
// a run: a client that never stops is an error, not a hang.
const MaxLoopRequests = 1 << 22

// loopState is the closed-loop clients of one run: the clients and their
// next sends. (Their requests, in the order sent, follow the static ones in
// runner.plan, and runner.owner says whose each is.)
type loopState struct {
	clients []record.Client
	keys    []int
	sent    []int       // requests sent, per client
	held    []heldReply // each client's answer on its way back, in the store deployments
	sends   sendHeap
	bal     record.Stream // the balancer for loop requests
	outs    record.Stream // their legs to the store
	rest    record.Stream // their GET replies and SETs
	replies record.Stream // the leg back to the client, atomic store deployments
	back    leg
	clocks  *clockSet
	reply   record.Record // the one Record handed to Next, rewritten for each answer
}

// pendingSend is a client's next request, not yet sent.
type pendingSend struct {
	t int64
	c int32
}

// startLoop makes the clients and asks each for its first request.
func (r *runner) startLoop() error {
	c := r.cfg
	if len(c.Loop) == 0 {
		return nil
	}
	l := &loopState{
		clients: make([]record.Client, len(c.Loop)),
		keys:    make([]int, len(c.Loop)),
		sent:    make([]int, len(c.Loop)),
		held:    make([]heldReply, len(c.Loop)),
		bal:     record.NewStream(c.Seed, purposeLoopBalancer),
		outs:    record.NewStream(c.Seed, purposeLoopOut),
		rest:    record.NewStream(c.Seed, purposeLoopBack),
		replies: record.NewStream(c.Seed, purposeLoopReply),
		back:    newLeg(c.legs().Back, c.Jitter),
		clocks:  c.clockSet(),
	}
	l.reply.Known = record.FieldsDecision
	r.loop = l
	for i, lc := range c.Loop {
		l.keys[i] = lc.Key
		cl := lc.New()
		if cl == nil {
			return fmt.Errorf("model: closed-loop client %d (key %d): New returned nil", i, lc.Key)
		}
		l.clients[i] = cl
		if err := r.schedule(int32(i), nil, 0); err != nil {
			return err
		}
	}
	return nil
}

// schedule asks client c for its next request after last (nil: its
// first), which reached it at true time at, and keeps it pending.
func (r *runner) schedule(c int32, last *record.Record, at int64) error {
	l := r.loop
	send, more := l.clients[c].Next(last)
	if !more {
		return nil
	}
	const maxSpan = algos.MaxTime / 8
	switch {
	case send < at:
		return fmt.Errorf("model: closed-loop client %d (key %d) asked to send at %s, before the reply reached it at %s",
			c, l.keys[c], algos.FormatTime(send), algos.FormatTime(at))
	case send > maxSpan:
		return fmt.Errorf("model: closed-loop client %d (key %d) asked to send at %d µs, too late", c, l.keys[c], send)
	case l.sent[c] >= MaxLoopRequests:
		return fmt.Errorf("model: closed-loop client %d (key %d) sent %d requests and asked for more; it must stop", c, l.keys[c], l.sent[c])
	}
	l.sends.push(pendingSend{t: send, c: c})
	return nil
}

// nextLoopSend is the time of the next closed-loop send, or MaxInt64 when
// none is pending: the static requests sent up to it may be decided
// without the general path's sending.
func (r *runner) nextLoopSend() int64 {
	if r.loop != nil && len(r.loop.sends) > 0 {
		return r.loop.sends[0].t
	}
	return math.MaxInt64
}

// peekSend is the true time of the next request to send, static or
// closed-loop, and false when there is none.
func (r *runner) peekSend() (int64, bool) {
	if r.loop == nil { // the common case, kept short
		if r.next < r.static {
			return r.plan[r.next].Sent, true
		}
		return 0, false
	}
	t, ok := int64(math.MaxInt64), false
	if r.next < r.static {
		t, ok = r.plan[r.next].Sent, true
	}
	if len(r.loop.sends) > 0 && r.loop.sends[0].t < t {
		t, ok = r.loop.sends[0].t, true
	}
	return t, ok
}

// takeSend sends the next request (a static one first at equal times) and
// returns its index in r.plan, planning a closed-loop request on the way.
func (r *runner) takeSend() int {
	if r.next < r.static && (r.loop == nil || len(r.loop.sends) == 0 || r.plan[r.next].Sent <= r.loop.sends[0].t) {
		r.next++
		return r.next - 1
	}
	l := r.loop
	ps := l.sends.pop()
	node := 0
	if r.cfg.Deployment != Ideal && r.cfg.Nodes > 1 {
		node = int(l.bal.Below(uint64(r.cfg.Nodes)))
	}
	l.sent[ps.c]++
	r.owner = append(r.owner, ps.c)
	clock := ps.t
	if r.cfg.Deployment != Ideal {
		clock = l.clocks.node(node, ps.t)
	}
	r.plan = append(r.plan, Planned{Key: l.keys[ps.c], Node: node, Sent: ps.t, Told: clock})
	r.out = append(r.out, Outcome{})
	return len(r.plan) - 1
}

// isLoop is true for a closed-loop client's request.
func (r *runner) isLoop(i int) bool { return i >= r.static }

// answer hands request i's answer, reaching its client at true time at, to
// the client, when i is a closed-loop request.
func (r *runner) answer(i int, at int64, d *algos.Decision, err error) error {
	if !r.isLoop(i) {
		return nil
	}
	// One Record for the whole run: a new one per answer would be the run's
	// only allocation per request (Next is an interface call, so it escapes).
	rep := &r.loop.reply
	rep.Sent, rep.Answered, rep.Err = r.plan[i].Sent, at, err // field by field, as holdReply
	rep.Node = r.plan[i].Node                                 // Known is set once, in startLoop: a simulated answer states every wait
	copyDecision(&rep.Decision, d)
	return r.schedule(r.owner[i-r.static], rep, at)
}

func (a pendingSend) before(b pendingSend) bool {
	return a.t < b.t || (a.t == b.t && a.c < b.c)
}
