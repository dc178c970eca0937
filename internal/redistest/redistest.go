package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
)

// Environment variables that steer where the Redis comes from.
const (
	EnvAddr     = "OVERSHOOT_REDIS"          // host:port of an existing Redis 7
	EnvPassword = "OVERSHOOT_REDIS_PASSWORD" // its password, if it has one
	EnvImage    = "OVERSHOOT_REDIS_IMAGE"    // image for testcontainers
	EnvRequire  = "OVERSHOOT_REQUIRE_REDIS"  // "1": no Redis is a failure
	// DefaultImage is pulled from a registry as usual; `make redis-image`
	// builds LocalImage for engines that cannot pull.
	DefaultImage = "redis:7-alpine"
	LocalImage   = "overshoot/redis:7-local"
)

// Redis is a Redis server a test may use.
type Redis struct {
	Addr string // host:port on loopback (or OVERSHOOT_REDIS as given)
	// Password is what the server requires (AUTH): a fresh one for each
	// test process for every container this package starts, so that no
	// one else can use it while the tests run; OVERSHOOT_REDIS_PASSWORD
	// for OVERSHOOT_REDIS ("" when it needs none).
	Password string
	Source   string // where it came from, for logs and reports
}

// Options are go-redis options that reach s: its address and password,
// without the CLIENT SETINFO handshake (DisableIdentity), which older
// servers and MONITOR readers need not see. Callers add pool sizes and
// timeouts to the copy they get.
func (s Redis) Options() *redis.Options {
	return &redis.Options{Addr: s.Addr, Password: s.Password, DisableIdentity: true}
}

// Start returns a Redis for t, or skips t (fails it under
// OVERSHOOT_REQUIRE_REDIS=1) with a one-line reason.
//
// In a test binary whose TestMain runs Main, every Start of the process
// gets the same container, started by the first and removed when the
// binary ends: tests keep apart by their keys (Prefix). Elsewhere each Start
// starts a container of its own, removed when t ends. A test that needs a
// server shaped for it (arguments, its own network, a fault) uses StartWith.
func Start(t testing.TB) Redis {
	t.Helper()
	if addr := os.Getenv(EnvAddr); addr != "" {
		password := os.Getenv(EnvPassword)
		if err := ping(addr, password, pingExisting); err != nil {
			unavailable(t, fmt.Sprintf("%s=%s does not answer PING: %v", EnvAddr, addr, err))
		}
		return Redis{Addr: addr, Password: password, Source: EnvAddr + "=" + addr}
	}
	if !dockerReachable() {
		unavailable(t, "no Docker socket and no "+EnvAddr)
	}
	if note := configure(); note != "" {
		t.Log(note)
	}
	if s, ok := shared.get(t); ok {
		return s
	}
	cts, reason := startContainers(t, []Options{{}})
	if cts == nil {
		unavailable(t, reason)
	}
	return cts[0].Redis
}

// Client returns a go-redis client of s with go-redis's default pool; it
// is closed when t ends. Tests that need one connection per worker make
// their own clients from Options with PoolSize 1.
func (s Redis) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(s.Options())
	t.Cleanup(func() { c.Close() })
	return c
}

// Prefix is a fresh key prefix for t, so tests sharing a Redis never meet.
// Keys under it are deleted when t ends.
func (s Redis) Prefix(t testing.TB) string {
	b := make([]byte, 6)
	rand.Read(b)
	name := regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-")
	prefix := "overshoot:" + strings.Trim(name, "-") + ":" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		c := redis.NewClient(s.Options())
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return prefix
}

// chooseImage is OVERSHOOT_REDIS_IMAGE if set; else the default image if the
// engine has it, else the locally built one if the engine has that (so an
// engine without a registry is not sent to one), else the default, pulled.
func chooseImage(ctx context.Context) string {
	if image := os.Getenv(EnvImage); image != "" {
		return image
	}
	for _, image := range []string{DefaultImage, LocalImage} {
		if imagePresent(ctx, image) {
			return image
		}
	}
	return DefaultImage
}

// imagePresent reports whether the engine has image (without pulling it).
func imagePresent(ctx context.Context, image string) bool {
	docker, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false
	}
	defer docker.Close()
	_, err = docker.ImageInspect(ctx, image)
	return err == nil
}

func unavailable(t testing.TB, reason string) {
	t.Helper()
	msg := "redis: " + reason + "; set " + EnvAddr + "=127.0.0.1:6379, or run `make redis-image` and set " + EnvImage + "=" + LocalImage
	if os.Getenv(EnvRequire) == "1" {
		t.Fatal(msg + " (" + EnvRequire + "=1)")
	}
	t.Skip(msg)
}

// ping waits until the server at addr answers PING, trying every 10 ms
// (a restarted server takes a moment to listen) for up to within, and
// returns the last error if it never does.
func ping(addr, password string, within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// How long ping waits: an existing server (OVERSHOOT_REDIS) answers at once
// or is not there; a container's server, once it has logged that it is
// ready or been started again, may be slowed by a loaded machine.
const (
	pingExisting  = 5 * time.Second
	pingContainer = 15 * time.Second
)

// dockerReachable reports whether a Docker engine may be there: its
// socket exists, or DOCKER_HOST names a remote engine.
func dockerReachable() bool {
	host := os.Getenv("DOCKER_HOST")
	if host != "" && !strings.HasPrefix(host, "unix://") {
		return true // a TCP or SSH engine: only trying tells
	}
	socket := strings.TrimPrefix(host, "unix://")
	if socket == "" {
		socket = "/var/run/docker.sock"
	}
	_, err := os.Stat(socket)
	return err == nil
}

var configured struct {
	once sync.Once
	note string
}

// configure sets, once per process and before testcontainers first reads its
// configuration (it reads it only once), what the user has not set: a local
// socket is reached on 127.0.0.1, and Ryuk is turned off where it cannot run.
// It returns a note for the first caller's log, else "".
func configure() string {
	first := false
	configured.once.Do(func() {
		first = true
		host := os.Getenv("DOCKER_HOST")
		local := host == "" || strings.HasPrefix(host, "unix://")
		if local && os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
			os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
		}
		configured.note = decideRyuk(context.Background())
	})
	if !first {
		return ""
	}
	return configured.note
}
