package algos_test

import "time"

// wallClock is how long f took by the wall clock.
func wallClock(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}
