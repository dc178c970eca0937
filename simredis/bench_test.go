package simredis

import (
	"context"
	"fmt"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// BenchmarkScriptCall is one script call on simredis and on a real Redis 7
// over loopback, side by side: the module's token-bucket script, told the
// time, through go-redis's Script.Run (EVALSHA) from one *redis.Client with
// one connection, on keys that cycle through 16. simredis is reached in
// process (Server.Dial); Redis 7 is internal/redistest's. Each reports
// µs/call and calls/s (wall time, one caller at a time). The redis7 case
// is skipped without a Redis (see internal/redistest).
//
//	go test ./simredis -run '^$' -bench ScriptCall -cpu 1
func BenchmarkScriptCall(b *testing.B) {
	l, err := lua.New("token-bucket")
	if err != nil {
		b.Fatal(err)
	}
	script := redis.NewScript(l.Source())
	lim := algos.MustLimit(100, algos.Second, 10)
	run := func(b *testing.B, c *redis.Client, prefix string) {
		ctx := context.Background()
		keys := make([][]string, 16)
		for i := range keys {
			keys[i] = []string{fmt.Sprintf("%sbench:%d", prefix, i), fmt.Sprintf("%sbench:%d:seq", prefix, i)}
		}
		// Loaded and connected before the clock starts.
		if err := script.Load(ctx, c).Err(); err != nil {
			b.Fatal(err)
		}
		now := int64(1_700_000_000_000_000)
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			now += 1000
			err := script.Run(ctx, c, keys[i%len(keys)], now, lim.Rate, lim.Window, lim.Burst, lim.Unit, lim.Refill).Err()
			if err != nil {
				b.Fatal(err)
			}
		}
		perCall := float64(b.Elapsed().Microseconds()) / float64(b.N)
		b.ReportMetric(perCall, "µs/call")
		b.ReportMetric(1e6/perCall, "calls/s")
		b.ReportMetric(0, "ns/op") // µs/call says it
	}
	b.Run("simredis", func(b *testing.B) {
		s, err := Start()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		c := redis.NewClient(&redis.Options{Dialer: s.Dial, PoolSize: 1, DisableIdentity: true})
		b.Cleanup(func() { c.Close() })
		run(b, c, "")
	})
	b.Run("redis7", func(b *testing.B) {
		rs := redistest.Start(b)
		o := rs.Options()
		o.PoolSize = 1
		c := redis.NewClient(o)
		b.Cleanup(func() { c.Close() })
		run(b, c, rs.Prefix(b))
	})
}
