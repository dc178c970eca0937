package testparallel_test

import (
	"flag"
	"os"
	"testing"

	"github.com/overshoot-go/overshoot/internal/testparallel"
)

func TestMain(m *testing.M) {
	testparallel.Set(7)
	os.Exit(m.Run())
}

// The binary runs seven parallel tests at once, as TestMain set it.
func TestSetSetsTheParallelTests(t *testing.T) {
	if got := flag.Lookup("test.parallel").Value.String(); got != "7" {
		t.Errorf("-test.parallel is %s, want 7", got)
	}
}
