package record

// Client is a closed-loop client: it sends its next request only when the
// answer to its last one has reached it, at a time it chooses from that
// answer (a client that retries at the Retry-After it was given, say).
// The simulator (model.Config.Loop) and the live driver (live.Load.Loop)
// play the same clients: each calls Next once before the run with last
// nil, then once per answer with its Record; Next returns the time of the
// client's next request in µs, at or after the answer reached it
// (last.Answered), and true, or false when the client is done. A client
// reads Sent, Answered, the Answer (a wait that Known lacks was not
// stated) and Err; the simulator fills those and Node (Key is the
// client's own, left empty).
//
// Design notes: a client lives for one run (LoopClient.New, or Load.Loop,
// makes it), is called from the run's one goroutine (for the live driver,
// its key's), and must be deterministic: the same answers, the same
// requests. In the simulator its requests are spread by the balancer like
// any other, from a random stream of their own, so that adding a client
// never moves another request to another node. The *Record is the
// player's and is rewritten for the next answer: a client that keeps one
// copies *last.
type Client interface {
	Next(last *Record) (send int64, more bool)
}

// LoopClient is a closed-loop client on key Key; New makes it afresh for
// each run.
type LoopClient struct {
	Key int
	New func() Client
}
