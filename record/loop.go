package record

import "github.com/overshoot-go/overshoot/algos"

// Client is a closed-loop client: it sends its next request only when the
// answer to its last one has reached it, at a time it chooses from that
// answer (a client that retries at the Retry-After it was given, say). The
// simulator calls Next once before the run with last nil, then once per
// reply; Next returns the true time of the client's next request, at or
// after the reply reached it (last.Answered), and true, or false when the
// client is done.
//
// Design notes: a client lives for one run (model.LoopClient.New makes
// it), is called from the run's one goroutine, and must be deterministic:
// the same replies, the same requests. Its requests are spread by the
// balancer like any other, from a random stream of their own, so that
// adding a client never moves another request to another node. The *Reply
// is the simulator's and is rewritten for the next answer: a client that
// keeps a reply copies *last.
type Client interface {
	Next(last *Reply) (send int64, more bool)
}

// Reply is the answer to a closed-loop client's request as the client
// receives it: when the request was sent and when the answer arrived (true
// time), the decision, and the limiter's error instead of a decision when
// it failed. It is the part of a Record a client reads.
type Reply struct {
	Sent, Answered int64
	Decision       algos.Decision
	Err            error
}

// LoopClient is a closed-loop client on key Key; New makes it afresh for
// each run.
type LoopClient struct {
	Key int
	New func() Client
}
