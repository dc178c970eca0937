// Package redistest gives a test a real Redis 7, from the first of: the
// server named by OVERSHOOT_REDIS; a container started by testcontainers-go
// from OVERSHOOT_REDIS_IMAGE, else redis:7-alpine if the engine has it, else
// the locally built overshoot/redis:7-local if it has that, else
// redis:7-alpine pulled; or a skip that says how to get one.
// OVERSHOOT_REQUIRE_REDIS=1 turns the skip into a failure, so CI never skips
// silently.
//
// Tests talk to 127.0.0.1 only: when the Docker host is a local socket and
// the user has not said otherwise, the package points testcontainers at
// loopback (it would otherwise dial the default gateway on machines that look
// like containers). Ryuk, testcontainers' reaper, stays on unless
// TESTCONTAINERS_RYUK_DISABLED is set or its image can be neither found nor
// pulled, which an engine holding only the locally built Redis is taken to
// say without asking (see ryuk.go). Either way each container is removed in t.Cleanup,
// and on SIGINT, SIGTERM or SIGHUP every container of the process is removed
// before it exits (see cleanup.go).
//
// # What it owns, and what it must not import
//
// Finding or starting a Redis (redistest.go), a container shaped beyond
// the default for the drills: arguments, the host's network, an entrypoint
// of its own (Sentinel, Cluster), files, libfaketime, and kill, stop,
// pause and restart (container.go), the Ryuk decision (ryuk.go) and the
// removal of containers (cleanup.go). Only tests import it; it
// imports nothing of this module.
package redistest
