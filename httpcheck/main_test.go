package httpcheck_test

import (
	"os"
	"testing"

	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// TestMain runs eight parallel tests at once: each check waits a
// Retry-After of real time, and computes almost nothing.
func TestMain(m *testing.M) {
	testparallel.Set(8)
	os.Exit(m.Run())
}
