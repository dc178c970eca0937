package model

import "github.com/overshoot-go/overshoot/record"

// Purposes name the random streams. Each stream is a PCG seeded from
// (Config.Seed, purpose), so the draws for one purpose never depend on how
// many draws another purpose made: adding a deployment, a node's restarts or
// jitter never changes which node a request goes to.
const (
	purposeBalancer uint64 = 0x62616c616e636572 // "balancer": node per request
	purposeOut      uint64 = 0x6c65672d6f757420 // "leg-out ": node → store
	purposeBack     uint64 = 0x6c65672d6261636b // "leg-back": store → node, node → SET
	purposeRestart  uint64 = 0x7265737461727400 // "restart" | node: one stream per node

	purposeLoopBalancer uint64 = 0x6c6f6f702d62616c // "loop-bal": node per closed-loop request
	purposeLoopOut      uint64 = 0x6c6f6f702d6f7574 // "loop-out": their node → store
	purposeLoopBack     uint64 = 0x6c6f6f702d62636b // "loop-bck": their GET replies and SETs
	purposeLoopReply    uint64 = 0x6c6f6f702d726570 // "loop-rep": store → closed-loop client
)

// leg draws one leg's delay: uniform over [mean-j, mean+j] with j = mean·jitter%.
// With no jitter it draws nothing.
type leg struct {
	base int64
	span uint64 // 2j+1 values
}

func newLeg(mean int64, jitter int) leg {
	j := mean/100*int64(jitter) + mean%100*int64(jitter)/100
	return leg{base: mean - j, span: uint64(2*j + 1)}
}

func (l leg) draw(s *record.Stream) int64 {
	if l.span == 1 {
		return l.base
	}
	return l.base + int64(s.Below(l.span))
}

// Planned is one request as the deployment plays it before anything reaches
// the store: which key, when it is sent in true time, which node the
// balancer chose (or record.Request.Node, when Config.Pinned), and the time
// that node's clock read when it sent, which it tells its limiter (Told, the
// name record.Record and Outcome give it too). A live
// replay that plays Plan's output plays exactly the traffic Run simulates.
//
// Told - Sent is the node's offset; a node that reads its clock later (the
// GET/SET node deciding when its reply arrives at true time d) reads
// d + (Told - Sent).
type Planned struct {
	Key  int
	Node int
	Sent int64
	Told int64
}

// Plan validates cfg and returns, for every request in order, the request as
// the balancer and the node clocks make it. Run uses the same plan. For Ideal
// every request is on node 0 with a true clock. The balancer's choice depends
// only on Seed, Nodes and the number of requests before it, so it is the same
// for every non-ideal deployment.
func Plan(cfg Config) ([]Planned, error) {
	if _, err := cfg.validate(); err != nil {
		return nil, err
	}
	p := make([]Planned, len(cfg.Requests))
	cfg.plan(p)
	return p, nil
}

// plan fills dst (len(c.Requests)) for a validated config.
func (c *Config) plan(dst []Planned) {
	if c.Deployment == Ideal || (c.Nodes == 1 && c.Clocks.IsZero()) {
		for i, a := range c.Requests {
			dst[i] = Planned{Key: a.Key, Sent: a.Sent, Told: a.Sent}
		}
		return
	}
	clocks := c.clockSet()
	faults := !c.Clocks.IsZero()
	bal := record.NewStream(c.Seed, purposeBalancer)
	n := uint64(c.Nodes)
	for i, a := range c.Requests {
		node := 0
		switch {
		case c.Pinned:
			node = a.Node
		case c.Nodes > 1:
			node = int(bal.Below(n))
		}
		clock := a.Sent + clocks.offsets[node]
		if faults {
			clock = clocks.node(node, a.Sent)
		}
		dst[i] = Planned{Key: a.Key, Node: node, Sent: a.Sent, Told: clock}
	}
}
