package limiter

import "context"

// A store-clock limiter is trusted to decide by the store's clock alone,
// and that trust is checked: the simulator tells every limiter call what
// the calling node's clock read when it sent the request (WithNodeTime), so
// that a limiter which sends a time along with its call (a script's ARGV,
// a header) has one to send, and the hunt plays a store-clock Spec again
// with node clocks far apart to see that it did not decide by it.

type nodeTimeKey struct{}

// WithNodeTime returns ctx carrying t, the time in µs the calling node's
// clock read when it sent the request, for NodeTime to give back.
func WithNodeTime(ctx context.Context, t int64) context.Context {
	return context.WithValue(ctx, nodeTimeKey{}, t)
}

// NodeTime is the time the calling node's clock read when it sent the
// request (WithNodeTime), and whether ctx carries one. A CallerClock
// limiter is told the same time as its now; a StoreClock limiter that
// sends its node's time to its store takes it from here, and is then no
// longer a store-clock limiter (the hunt's ReadsNodeClock breach).
func NodeTime(ctx context.Context) (int64, bool) {
	t, ok := ctx.Value(nodeTimeKey{}).(int64)
	return t, ok
}
