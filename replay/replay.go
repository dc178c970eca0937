package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Case is one live run: the algorithm, deployed one way, on the given
// traffic.
type Case struct {
	Name       string
	Algorithm  algos.Algorithm
	Limit      algos.Limit
	Deployment model.Deployment // NodeClock, StoreClock or GetSet
	Nodes      int
	Skew       int64 // µs between the first and the last node's clock
	Seed       uint64
	Requests   []record.Request // sorted, from time 0
}

// config is the model's view of c, shared by the plan, the replay and the
// mean-delay run so that all three see the same nodes and clocks.
func (c Case) config() model.Config {
	return model.Config{
		Limiter:    limiter.FromAlgorithm(c.Algorithm),
		Limit:      c.Limit,
		Deployment: c.Deployment,
		Nodes:      c.Nodes,
		Skew:       c.Skew,
		Seed:       c.Seed,
		Requests:   c.Requests,
	}
}

// Played is one request as it was played. Every time is in µs on the
// model's timeline: Redis's clock minus the recording's Origin.
type Played struct {
	Plan     model.Planned // the request as planned
	Sent     int64         // when the node really sent it (Plan.Sent is when it was planned to)
	Told     int64         // the time the algorithm was told
	Ran      int64         // Redis TIME when the script (GetSet: the GET) ran
	Seq      int64         // the script's (GetSet: the GET's) place in Redis's order
	Decided  int64         // the true time of the decision: Ran, or for GetSet when the node decided (between Ran and SetRan)
	Admitted bool          // what Redis (GetSet: the node) decided
	// GetSet only: when the SET ran and its place in Redis's order.
	SetRan, SetSeq int64
}

// Recording is a played case.
type Recording struct {
	Case Case
	// Origin is the Redis TIME, in µs, of the model's time 0: a whole
	// number of windows, so that windows align in both.
	Origin int64
	// StoreTime is Redis TIME as this machine followed it during the run,
	// synced before it (conn.Sync).
	StoreTime conn.StoreTime
	Played    []Played // parallel to Case.Requests
}

// GiveUpAfter is how long past the traffic's last planned send Play and
// PlayLive wait before giving up. A play judges from the times it
// recorded, so a machine too busy to keep to the plan only stretches it:
// on two busy cores a 6 s play was measured past 36 s. The bound is
// there for a store that stopped answering.
const GiveUpAfter = 2 * time.Minute

// Play runs c against the Redis that store reaches (its Addr, and its
// Username and Password, TLSConfig and Dialer when set; each node gets a
// connection of its own made from a copy) in real time, with keys under
// prefix, and returns what happened. It takes as long as the traffic lasts
// (plus the start delay) and gives up after that plus GiveUpAfter.
func Play(ctx context.Context, store *redis.Options, prefix string, c Case) (*Recording, error) {
	switch c.Deployment {
	case model.NodeClock, model.StoreClock, model.GetSet:
	default:
		return nil, fmt.Errorf("replay: deployment %v is not played live (want node-clock, store-clock or get-set)", c.Deployment)
	}
	if len(c.Requests) == 0 {
		return nil, errors.New("replay: no requests")
	}
	plan, err := model.Plan(c.config())
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	script, err := lua.New(c.Algorithm.Name)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	span := c.Requests[len(c.Requests)-1].Sent
	ctx, cancel := context.WithTimeout(ctx, time.Duration(span)*time.Microsecond+GiveUpAfter)
	defer cancel()

	clients, err := conn.Dial(ctx, store, "", c.Nodes)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer conn.Close(clients)
	if err := script.Load(ctx, clients[0]); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	clock, err := conn.Sync(ctx, clients[0])
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	w := c.Limit.Window
	start := clock.Now() + 200_000 // time for every node to be waiting
	rec := &Recording{Case: c, Origin: (start/w + 1) * w, StoreTime: clock, Played: make([]Played, len(plan))}
	seqKey := prefix + "seq"
	keys := make([]string, 0)
	for _, p := range plan {
		for len(keys) <= p.Key {
			keys = append(keys, fmt.Sprintf("%skey%d", prefix, len(keys)))
		}
	}

	// Each node's GET/SET client reads the store's clock as the node's
	// skewed clock does (GetSet only; the scripts read TIME themselves).
	offsets, getSets := make([]int64, c.Nodes), make([]*lua.GetSet, c.Nodes)
	for node := range c.Nodes {
		offsets[node] = record.Offset(node, c.Nodes, c.Skew)
		if getSets[node], err = lua.NewGetSet(c.Algorithm.Name); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		getSets[node].Clock = func() int64 { return clock.Now() + offsets[node] }
	}
	err = playNodes(ctx, clock, rec.Origin, c.Nodes, plan, func(node, i int) error {
		return rec.play(ctx, clients[node], plan[i], offsets[node], script, getSets[node], keys[plan[i].Key], seqKey, &rec.Played[i])
	})
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", c.Name, err)
	}
	return rec, nil
}

