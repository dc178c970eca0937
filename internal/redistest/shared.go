package redistest

import (
	"context"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Main runs a test binary's tests (call it from TestMain) with one Redis
// container for every Start of the process: the first Start starts it, and
// Main removes it when the tests are done, then exits with their code.
// Starting a container takes about a second; a package's tests start
// many, each only to keep its keys apart, which Prefix already does.
//
// A container a test started of its own (StartWith) is removed in the
// background once the test ends; Main waits for those removals too, and
// exits non-zero if one failed.
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.active = true
	shared.mu.Unlock()
	removals.mu.Lock()
	removals.active = true
	removals.mu.Unlock()
	code := m.Run()
	var wg sync.WaitGroup
	wg.Go(shared.close)
	if err := waitRemovals(); err != nil {
		// The signal handler and `make clean-containers` find them by their label.
		os.Stderr.WriteString(err.Error() + "\n")
		code = max(code, 1)
	}
	wg.Wait()
	os.Exit(code)
}

var shared sharedServer

// sharedServer is the process's one container under Main.
type sharedServer struct {
	mu     sync.Mutex
	active bool // Main is running the tests
	tried  bool // a start was tried: server or reason holds its outcome
	server Redis
	reason string // why there is no container, for every later Start
	ct     *Container
	c      *testcontainers.DockerContainer
}

// get returns the shared server, starting it on first use, and false when
// Main is not running (each Start then has its own container). When no
// container can be had, every caller is skipped (or failed) with the same
// reason, and the start is not tried again.
func (s *sharedServer) get(t testing.TB) (Redis, bool) {
	t.Helper()
	s.mu.Lock()
	if !s.active {
		s.mu.Unlock()
		return Redis{}, false
	}
	if !s.tried {
		s.tried = true
		ct, c, reason, err := launchShared()
		s.ct, s.c = ct, c
		switch {
		case err != nil:
			s.reason = err.Error()
		case ct == nil:
			s.reason = reason
		default:
			s.server = ct.Redis
			s.server.Source += " (shared by this test binary)"
		}
	}
	server, reason := s.server, s.reason
	s.mu.Unlock()
	if reason != "" {
		unavailable(t, reason)
	}
	return server, true
}

// launchShared starts the shared server: on the host's network, bound to
// 127.0.0.1, where the engine shares this machine's loopback, else on a
// port Docker publishes on 127.0.0.1. A mapped server is reached through
// docker-proxy, which copies every byte of every test's traffic: `go test
// ./...` took a fifth more CPU when the shared servers were mapped. A
// host-network start that does not answer (another binary bound the
// port between freePort and the server, or the engine's loopback is not
// this machine's after all) is removed and tried again on a new port,
// then once mapped.
func launchShared() (*Container, *testcontainers.DockerContainer, string, error) {
	if hostNetworkHere() {
		for range 2 {
			ct, c, reason, err := launch(Options{HostNetwork: true})
			if ct != nil && err == nil || c == nil {
				return ct, c, reason, err
			}
			if rerr := terminate(c); rerr != nil {
				os.Stderr.WriteString("redistest: removing a shared container that did not answer: " + rerr.Error() + "\n")
			}
		}
	}
	return launch(Options{})
}

var hostNetwork struct {
	once sync.Once
	here bool
}

// hostNetworkHere reports whether a container on the host's network
// listens on this machine's loopback: the engine is Docker on this Linux
// machine (a local socket, not Docker Desktop's virtual machine, not
// rootless, whose host network is a namespace of its own), and
// testcontainers is not pointed at another host.
func hostNetworkHere() bool {
	hostNetwork.once.Do(func() {
		if runtime.GOOS != "linux" || !localEngine() {
			return
		}
		if h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); h != "" {
			if ip, err := netip.ParseAddr(h); (err != nil || !ip.IsLoopback()) && h != "localhost" {
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d, err := testcontainers.NewDockerClientWithOpts(ctx)
		if err != nil {
			return
		}
		defer d.Close()
		info, err := d.Info(ctx, client.InfoOptions{})
		if err != nil || strings.Contains(info.Info.OperatingSystem, "Docker Desktop") {
			return
		}
		for _, o := range info.Info.SecurityOptions {
			if strings.Contains(o, "rootless") {
				return
			}
		}
		hostNetwork.here = true
	})
	return hostNetwork.here
}

// close removes the container, if one was started.
func (s *sharedServer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testcontainers.TerminateContainer(s.c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(0)); err != nil {
		// The signal handler and `make clean-containers` find it by its label.
		os.Stderr.WriteString("redistest: removing the shared container: " + err.Error() + "\n")
	}
	s.c = nil
}
