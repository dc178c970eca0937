//go:build linux || darwin

package algos_test

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU runs f on one locked OS thread and returns the CPU time that
// thread spent in it (CLOCK_THREAD_CPUTIME_ID): the time f computed, not the
// time it waited for a core, which on a loaded machine is most of a wall
// clock's reading of a few milliseconds. cpu is false, and the time a wall
// clock's, where the thread's clock cannot be read.
func threadCPU(f func()) (took time.Duration, cpu bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var start, end unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &start) != nil {
		return wallClock(f), false
	}
	wall := time.Now()
	f()
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &end) != nil {
		return time.Since(wall), false
	}
	return time.Duration(end.Nano() - start.Nano()), true
}
