package record

// Request is one request of the traffic: the key it is for (a small index,
// one limiter state per key), the true time, in µs, at which a node sends
// it, and, only when the run pins requests to nodes (model.Config.Pinned),
// the node that sends it (the balancer chooses otherwise, and Node is
// ignored). The traffic generators make it, the simulator runs it, and a
// Record keeps what became of it.
type Request struct {
	Key  int
	Sent int64
	Node int
}

// MaxKeys bounds key indices: the simulator keeps one state per key (and
// per node for the local deployments) in a dense slice, and a generator or
// a trace with more keys is an error.
const MaxKeys = 1 << 20

// Offset is node i's clock offset from true time, in µs, when nodes clocks
// are spread evenly across skew: -skew/2 + i·skew/(nodes-1), rounded down,
// so that Offset(nodes-1) - Offset(0) = skew exactly. With one node it is 0.
// The simulator's node clocks and the live trials' worker clocks are both
// spread by it, so that a skew means the same in both.
func Offset(i, nodes int, skew int64) int64 {
	if nodes <= 1 {
		return 0
	}
	// i·skew/(nodes-1) without overflow: split skew into quotient and rest.
	d := int64(nodes - 1)
	q, r := skew/d, skew%d
	return int64(i)*q + int64(i)*r/d - skew/2
}
