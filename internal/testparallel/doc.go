// Package testparallel sets how many parallel tests a test binary runs at
// once, for binaries whose tests mostly wait (for real time, a container, a
// failover) rather than compute: the testing package's default is
// GOMAXPROCS, two on the machines this suite is timed on, which leaves a
// waiting binary idle for most of its run.
//
// # What it owns, and what it must not import
//
// The one setting of -test.parallel from a TestMain. It imports nothing of
// this module, so that a binary that never starts a container (httpcheck's)
// does not link testcontainers to use it; tests alone import it.
package testparallel
