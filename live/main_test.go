package live_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
)

// TestMain gives every test of the binary one Redis container (keys kept
// apart by redistest.Server.Prefix).
func TestMain(m *testing.M) { redistest.Main(m) }
