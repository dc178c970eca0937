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
	limit algos.Limit
	near  []algos.State        // the keys below nearKeys, by key: the clients' own
	far   map[int]*algos.State // the others (the judge's isolation run moves keys far apart)
}

// nearKeys is how many keys nodeTimed keeps in a slice: a lookup in one
// costs a tenth of a map's, once per request of a hunt's every run.
const nearKeys = 1024

// state is key's bucket, made on first use.
func (t *nodeTimed) state(key int) *algos.State {
	if key < nearKeys {
		if key >= len(t.near) {
			t.near = append(t.near, make([]algos.State, key+1-len(t.near))...)
		}
		return &t.near[key]
	}
	st := t.far[key]
	if st == nil {
		if t.far == nil {
			t.far = map[int]*algos.State{}
		}
		st = &algos.State{}
		t.far[key] = st
	}
	return st
}

func (t *nodeTimed) Allow(ctx context.Context, key int, now int64) (d algos.Decision, err error) {
	err = t.AllowInto(ctx, key, now, &d)
	return d, err
}

// AllowInto is Allow, into *out (limiter.Into).
func (t *nodeTimed) AllowInto(ctx context.Context, key int, now int64, out *algos.Decision) error {
	if key < 0 {
		*out = algos.Decision{}
		return fmt.Errorf("planted-store-clock-claim-reads-node: negative key %d", key)
	}
	st := t.state(key)
	if sent, ok := limiter.NodeTime(ctx); ok {
		now = max(now, sent) // PLANTED: was now, the store's time alone
	}
	out.Allowed, out.Remaining, out.RetryAfter, out.Reset = tokenBucketFields(st, now, &t.limit)
	out.Delay = 0
	return nil
}
