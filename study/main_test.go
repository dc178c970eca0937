package study

import (
	"flag"
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/internal/testparallel"
)

// defaultParallel is how many tests run at once by default: most of the
// live tests' time goes to waiting for a delayed path's round trip or for a
// plan's next send, not to a CPU, so more of them than this 2-core
// machine's GOMAXPROCS overlap well; what a claim needs of the machine
// (rounds in step, a plan kept) its test measures in its own trials.
const defaultParallel = 8

// TestMain gives every redistest.Start of this test binary one shared Redis,
// and runs the tests defaultParallel at a time, or one at a time under
// -study.full (whose rates and latencies are the report's), unless
// -test.parallel says otherwise.
func TestMain(m *testing.M) {
	flag.Parse()
	n := defaultParallel
	if *full {
		n = 1
	}
	testparallel.Set(n)
	redistest.Main(m)
}
