//go:build unix

package redistest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// envHelper makes TestSignalHelper run: it is the child process of
// TestSignalRemovesContainers, not a test of its own.
const envHelper = "OVERSHOOT_REDISTEST_SIGNAL_HELPER"

// A test binary interrupted or terminated while its Redis container runs
// removes that container before it exits, and dies of the signal. The run
// happens in a child process (this test binary re-executed) with Ryuk off,
// so the only thing that can remove the container is this package's handler.
func TestSignalRemovesContainers(t *testing.T) {
	t.Parallel() // each starts its own container: the starts overlap
	if !dockerReachable() {
		t.Skip("needs Docker: the test is about containers (" + EnvAddr + " gives none)")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			if signal.Ignored(sig) {
				t.Skipf("this process ignores %v (a background job of a script?), and so would the child", sig)
			}
			testSignalRemoves(t, sig)
		})
	}
}

func testSignalRemoves(t *testing.T, sig syscall.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSignalHelper$", "-test.count=1", "-test.timeout=2m", "-test.v")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvAddr+"=") && !strings.HasPrefix(kv, envRyukDisabled+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, envHelper+"=1", envRyukDisabled+"=true")
	var stdout, stderr syncBuffer
	ready := make(chan string, 1) // the child prints "ready run=ID" once its container answers
	stdout.onLine = func(line string) {
		if id, ok := strings.CutPrefix(line, "ready run="); ok {
			select {
			case ready <- id:
			default:
			}
		}
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var runID string
	select {
	case runID = <-ready:
	case <-exited:
		if skip := skipLine(stdout.String()); skip != "" {
			t.Skip("the child skipped: " + skip)
		}
		t.Fatalf("the child exited before its container was ready:\n%s%s", stdout.String(), stderr.String())
	}
	// Whatever happens below, this test leaves no container behind.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if n, err := removeRun(ctx, runID); n > 0 || err != nil {
			t.Logf("removed %d container(s) the child left (%v)", n, err)
		}
	})
	if ids := containersOf(t, runID); len(ids) == 0 {
		t.Fatalf("the child says it is ready, but no container carries %s=%s", LabelRun, runID)
	}

	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := <-exited // CommandContext kills the child after 2 minutes
	if ctx.Err() != nil {
		t.Fatalf("the child did not exit within 2 minutes of %v:\n%s", sig, stderr.String())
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !(ws.Signaled() && ws.Signal() == sig) && ws.ExitStatus() != 128+int(sig) {
		t.Errorf("the child ended with %v, want death by %v (or exit status %d)", err, sig, 128+int(sig))
	}
	if ids := containersOf(t, runID); len(ids) > 0 {
		t.Errorf("after %v, %d container(s) of the child's run remain: %.12s\nchild's stderr:\n%s", sig, len(ids), ids, stderr.String())
	}
	if want := fmt.Sprintf("redistest: %v: removed the 1 container(s) of run %s", sig, runID); !strings.Contains(stderr.String(), want) {
		t.Errorf("the child's stderr lacks %q:\n%s", want, stderr.String())
	}
}

// TestSignalHelper, in the child, starts a Redis container and waits to be signalled.
func TestSignalHelper(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("the child process of TestSignalRemovesContainers")
	}
	Start(t)
	fmt.Printf("ready run=%s\n", thisRun.id)
	time.Sleep(time.Minute) // the parent signals long before; if not, t.Cleanup removes the container
	t.Fatal("no signal came")
}

func containersOf(t *testing.T, runID string) []string {
	t.Helper()
	// testcontainers reads its configuration once per process: it must not
	// read it before this package has set loopback and decided on Ryuk.
	if note := configure(); note != "" {
		t.Log(note)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	docker, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer docker.Close()
	ids, err := listRun(ctx, docker, runID)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// skipLine is the reason a skipped test logged in out (with -test.v, the
// line before "--- SKIP"), or "".
func skipLine(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "--- SKIP") && i > 0 {
			return strings.TrimSpace(lines[i-1])
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for exec's copying goroutine and the
// test, which calls onLine, if set, with each complete line written.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	done   int // bytes of b already passed to onLine
	onLine func(string)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	for s.onLine != nil {
		rest := s.b.Bytes()[s.done:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		s.onLine(string(rest[:i]))
		s.done += i + 1
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
