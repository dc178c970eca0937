package ceiling_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
)

// TestMain gives every test of the binary one Redis container (keys kept
// apart by redistest.Redis.Prefix) instead of a container per test, each
// of which takes about a second to start.
func TestMain(m *testing.M) { redistest.Main(m) }
