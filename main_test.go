package overshoot_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
)

// TestMain gives every redistest.Start of this test binary one shared Redis.
func TestMain(m *testing.M) { redistest.Main(m) }
