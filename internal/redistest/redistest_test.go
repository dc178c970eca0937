package redistest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
)

// The helper hands out a Redis 7 that answers, and keys that are the test's own.
func TestStartGivesARedis7(t *testing.T) {
	t.Parallel() // the shared container's start overlaps the others'
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "redis_version:7.") {
		t.Fatalf("want Redis 7, got %q", info[:min(len(info), 200)])
	}
	p1, p2 := s.Prefix(t), s.Prefix(t)
	if p1 == p2 {
		t.Fatalf("two prefixes are equal: %s", p1)
	}
	t.Logf("redis from %s at %s", s.Source, s.Addr)
}
