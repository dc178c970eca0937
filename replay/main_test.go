package replay_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// TestMain gives every test of the binary one Redis container (keys kept
// apart by redistest.Redis.Prefix) instead of a container per test, each
// of which takes about a second to start, and runs eight parallel tests at
// once: the live plays wait for real time, and each is judged from the
// timings it recorded.
func TestMain(m *testing.M) {
	testparallel.Set(8)
	redistest.Main(m)
}
