package drills_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// TestMain gives every redistest.Start of this test binary one shared
// Redis, and runs the parallel drills all at once: each mostly waits (for
// its containers, a Sentinel, a cluster to become writable) and is judged
// on counts and recorded times, not on how fast the machine is.
func TestMain(m *testing.M) {
	testparallel.Set(8)
	redistest.Main(m)
}