// playNodes plays plan from one goroutine per node: each node makes its
// own requests (Planned.Node), in plan order, each when the store's
// clock, as clock follows it, reaches origin + its Sent, or as soon as the
// node's previous call has returned. call(node, i) makes request i and
// records it; its error, or ctx's, stops that node. It returns when every
// node has stopped, with their errors. Play and PlayLive both pace their
// nodes here, so that the two runners' timing is one.
func playNodes(ctx context.Context, clock conn.StoreTime, origin int64, nodes int, plan []model.Planned, call func(node, i int) error) error {
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for node := range nodes {
		wg.Go(func() {
			for i, p := range plan {
				if p.Node != node {
					continue
				}
				if err := clock.SleepUntil(ctx, origin+p.Sent); err != nil {
					errs[node] = err
					return
				}
				if err := call(node, i); err != nil {
					errs[node] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// play sends one request, p, on its node's connection c, as its
// deployment does (the script, or the node's GET/SET client na), and
// records it in r.
func (rec *Recording) play(ctx context.Context, c *redis.Client, p model.Planned, nodeOffset int64, script *lua.Script, na *lua.GetSet, key, seqKey string, r *Played) error {
	cs := rec.Case
	*r = Played{Plan: p, Sent: rec.StoreTime.Now() - rec.Origin}
	req := lua.Args{Key: key, SeqKey: seqKey, Limit: cs.Limit, Told: -1}
	switch cs.Deployment {
	case model.NodeClock, model.StoreClock:
		if cs.Deployment == model.NodeClock {
			req.Told = rec.Origin + r.Sent + nodeOffset
		}
		reply, err := script.Do(ctx, c, req)
		if err != nil {
			return err
		}
		r.Told = req.Told - rec.Origin
		if req.Told < 0 {
			r.Told = reply.RedisTime - rec.Origin
		}
		r.Ran, r.Seq = reply.RedisTime-rec.Origin, reply.Seq
		r.Decided, r.Admitted = r.Ran, reply.Decision.Allowed
	case model.GetSet:
		reply, err := na.Do(ctx, c, req)
		if err != nil {
			return err
		}
		r.Told = reply.Told - rec.Origin
		r.Ran, r.Seq = reply.ReadTime-rec.Origin, reply.ReadSeq
		r.SetRan, r.SetSeq = reply.RedisTime-rec.Origin, reply.Seq
		// The node decided after its GET ran and before its SET did:
		// an instant read off StoreTime outside that (off by up to half
		// Sync's round trip, which on a busy machine outgrows the
		// loopback legs) is placed at the nearer end.
		r.Decided, r.Admitted = min(max(r.Told-nodeOffset, r.Ran), r.SetRan), reply.Decision.Allowed
	}
	return nil
}

// Tally is what a run admitted: the count, and the peak, the most admits
// of one key in any window of the limit's length, as a multiple of the rate;
// and how many calls returned an error instead of a decision (only a
// limiter played by PlayLive, or simulated by the model, can).
type Tally struct {
	Admitted int
	Peak     float64
	Errors   int
}

// summarize totals admits given each request's key and decision time.
func summarize(l algos.Limit, n int, key func(i int) int, admitted func(i int) (int64, bool)) Tally {
	var byKey [][]int64
	var s Tally
	for i := range n {
		if at, ok := admitted(i); ok {
			s.Admitted++
			k := key(i)
			for len(byKey) <= k {
				byKey = append(byKey, nil)
			}
			byKey[k] = append(byKey[k], at)
		}
	}
	for _, times := range byKey {
		slices.Sort(times)
		s.Peak = max(s.Peak, float64(algos.MostInAnyWindow(times, l.Window))/float64(l.Rate))
	}
	return s
}

// Redis is what Redis (GetSet: the nodes) decided.
func (rec *Recording) Redis() Tally {
	return summarize(rec.Case.Limit, len(rec.Played),
		func(i int) int { return rec.Played[i].Plan.Key },
		func(i int) (int64, bool) { return rec.Played[i].Decided, rec.Played[i].Admitted })
}

// Replay recomputes every decision with the model's store, applying each
// operation in the order Redis ran it and telling the algorithm the time it
// was told live. It returns the model's tally, placing each admit at the
// measured decision time, and how many decisions differ from Redis's.
func (rec *Recording) Replay() (Tally, int, error) {
	cs := rec.Case
	store, err := model.NewStore(cs.Algorithm, cs.Limit, 0)
	if err != nil {
		return Tally{}, 0, err
	}
	type op struct {
		seq int64
		i   int
		set bool
	}
	ops := make([]op, 0, 2*len(rec.Played))
	for i, r := range rec.Played {
		ops = append(ops, op{seq: r.Seq, i: i})
		if cs.Deployment == model.GetSet {
			ops = append(ops, op{seq: r.SetSeq, i: i, set: true})
		}
	}
	slices.SortFunc(ops, func(a, b op) int { return int(a.seq - b.seq) })
	allowed := make([]bool, len(rec.Played))
	type copied struct {
		st algos.State
		d  algos.Decision
	}
	copies := make(map[int]copied) // GetSet: each request's copy, and its decision, between its GET and SET
	for _, o := range ops {
		r := rec.Played[o.i]
		switch {
		case cs.Deployment != model.GetSet:
			allowed[o.i] = store.Call(r.Plan.Key, r.Told).Allowed
		case !o.set:
			st := store.Get(r.Plan.Key)
			d := cs.Algorithm.Decide(&st, r.Told, cs.Limit)
			allowed[o.i] = d.Allowed
			copies[o.i] = copied{st, d}
		default:
			store.Set(r.Plan.Key, copies[o.i].st, copies[o.i].d)
			delete(copies, o.i)
		}
	}
	differ := 0
	for i, r := range rec.Played {
		if allowed[i] != r.Admitted {
			differ++
		}
	}
	s := summarize(cs.Limit, len(rec.Played),
		func(i int) int { return rec.Played[i].Plan.Key },
		func(i int) (int64, bool) { return rec.Played[i].Decided, allowed[i] })
	return s, differ, nil
}

// MeanDelays is the average of each step of the run, in µs: from the
// planned send to the script (or GET) running in Redis, including the time a
// node was still busy with its previous request; for GetSet, from the GET to
// the node's decision, and from the decision to the SET.
func (rec *Recording) MeanDelays() model.Legs {
	var out, back, set int64
	for _, r := range rec.Played {
		out += r.Ran - r.Plan.Sent
		back += r.Decided - r.Ran
		set += r.SetRan - r.Decided
	}
	n := int64(len(rec.Played))
	legs := model.Legs{Out: max(1, out/n)}
	if rec.Case.Deployment == model.GetSet {
		legs.Back, legs.Set = max(0, back/n), max(0, set/n)
	}
	return legs
}

// MeanDelay runs the model on the planned traffic with every step taking
// exactly its measured mean (MeanDelays, no jitter): what the simulator
// predicts when it knows the latencies but not how they clump.
func (rec *Recording) MeanDelay() (Tally, error) {
	cfg := rec.Case.config()
	cfg.Legs = rec.MeanDelays()
	return run(cfg)
}

// Ideal is the same traffic on one node with a true clock and no latency.
func (rec *Recording) Ideal() (Tally, error) { return ideal(rec.Case.config()) }

// ideal runs cfg's traffic on one node with a true clock and no latency.
func ideal(cfg model.Config) (Tally, error) {
	cfg.Deployment = model.Ideal
	return run(cfg)
}

func run(cfg model.Config) (Tally, error) {
	res, err := model.Run(cfg)
	if err != nil {
		return Tally{}, err
	}
	s := Tally{Errors: res.Errors()}
	for k := range res.Keys {
		times := res.AdmitTimes(k)
		s.Admitted += len(times)
		s.Peak = max(s.Peak, float64(algos.MostInAnyWindow(times, cfg.Limit.Window))/float64(cfg.Limit.Rate))
	}
	return s, nil
}
