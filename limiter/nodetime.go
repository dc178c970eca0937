package limiter

import "context"

// A store-clock limiter is trusted to decide by the store's clock alone,
// and that trust is checked: the simulator tells every limiter call what
// the calling node's clock read when it sent the request (NodeTime), so
// that a limiter which sends a time along with its call (a script's ARGV,
// a header) has one to send, and the hunt plays a store-clock Spec again
// with node clocks far apart to see that it did not decide by it.

type nodeTimeKey struct{}

// NodeTime is the time the calling node's clock read when it sent the
// request (a NodeTimeContext, or a context made from one), and whether ctx
// carries one. A CallerClock limiter is told the same time as its now; a
// StoreClock limiter that sends its node's time to its store takes it from
// here, and is then no longer a store-clock limiter (the hunt's
// ReadsNodeClock breach).
func NodeTime(ctx context.Context) (int64, bool) {
	if c, ok := ctx.(*NodeTimeContext); ok {
		return c.t, true // without boxing t, once per call of a run
	}
	t, ok := ctx.Value(nodeTimeKey{}).(int64)
	return t, ok
}

// NodeTimeContext is a context carrying a node's time that its caller sets
// before each call (Set), for a caller that makes millions of calls and
// must not allocate a context for each. A limiter must not keep it past
// the call it was given to: the next call changes it.
type NodeTimeContext struct {
	context.Context
	t int64
}

// NewNodeTimeContext is a NodeTimeContext over parent, carrying time 0.
func NewNodeTimeContext(parent context.Context) *NodeTimeContext {
	return &NodeTimeContext{Context: parent}
}

// Set makes c carry t for the next call.
func (c *NodeTimeContext) Set(t int64) { c.t = t }

// Value is the node's time for NodeTime's key, and parent's values
// otherwise.
func (c *NodeTimeContext) Value(key any) any {
	if key == (nodeTimeKey{}) {
		return c.t
	}
	return c.Context.Value(key)
}
