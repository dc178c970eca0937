package live_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// TestMain gives every test of the binary one Redis container (keys kept
// apart by redistest.Redis.Prefix), and runs eight parallel tests at once:
// the live ones spend their seconds waiting for real time, not computing,
// and each judges from the times it recorded, so running beside each other
// changes what they offer, never whether a verdict holds.
func TestMain(m *testing.M) {
	testparallel.Set(8)
	redistest.Main(m)
}
