package study

import (
	"bytes"
	"testing"

	"github.com/overshoot-go/overshoot/internal/golden"
)

// The deterministic half of the report is golden/concurrency.txt.
func TestModelReportMatchesGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteModelReport(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "concurrency.txt", b.Bytes())
}
