package main

import (
	"strings"
	"testing"

	_ "github.com/overshoot-go/overshoot/internal/golden"
)

const stream = `{"Action":"run","Test":"TestFindingA"}
{"Action":"output","Test":"TestFindingA","Output":"    findings_test.go:10: measured: peak 5.79x at 50 ms\n"}
{"Action":"pass","Test":"TestFindingA"}
{"Action":"run","Test":"TestFindingB"}
{"Action":"run","Test":"TestFindingB/sub"}
{"Action":"fail","Test":"TestFindingB/sub"}
{"Action":"fail","Test":"TestFindingB"}
{"Action":"run","Test":"TestOther"}
{"Action":"pass","Test":"TestOther"}
{"Action":"run","Test":"TestFindingC"}
`

// A badge shows the verdict and the number the finding measured; a test that
// never finished is not shown as passing.
func TestBadgesShowVerdictAndMeasuredNumber(t *testing.T) {
	fs, err := readFindings(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Badge{}
	for _, f := range fs {
		got[f.name] = badgeFor(f)
	}
	if len(got) != 3 {
		t.Fatalf("want 3 findings, got %v", got)
	}
	if b := got["TestFindingA"]; b.Color != "brightgreen" || b.Message != "holds: peak 5.79x at 50 ms" || b.Label != "A" {
		t.Errorf("A: %+v", b)
	}
	if b := got["TestFindingB"]; b.Color != "red" || b.Message != "broken" {
		t.Errorf("B: %+v", b)
	}
	if b := got["TestFindingC"]; b.Message != "did not finish" {
		t.Errorf("C: %+v", b)
	}
}

func TestBadgesRejectInputWithoutFindings(t *testing.T) {
	if _, err := readFindings(strings.NewReader(`{"Action":"pass","Test":"TestOther"}`)); err == nil {
		t.Fatal("want an error for a stream without findings")
	}
	if _, err := readFindings(strings.NewReader("{not json\n")); err == nil {
		t.Fatal("want an error for a malformed line")
	}
}
