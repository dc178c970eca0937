package overshoot_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// TestMain gives every redistest.Start of this test binary one shared
// Redis, and runs four parallel tests at once rather than GOMAXPROCS: the
// live replay mostly waits for real time, and on two cores it would
// otherwise hold one of the two places the simulations need.
func TestMain(m *testing.M) {
	testparallel.Set(4)
	redistest.Main(m)
}
