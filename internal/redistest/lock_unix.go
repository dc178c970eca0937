//go:build unix

package redistest

import (
	"os"
	"syscall"
)

// lockFile takes f's exclusive flock, waiting for it (a signal's EINTR is retried).
func lockFile(f *os.File) error {
	for {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
