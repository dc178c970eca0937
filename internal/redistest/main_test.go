package redistest

import "testing"

// TestMain gives every Start of this test binary one shared Redis, as
// Main does for the module's other packages.
func TestMain(m *testing.M) { Main(m) }
