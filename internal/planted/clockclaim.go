package planted

import (
	"context"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// StoreClockClaimReadsNode is a keyed token bucket whose Spec says it reads
// the store's clock (limiter.StoreClock), as a script that calls TIME does.
//
// PLANTED BUG: it decides at the later of the store's time and the time its
// node sent (limiter.NodeTime), as a script does that takes max(TIME,
// ARGV[1]) so that a store clock lagging its callers never lets a request
// through early. Where the nodes' clocks agree with the store's, a request
// is sent before it arrives, the store's time is always the later, and the
// limiter keeps its whole contract: the Spec's claim holds in every run the
// checks made before the judge played it with clocks apart. A node whose
// clock runs ahead moves the bucket's time forward with each of its
// requests, refilling it.
func StoreClockClaimReadsNode() limiter.Spec {
	return limiter.Spec{
		Name:       "planted-store-clock-claim-reads-node",
		Clock:      limiter.StoreClock,
		Promise:    algos.BucketPromise,
		ExactRetry: true,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			return &nodeTimed{limit: l}, nil
		},
	}
}

type nodeTimed struct {
	limit  algos.Limit
	states map[int]*algos.State // keys may be far apart (the judge's isolation run)
}

func (t *nodeTimed) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("planted-store-clock-claim-reads-node: negative key %d", key)
	}
	st := t.states[key]
	if st == nil {
		if t.states == nil {
			t.states = map[int]*algos.State{}
		}
		st = &algos.State{}
		t.states[key] = st
	}
	if sent, ok := limiter.NodeTime(ctx); ok {
		now = max(now, sent) // PLANTED: was now, the store's time alone
	}
	return algos.TokenBucket.Decide(st, now, t.limit), nil
}
