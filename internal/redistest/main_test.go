package redistest

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// TestMain gives every Start of this test binary one shared Redis, as
// Main does for the module's other packages, and runs its parallel tests
// all at once: each mostly waits for Docker to start or stop a container.
func TestMain(m *testing.M) {
	testparallel.Set(8)
	Main(m)
}
