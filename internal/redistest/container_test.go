package redistest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartWith passes its arguments to the server, after the image's own.
func TestStartWithArgs(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	ct := StartWith(t, Options{Args: []string{"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"}})
	c := ct.Client(t)
	ctx := context.Background()
	got, err := c.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["maxmemory"] != "2097152" || got["maxmemory-policy"] != "allkeys-lru" {
		t.Fatalf("CONFIG GET maxmemory* = %v; want 2097152 and allkeys-lru", got)
	}
	// The image's defaults still hold: nothing is saved.
	if save, err := c.ConfigGet(ctx, "save").Result(); err != nil || save["save"] != "" {
		t.Fatalf("CONFIG GET save = %v, %v; want empty", save, err)
	}
	t.Logf("%s at %s: %v", ct.Source, ct.Addr, got)
}

// With its own entrypoint and a file copied in, on the host network, the
// server listens on 127.0.0.1:Port only; it can be killed and started
// again at the same address, and paused (no answer) and unpaused. A file
// in a SharedDir (included by the copied one) is read at the start, and
// rewritten (CopyFile) while the server is down, at the next.
func TestStartWithHostNetworkEntrypointFilesAndControl(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	ct := StartWith(t, Options{
		HostNetwork: true,
		Entrypoint:  []string{"redis-server", "/tmp/conf/extra.conf"},
		Files: map[string][]byte{
			"/tmp/conf/extra.conf": []byte("maxmemory-policy volatile-ttl\nsave \"\"\nappendonly no\ninclude /shared/more.conf\n"),
			"/shared/more.conf":    []byte("maxmemory 3mb\n"),
		},
		SharedDir: "/shared",
		Env:       map[string]string{"OVERSHOOT_PROBE": "1"},
	})
	if localEngine() && ct.sharedHost == "" {
		t.Error("the engine is local, yet the SharedDir is not mounted from this machine")
	}
	if want := "127.0.0.1:" + strconv.Itoa(ct.Port); ct.Addr != want || ct.Port == 0 {
		t.Fatalf("Addr %s, Port %d; want %s on a chosen port", ct.Addr, ct.Port, want)
	}
	ctx := context.Background()
	// c is for the commands that must be answered, with the time a loaded
	// machine may take (300 ms timed out there once); probe is for the ones
	// that must not be, so that each gives up soon.
	client := func(timeout time.Duration) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: ct.Addr, Password: ct.Password, DisableIdentity: true, MaxRetries: -1, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
		t.Cleanup(func() { c.Close() })
		return c
	}
	c, probe := client(10*time.Second), client(300*time.Millisecond)
	got, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["bind"] != "127.0.0.1" || got["port"] != strconv.Itoa(ct.Port) || got["maxmemory-policy"] != "volatile-ttl" || got["protected-mode"] != "no" || got["maxmemory"] != "3145728" {
		t.Fatalf("bind %q port %q maxmemory-policy %q protected-mode %q maxmemory %q; want 127.0.0.1, %d, volatile-ttl (from the file), no, 3145728 (from the shared file)",
			got["bind"], got["port"], got["maxmemory-policy"], got["protected-mode"], got["maxmemory"], ct.Port)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	if err := ct.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := probe.Ping(ctx).Err(); err == nil {
		t.Fatal("PING answered after Kill")
	}
	if err := ct.CopyFile(ctx, "/shared/more.conf", []byte("maxmemory 5mb\n")); err != nil {
		t.Fatal(err)
	}
	if err := ct.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c = client(10 * time.Second) // the killed server's connection is gone, and c would not retry
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after Kill and Start: EXISTS k = %d, %v; want 0 (nothing was saved)", n, err)
	}
	if got, err := c.ConfigGet(ctx, "maxmemory").Result(); err != nil || got["maxmemory"] != "5242880" {
		t.Fatalf("after the shared file's rewrite and a restart: CONFIG GET maxmemory = %v, %v; want 5242880", got, err)
	}

	if err := ct.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := probe.Ping(ctx).Err(); err == nil {
		t.Fatal("PING answered while paused")
	}
	if err := ct.Unpause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Unpause: %v", err)
	}
	t.Logf("%s at %s: killed, started, paused and unpaused", ct.Source, ct.Addr)
}

// Under the locally built image, FaketimePreload makes the
// server read a clock that a file steers, and rewriting the file steps it.
func TestFaketimeStepsTheServersClock(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	if os.Getenv(EnvAddr) == "" && dockerReachable() {
		// testcontainers reads its configuration once per process: not
		// before this package has set loopback and decided on Ryuk.
		if note := configure(); note != "" {
			t.Log(note)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		image := chooseImage(ctx)
		cancel()
		if image != LocalImage {
			t.Skipf("libfaketime is only in %s (.ci/redis-image.sh); the tests here use %s", LocalImage, image)
		}
	}
	ct := StartWith(t, Options{
		Env: map[string]string{
			"LD_PRELOAD":              FaketimePreload,
			"FAKETIME_TIMESTAMP_FILE": "/tmp/faketime",
			"FAKETIME_NO_CACHE":       "1",
		},
		Files: map[string][]byte{"/tmp/faketime": []byte("+1d\n")},
	})
	c := ct.Client(t)
	ctx := context.Background()
	ahead := func() time.Duration {
		t.Helper()
		rt, err := c.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return time.Until(rt).Round(time.Hour)
	}
	if d := ahead(); d != 24*time.Hour {
		t.Fatalf("Redis TIME is %v ahead; want 24h", d)
	}
	if err := ct.CopyFile(ctx, "/tmp/faketime", []byte("+10d\n")); err != nil {
		t.Fatal(err)
	}
	if d := ahead(); d != 240*time.Hour {
		t.Fatalf("after the step, Redis TIME is %v ahead; want 240h", d)
	}
	t.Log("Redis TIME 24h ahead, then stepped to 240h ahead by rewriting the file")
}

// Under OVERSHOOT_REDIS there is no container to shape: StartWith skips
// (fails under OVERSHOOT_REQUIRE_REDIS=1) and says why.
func TestStartWithRefusesAnExternalRedis(t *testing.T) {
	var skipped bool
	t.Run("external", func(t *testing.T) {
		t.Setenv(EnvAddr, "127.0.0.1:1")
		t.Setenv(EnvRequire, "")
		defer func() { skipped = t.Skipped() }()
		StartWith(t, Options{})
		t.Error("StartWith returned")
	})
	if !skipped {
		t.Fatal("StartWith under " + EnvAddr + " did not skip")
	}
}

// A Sentinel starts from its config file with its own wait line.
func TestStartWithSentinel(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	ct := StartWith(t, Options{
		HostNetwork: true,
		Entrypoint:  []string{"redis-server", "/tmp/sentinel.conf", "--sentinel"},
		Files:       map[string][]byte{"/tmp/sentinel.conf": []byte("sentinel monitor m 127.0.0.1 1 1\n")},
		WaitLog:     "+monitor master",
	})
	c := ct.Client(t)
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "redis_mode:sentinel") {
		t.Fatalf("INFO server lacks redis_mode:sentinel: %.300s", info)
	}
	t.Logf("a Sentinel at %s", ct.Addr)
}
