package conn

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// StoreTime is the store's clock as this machine follows it: Redis TIME read
// Store µs of Unix time at the local instant At. It follows the store by
// this machine's monotonic clock, so a step of the wall clock does not
// move it; it is off the store by at most half the round trip Sync kept.
type StoreTime struct {
	Store int64
	At    time.Time
}

// Now is the store's TIME now, in µs of Unix time.
func (c StoreTime) Now() int64 { return c.Store + time.Since(c.At).Microseconds() }

// Local is the local instant at which the store's TIME reads t.
func (c StoreTime) Local(t int64) time.Time {
	return c.At.Add(time.Duration(t-c.Store) * time.Microsecond)
}

// SyncSamples is how many TIME round trips Sync takes the best of.
const SyncSamples = 16

// Sync reads the store's TIME SyncSamples times on c and keeps the read
// whose round trip was shortest, placed at that round trip's middle: one
// read that a busy machine held for 100 ms would put every planned
// instant up to 50 ms off, where the best of several is off by half the
// shortest round trip.
func Sync(ctx context.Context, c *redis.Client) (StoreTime, error) {
	var best StoreTime
	bestRTT := time.Duration(-1)
	for range SyncSamples {
		t0 := time.Now()
		t, err := c.Time(ctx).Result()
		if err != nil {
			return StoreTime{}, fmt.Errorf("conn: TIME: %w", err)
		}
		if rtt := time.Since(t0); bestRTT < 0 || rtt < bestRTT {
			best, bestRTT = StoreTime{Store: t.UnixMicro(), At: t0.Add(rtt / 2)}, rtt
		}
	}
	return best, nil
}

// SleepUntil returns when the store's clock, as c follows it, reaches t
// (µs of Unix time), at once when it already has, or early with ctx's
// error.
func (c StoreTime) SleepUntil(ctx context.Context, t int64) error {
	wait := time.Until(c.Local(t))
	if wait <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
