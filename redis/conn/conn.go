package conn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options are the client options of one node or worker: a copy of base
// (its credentials, database, TLS and dialer kept) to addr (base's own
// address when empty), with a pool of exactly one connection, no retries
// (a retried INCR or script could count twice), no CLIENT SETINFO on
// connect (a store that refuses it must not fail the dial), and, where base
// leaves them unset, timeouts long enough for a slowed path on a loaded
// machine: 5 s to dial, 10 s to read or write, 30 s to wait for the
// connection.
func Options(base *redis.Options, addr string) *redis.Options {
	o := redis.Options{}
	if base != nil {
		o = *base
	}
	if addr != "" {
		o.Addr = addr
	}
	// No bound on idle connections: a caller that raises PoolSize for a
	// stampede keeps every connection it warmed, where a bound of one
	// closed the others, and each request of the stampede dialled anew.
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns = 1, 0, 0, 0
	o.MaxRetries, o.DisableIdentity = -1, true
	o.DialTimeout = orDefault(o.DialTimeout, 5*time.Second)
	o.ReadTimeout = orDefault(o.ReadTimeout, 10*time.Second)
	o.WriteTimeout = orDefault(o.WriteTimeout, 10*time.Second)
	o.PoolTimeout = orDefault(o.PoolTimeout, 30*time.Second)
	return &o
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Dial opens n clients of Options(base, addr) and PINGs them, all at once
// (through a slowed path, one after another would take n round trips), so
// that no timed call pays for a dial. On an error it closes every client
// it opened and returns none.
func Dial(ctx context.Context, base *redis.Options, addr string, n int) ([]*redis.Client, error) {
	if base == nil && addr == "" {
		return nil, errors.New("conn: no Redis: nil options and no address")
	}
	if n <= 0 {
		return nil, fmt.Errorf("conn: %d clients asked for, want at least one", n)
	}
	clients, errs := make([]*redis.Client, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = redis.NewClient(Options(base, addr))
		wg.Go(func() { errs[i] = clients[i].Ping(ctx).Err() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		Close(clients)
		return nil, fmt.Errorf("conn: %w", err)
	}
	return clients, nil
}

// Close closes every client of clients.
func Close(clients []*redis.Client) {
	for _, c := range clients {
		_ = c.Close()
	}
}
