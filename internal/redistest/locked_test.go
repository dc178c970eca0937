package redistest

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Every container this package starts publishes its port on 127.0.0.1
// only, as the Docker engine itself reports it, and every server in it
// refuses a client without the run's password: a test Redis is of no use
// to anyone else on the network while the tests run.
func TestContainersAreLoopbackOnlyAndLocked(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	// Its own first: meanwhile another test starts the shared one.
	own := StartWith(t, Options{Args: []string{"--maxmemory", "2mb"}})
	s := Start(t)
	if s.Password == "" || len(s.Password) < 32 {
		t.Fatalf("the server's password is %q; want a fresh one of 32 hex digits", s.Password)
	}
	shared.mu.Lock()
	sharedID := ""
	if shared.c != nil {
		sharedID = shared.c.GetContainerID()
	}
	shared.mu.Unlock()
	ctx := context.Background()
	for name, id := range map[string]string{"shared": sharedID, "StartWith": own.ID} {
		if id == "" {
			t.Fatalf("%s: no container ID (is TestMain running Main?)", name)
		}
		hosts, err := PortBindings(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(hosts) == 0 {
			t.Fatalf("%s container %.12s publishes no port", name, id)
		}
		for _, h := range hosts {
			if h != "127.0.0.1" {
				t.Errorf("%s container %.12s publishes a port on %q; want 127.0.0.1 only (all: %v)", name, id, h, hosts)
			}
		}
		t.Logf("%s container %.12s: port bindings on %v", name, id, hosts)
	}
	for name, srv := range map[string]Server{"shared": s, "StartWith": own.Server} {
		anon := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true, MaxRetries: -1})
		err := anon.Set(ctx, "overshoot:unauthenticated", "1", 0).Err()
		anon.Close()
		if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("%s: a client without the password got %v; want NOAUTH", name, err)
		}
		wrong := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "not-" + srv.Password, DisableIdentity: true, MaxRetries: -1})
		err = wrong.Ping(ctx).Err()
		wrong.Close()
		if err == nil {
			t.Errorf("%s: a client with a wrong password was let in", name)
		}
		if err := srv.Client(t).Ping(ctx).Err(); err != nil {
			t.Errorf("%s: with the password: %v", name, err)
		}
	}
}
