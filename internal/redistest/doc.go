// Package redistest gives a test a real Redis 7, from the first of: the
// server named by OVERSHOOT_REDIS (with OVERSHOOT_REDIS_PASSWORD, if it
// needs one); a container started by testcontainers-go from
// OVERSHOOT_REDIS_IMAGE, else redis:7-alpine if the engine has it, else the
// locally built overshoot/redis:7-local if it has that, else redis:7-alpine
// pulled; or a skip that says how to get one. OVERSHOOT_REQUIRE_REDIS=1
// turns the skip into a failure, so CI never skips silently.
//
// One container per test binary: a package whose TestMain runs Main shares
// one container across every Start of its tests (they keep apart by their
// keys, Prefix); StartWith gives a test a server shaped for it (arguments,
// the host's network, Sentinel, Cluster, libfaketime, a directory shared
// with this machine) that is its alone, and StartWithAll several at once.
// Under Main a test's own containers are removed in the background once it
// ends, and Main waits for that before the binary exits (package
// testparallel lets a binary whose tests mostly wait run more of them at
// once).
//
// Locked and on loopback: every container publishes its port on 127.0.0.1
// only (checked against what the Docker engine reports, PortBindings), but
// the shared one where the engine shares this machine's loopback (Docker
// on Linux, not Docker Desktop, not rootless): that one is on the host's
// network, its server bound to 127.0.0.1 (checked against what the server
// reports, Container.Bind), so that the tests' traffic goes through no
// proxy. Every server it starts, replicas, Sentinels and cluster nodes included,
// requires a password made for the test process (Redis.Password,
// Redis.Options). When the Docker host is a local socket and the user has
// not said otherwise, testcontainers is pointed at loopback too (it would
// otherwise dial the default gateway on machines that look like
// containers). Ryuk, testcontainers' reaper, stays on unless
// TESTCONTAINERS_RYUK_DISABLED is set or its image can be neither found nor
// pulled, which an engine holding only the locally built Redis is taken to
// say without asking (see ryuk.go). Either way each container is removed when
// its test (or, shared, its binary) ends, and on SIGINT, SIGTERM or SIGHUP
// every container of the process is removed before it exits (see cleanup.go).
//
// LockTiming keeps the live tests whose claims rest on real time off each
// other across the test binaries `go test ./...` runs at once.
//
// # What it owns, and what it must not import
//
// Finding or starting a Redis (redistest.go), the binary's shared container
// (shared.go), a container shaped beyond the default for the drills:
// arguments, the host's network, an entrypoint of its own (Sentinel,
// Cluster), files, a shared directory, libfaketime, and kill, stop, pause
// and restart (container.go), the timing lock (lock.go), the Ryuk decision
// (ryuk.go) and the removal of containers (cleanup.go). Only tests import it; it imports
// nothing of this module.
package redistest
