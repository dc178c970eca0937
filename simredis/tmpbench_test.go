package simredis

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

func BenchmarkTmpEval(b *testing.B) {
	s, err := Start()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	sc := redis.NewScript(`local v = redis.call("INCR", KEYS[1]) redis.call("PEXPIRE", KEYS[1], 1000) return v`)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		_ = s.SetClock(int64(i) * 1000)
		if err := sc.Run(ctx, c, []string{"k"}).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
func BenchmarkTmpIncr(b *testing.B) {
	s, _ := Start()
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()
	for b.Loop() {
		c.Incr(ctx, "k")
	}
}
