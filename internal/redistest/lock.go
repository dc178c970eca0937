package redistest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// LockTiming holds, until t ends, a lock shared by every test process of
// this machine (an exclusive flock on a file in the temporary directory):
// the live tests whose claims rest on real time (a sustained rate, a
// deadline, a race opened by a delay) call it first, so that `go test
// ./...`, which runs several packages' binaries at once, never runs two of
// them side by side. It waits as long as it must and logs the wait; it
// does not make the machine quiet, only keeps these tests off each other.
func LockTiming(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "overshoot-timing.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("redistest: timing lock %s: %v", path, err)
	}
	start := time.Now()
	if err := lockFile(f); err != nil {
		f.Close()
		t.Fatalf("redistest: timing lock %s: %v", path, err)
	}
	if waited := time.Since(start); waited > 10*time.Millisecond {
		t.Logf("redistest: waited %v for the timing lock (another live test held it)", waited.Round(time.Millisecond))
	}
	t.Cleanup(func() {
		unlockFile(f)
		f.Close()
	})
}
