package conn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/overshoot-go/overshoot/simredis"
	"github.com/redis/go-redis/v9"
)

// The store here is simredis, whose TIME answers a clock the test sets:
// what Sync reads is then known to the µs. The real Redis path is played by
// the live replay's and the study's tests, which dial through this package.
func store(t *testing.T) *simredis.Server {
	t.Helper()
	srv, err := simredis.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// A node's client has one connection, never retries, and keeps the
// credentials and database of the options it was made from; its timeouts
// are the long ones unless they were given.
func TestOptionsAreOneConnectionNeverRetried(t *testing.T) {
	base := &redis.Options{Addr: "127.0.0.1:1", Username: "u", Password: "p", DB: 3, PoolSize: 50, MaxRetries: 5, ReadTimeout: time.Second}
	o := conn.Options(base, "127.0.0.1:2")
	if o.Addr != "127.0.0.1:2" || o.Username != "u" || o.Password != "p" || o.DB != 3 {
		t.Errorf("options %+v lost the address asked for or base's credentials", o)
	}
	if o.PoolSize != 1 || o.MaxIdleConns != 0 || o.MaxRetries != -1 || !o.DisableIdentity {
		t.Errorf("pool %d (idle bound %d), retries %d, identity disabled %v; want one connection, no bound on idle ones, no retries, no CLIENT SETINFO", o.PoolSize, o.MaxIdleConns, o.MaxRetries, o.DisableIdentity)
	}
	if o.ReadTimeout != time.Second || o.WriteTimeout != 10*time.Second || o.DialTimeout != 5*time.Second {
		t.Errorf("timeouts read %v, write %v, dial %v; want base's 1s, then the defaults 10s and 5s", o.ReadTimeout, o.WriteTimeout, o.DialTimeout)
	}
	if base.PoolSize != 50 || base.Addr != "127.0.0.1:1" {
		t.Error("Options changed the base it copied")
	}
	if o := conn.Options(base, ""); o.Addr != base.Addr {
		t.Errorf("no address given: got %q, want base's %q", o.Addr, base.Addr)
	}
}

// Dial connects every client before it returns, and on a store that does
// not answer it fails with the reason, keeping no client open.
func TestDial(t *testing.T) {
	ctx := context.Background()
	srv := store(t)
	clients, err := conn.Dial(ctx, nil, srv.Addr(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(clients)
	if len(clients) != 3 {
		t.Fatalf("%d clients, want 3", len(clients))
	}
	for i, c := range clients {
		if st := c.PoolStats(); st.TotalConns != 1 {
			t.Errorf("client %d holds %d connections before its first call, want the 1 Dial made", i, st.TotalConns)
		}
	}
	for _, bad := range []struct {
		base *redis.Options
		addr string
		n    int
		want string
	}{
		{nil, "", 1, "no Redis"},
		{nil, srv.Addr(), 0, "0 clients"},
		{&redis.Options{DialTimeout: 200 * time.Millisecond}, "127.0.0.1:1", 2, "conn:"}, // nothing listens on port 1
	} {
		if cs, err := conn.Dial(ctx, bad.base, bad.addr, bad.n); err == nil || cs != nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Dial(%q, %d) = %d clients, %v; want no client and an error with %q", bad.addr, bad.n, len(cs), err, bad.want)
		}
	}
}

// Sync reads the store's clock, not this machine's: the store here reads a
// time far from now, and the clock follows it from there.
func TestSyncFollowsTheStoresClock(t *testing.T) {
	ctx := context.Background()
	srv := store(t)
	const storeNow = 1_000_000_000_123_456 // µs: 2001-09-09, nowhere near this machine's clock
	if err := srv.SetClock(storeNow); err != nil {
		t.Fatal(err)
	}
	clients, err := conn.Dial(ctx, nil, srv.Addr(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(clients)
	before := time.Now()
	clk, err := conn.Sync(ctx, clients[0])
	if err != nil {
		t.Fatal(err)
	}
	if clk.Store != storeNow {
		t.Errorf("Sync read %d, the store's TIME was %d", clk.Store, storeNow)
	}
	if clk.At.Before(before) || clk.At.After(time.Now()) {
		t.Errorf("the read is placed at %v, outside the sync's own span", clk.At)
	}
	if now := clk.Now(); now < storeNow || now > storeNow+time.Since(clk.At).Microseconds() {
		t.Errorf("Now %d, want the store's read plus the time since it", now)
	}
	if at := clk.Local(storeNow + 2_000); !at.Equal(clk.At.Add(2 * time.Millisecond)) {
		t.Errorf("Local(read + 2 ms) = %v, want the read's instant + 2 ms", at)
	}
	srv.Close()
	if _, err := conn.Sync(ctx, clients[0]); err == nil || !strings.Contains(err.Error(), "TIME") {
		t.Errorf("Sync on a closed store: %v, want an error naming TIME", err)
	}
}

// SleepUntil never returns before the store's clock reaches the instant,
// returns at once for a past one, and gives way to a cancelled context.
func TestSleepUntil(t *testing.T) {
	clk := conn.StoreTime{Store: 5_000_000, At: time.Now()}
	if err := clk.SleepUntil(context.Background(), clk.Store+20_000); err != nil {
		t.Fatal(err)
	}
	if now := clk.Now(); now < clk.Store+20_000 {
		t.Errorf("woke at the store's %d, before the 20 ms asked for", now-clk.Store)
	}
	if err := clk.SleepUntil(context.Background(), clk.Store); err != nil {
		t.Errorf("an instant passed: %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clk.SleepUntil(ctx, clk.Now()+int64(time.Hour/time.Microsecond)); err != context.Canceled {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
