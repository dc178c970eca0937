//go:build !unix

package redistest

import (
	"os"
	"sync"
)

// Without flock the lock holds within the process only.
var processLock sync.Mutex

func lockFile(*os.File) error { processLock.Lock(); return nil }

func unlockFile(*os.File) { processLock.Unlock() }
