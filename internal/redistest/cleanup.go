package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// LabelRun is the Docker label on every container this package starts; its
// value is the ID of the test process's run. The signal handler finds a
// run's containers by it, half-started ones included, and
// `make clean-containers` finds what a SIGKILLed run left behind.
const LabelRun = "overshoot.redistest.run"

// thisRun is the process's run: its ID and the signal handler that removes
// its containers. With Ryuk off nothing else would when the process is
// interrupted (t.Cleanup does not run then); with Ryuk on it is only sooner.
var thisRun = newRun()

type run struct {
	id string
	// password is what every server of the run requires: fresh for each
	// test process, so a published port is of no use to anyone else.
	password string
	ctx      context.Context // cancelled by a signal: aborts starts in flight
	cancel   context.CancelFunc
	once     sync.Once // installs the handler, at the first start

	mu       sync.Mutex
	stopping bool           // a signal arrived: no new starts
	starts   sync.WaitGroup // starts in flight, whose containers may not be listed yet
}

func newRun() *run {
	b := make([]byte, 8)
	rand.Read(b)
	pw := make([]byte, 16)
	rand.Read(pw)
	ctx, cancel := context.WithCancel(context.Background())
	return &run{id: hex.EncodeToString(b), password: hex.EncodeToString(pw), ctx: ctx, cancel: cancel}
}

// begin installs the signal handler if it is not yet and counts a start in
// flight, which end uncounts. It returns the context starts must use, and
// false if a signal has arrived (the process is about to exit).
func (r *run) begin() (context.Context, bool) {
	r.once.Do(r.install)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return r.ctx, false
	}
	r.starts.Add(1)
	return r.ctx, true
}

func (r *run) end() { r.starts.Done() }

// install handles SIGINT, SIGTERM and SIGHUP, except any the process was
// started ignoring (nohup, a background job of a script), which stay ignored.
func (r *run) install() {
	var sigs []os.Signal
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go r.shutdown(ch)
}

// shutdown waits for a signal, removes every container of the run, and
// exits the way the signal would have ended the process. Later signals are
// ignored: the removal is bounded (about 25 s at worst), and SIGKILL still works.
func (r *run) shutdown(ch <-chan os.Signal) {
	sig := (<-ch).(syscall.Signal)
	// `go test` dies of SIGTERM at once, leaving this process's stdout and
	// stderr as broken pipes; without this, the next write (a log line from
	// testcontainers or a test) would kill the process before the removal.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.cancel()
	// A start in flight may have created its container after a listing.
	done := make(chan struct{})
	go func() { r.starts.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	n, err := removeRun(ctx, r.id)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "redistest: %v: could not remove every container of run %s (%v); `make clean-containers` removes them\n", sig, r.id, err)
	} else {
		fmt.Fprintf(os.Stderr, "redistest: %v: removed the %d container(s) of run %s\n", sig, n, r.id)
	}

	// Die of the signal itself, so the parent sees the usual status; where
	// a process cannot signal itself, exit with the shell's code for it.
	signal.Reset(sig)
	if self, err := os.FindProcess(os.Getpid()); err == nil && self.Signal(sig) == nil {
		time.Sleep(time.Second)
	}
	os.Exit(128 + int(sig))
}

// listRun returns the IDs of the containers, running or not, labelled with
// run ID id.
func listRun(ctx context.Context, docker *testcontainers.DockerClient, id string) ([]string, error) {
	res, err := docker.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", LabelRun+"="+id),
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(res.Items))
	for i, c := range res.Items {
		ids[i] = c.ID
	}
	return ids, nil
}

// removeRun force-removes (kills, without the stop timeout) the containers
// of run id, and returns how many there were.
func removeRun(ctx context.Context, id string) (int, error) {
	docker, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 0, err
	}
	defer docker.Close()
	ids, err := listRun(ctx, docker, id)
	if err != nil {
		return 0, err
	}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, c := range ids {
		wg.Go(func() {
			_, err := docker.ContainerRemove(ctx, c, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			// A test's t.Cleanup may be removing it at the same moment.
			if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
				errs[i] = fmt.Errorf("remove %.12s: %w", c, err)
			}
		})
	}
	wg.Wait()
	return len(ids), errors.Join(errs...)
}

// removals are the containers being removed in the background, for Main
// to wait for: under Main a test does not wait for its containers'
// removal (SIGKILL, then remove: a few hundred ms each), and a test with
// several has them removed at once.
var removals struct {
	mu     sync.Mutex
	active bool // Main is running the tests, and will wait
	wg     sync.WaitGroup
	errs   []error
}

// removeWhenDone removes c (nil: nothing) when t ends, killed at once:
// nothing of a test's server outlives the test. Under Main the removal runs
// in the background from t's end, and Main waits for it before the binary
// exits, failing the run if it failed; elsewhere t waits for it, and
// fails if it fails.
func removeWhenDone(t testing.TB, c *testcontainers.DockerContainer) {
	if c == nil {
		return
	}
	t.Cleanup(func() {
		removals.mu.Lock()
		if removals.active {
			removals.wg.Go(func() {
				if err := terminate(c); err != nil {
					removals.mu.Lock()
					removals.errs = append(removals.errs, err)
					removals.mu.Unlock()
				}
			})
			removals.mu.Unlock()
			return
		}
		removals.mu.Unlock()
		if err := terminate(c); err != nil {
			t.Error(err)
		}
	})
}

// terminate kills and removes c, within 30 s.
func terminate(c *testcontainers.DockerContainer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testcontainers.TerminateContainer(c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(0)); err != nil {
		return fmt.Errorf("redistest: removing container %.12s: %w", c.GetContainerID(), err)
	}
	return nil
}

// waitRemovals waits for the background removals and returns their errors.
func waitRemovals() error {
	removals.wg.Wait()
	removals.mu.Lock()
	defer removals.mu.Unlock()
	return errors.Join(removals.errs...)
}
