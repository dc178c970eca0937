package lua

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// benchLimit is the limit of the benchmarks and of redis/lua/bench.sh, so
// that both measure the same script doing the same work.
var benchLimit = algos.MustLimit(100, algos.Second, 100)

// BenchmarkLua measures each script's throughput through go-redis, EVALSHA
// with Redis TIME, on one key and spread over 10,000 keys, from enough
// parallel clients that the client is not what limits it. Compare with
// redis/lua/bench.sh, redis-benchmark on the same script and Redis.
func BenchmarkLua(b *testing.B) {
	s := redistest.Start(b)
	prefix := s.Prefix(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 64, DisableIdentity: true})
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	for _, a := range algos.All() {
		l, err := New(a.Name)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Load(ctx, c); err != nil {
			b.Fatal(err)
		}
		for _, keys := range []int{1, 10_000} {
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprintf("%sbench:%s:%d", prefix, a.Name, i)
			}
			b.Run(fmt.Sprintf("%s/keys=%d", a.Name, keys), func(b *testing.B) {
				var seed atomicSeed
				b.SetParallelism(16) // 32 clients on 2 cores, as redis-benchmark -c 32
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.next(), 1))
					for pb.Next() {
						if _, err := l.Call(ctx, c, names[rng.IntN(keys)], benchLimit, -1); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			})
		}
	}
}

// atomicSeed hands each parallel benchmark goroutine its own seed.
type atomicSeed struct {
	mu sync.Mutex
	n  uint64
}

func (s *atomicSeed) next() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}
