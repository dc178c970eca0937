package drills_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// drillsFull runs the longer version of each drill that has one.
var drillsFull = flag.Bool("drills.full", false, "run the drills' longer versions (more keys, longer runs)")

// drillTokenBucket is the token bucket's script, the one the drills drive.
func drillTokenBucket(t *testing.T) *lua.Script {
	t.Helper()
	s, err := lua.New(algos.TokenBucket.Name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drillProxy is an in-process toxiproxy named name in front of the Redis
// at addr, listening on a free loopback port (its Listen), stopped when
// the test ends: the drills' way to make a real network fail.
func drillProxy(t *testing.T, name, addr string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	proxy := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", addr)
	if err := proxy.Start(); err != nil {
		t.Fatalf("starting toxiproxy: %v", err)
	}
	t.Cleanup(proxy.Stop)
	return proxy
}

// drillWait polls cond every interval until it holds or timeout passes;
// the error then carries cond's last word.
func drillWait(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond(ctx)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// drillInfo is one field of INFO section, as a string ("" if absent).
func drillInfo(ctx context.Context, c redis.Cmdable, section, field string) (string, error) {
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v, nil
		}
	}
	return "", nil
}

// drillInfoInt is drillInfo for an integer field.
func drillInfoInt(ctx context.Context, c redis.Cmdable, section, field string) (int64, error) {
	v, err := drillInfo(ctx, c, section, field)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("INFO %s %s = %q: %w", section, field, v, err)
	}
	return n, nil
}
