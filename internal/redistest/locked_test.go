package redistest

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Every container this package starts is reachable from this machine
// only, as the Docker engine itself reports it: a mapped one publishes its
// port on 127.0.0.1 only; the shared one, on the host's network where the
// engine shares this machine's loopback, publishes none and its server
// binds 127.0.0.1 only. Every server refuses a client without the run's
// password: a test Redis is of no use to anyone else on the network while
// the tests run.
func TestContainersAreLoopbackOnlyAndLocked(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	// Its own first: meanwhile another test starts the shared one.
	own := StartWith(t, Options{Args: []string{"--maxmemory", "2mb"}})
	s := Start(t)
	if s.Password == "" || len(s.Password) < 32 {
		t.Fatalf("the server's password is %q; want a fresh one of 32 hex digits", s.Password)
	}
	shared.mu.Lock()
	sharedCt := shared.ct
	shared.mu.Unlock()
	if sharedCt == nil {
		t.Fatal("shared: no container (is TestMain running Main?)")
	}
	if sharedCt.host != hostNetworkHere() {
		t.Errorf("the shared container is on the host network: %v; the engine shares this machine's loopback: %v", sharedCt.host, hostNetworkHere())
	}
	ctx := context.Background()
	for name, ct := range map[string]*Container{"shared": sharedCt, "StartWith": own} {
		hosts, err := PortBindings(ctx, ct.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ct.host {
			if len(hosts) != 0 {
				t.Errorf("%s container %.12s is on the host network and publishes ports on %v", name, ct.ID, hosts)
			}
			binds, err := ct.Bind(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range binds {
				if b != "127.0.0.1" {
					t.Errorf("%s container %.12s is on the host network and its server binds %q; want 127.0.0.1 only (all: %v)", name, ct.ID, b, binds)
				}
			}
			t.Logf("%s container %.12s: on the host network, its server bound to %v", name, ct.ID, binds)
			continue
		}
		if len(hosts) == 0 {
			t.Fatalf("%s container %.12s publishes no port", name, ct.ID)
		}
		for _, h := range hosts {
			if h != "127.0.0.1" {
				t.Errorf("%s container %.12s publishes a port on %q; want 127.0.0.1 only (all: %v)", name, ct.ID, h, hosts)
			}
		}
		t.Logf("%s container %.12s: port bindings on %v", name, ct.ID, hosts)
	}
	for name, srv := range map[string]Redis{"shared": s, "StartWith": own.Redis} {
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
