package planted

import (
	"context"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// KeysShareBuckets is a keyed token bucket, a limiter of its own (not a
// pure decision: the model's store would keep its keys apart), that keeps
// its keys' buckets in a table of 1024 entries.
//
// PLANTED BUG: `&t.buckets[key%1024]` instead of a bucket per key. The
// author sizes a table for the keys they expect and reduces the key to fit,
// as a hash table without collision chains does. Keys 1024 apart share one
// bucket: each spends the other's burst. Every key alone keeps the whole
// contract, so only a check that puts such keys side by side sees it.
func KeysShareBuckets() limiter.Spec {
	return limiter.Spec{
		Name:       "planted-keys-share-buckets",
		Clock:      limiter.CallerClock,
		Promise:    algos.BucketPromise,
		ExactRetry: true,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			return &sharedBuckets{limit: l}, nil
		},
	}
}

type sharedBuckets struct {
	limit   algos.Limit
	buckets [1024]algos.State
}

func (t *sharedBuckets) Allow(ctx context.Context, key int, now int64) (d algos.Decision, err error) {
	err = t.AllowInto(ctx, key, now, &d)
	return d, err
}

// AllowInto is Allow, into *out (limiter.Into).
func (t *sharedBuckets) AllowInto(_ context.Context, key int, now int64, out *algos.Decision) error {
	if key < 0 {
		*out = algos.Decision{}
		return fmt.Errorf("planted-keys-share-buckets: negative key %d", key)
	}
	out.Allowed, out.Remaining, out.RetryAfter, out.Reset = tokenBucketFields(&t.buckets[key%1024], now, &t.limit) // PLANTED: was one bucket per key
	out.Delay = 0
	return nil
}
