package findings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// module writes a small module: findings in the root and in sub, a test
// that is not a finding, and a finding inside a string (not a declaration).
func module(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	err := os.CopyFS(root, fstest.MapFS{
		"a_test.go":          {Data: []byte("package x\n\n// Badge: a holds\nfunc TestFindingA(t *testing.T) {}\n\n// Badge: b breaks\nfunc TestFindingB(t *testing.T) {}\n\nfunc TestOther(t *testing.T) {}\n\nconst s = `\nfunc TestFindingInAString(t *testing.T) {}\n`\n")},
		"sub/c_test.go":      {Data: []byte("package sub\n\n// C.\n//\n// Badge: c hangs\nfunc TestFindingC(t *testing.T) {}\n")},
		"testdata/d_test.go": {Data: []byte("package d\n\nfunc TestFindingD(t *testing.T) {}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The findings are the TestFinding declarations of the test files, outside
// testdata, sorted by package and name, each with its label and line.
func TestDeclaredListsEveryFindingWithItsLabelAndLine(t *testing.T) {
	fs, err := Declared(module(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{Package: Module, Name: "TestFindingA", File: "a_test.go", Line: 4, Label: "a holds"},
		{Package: Module, Name: "TestFindingB", File: "a_test.go", Line: 7, Label: "b breaks"},
		{Package: Module + "/sub", Name: "TestFindingC", File: "sub/c_test.go", Line: 6, Label: "c hangs"},
	}
	if !slices.Equal(fs, want) {
		t.Errorf("Declared:\n got %+v\nwant %+v", fs, want)
	}
	if got := Packages(fs); !slices.Equal(got, []string{Module, Module + "/sub"}) {
		t.Errorf("Packages: %v", got)
	}
}

// A record gives each finding its verdict, its last measured line and
// the outcome that says it; one it does not name did not run; and the
// record's first and last times are its span.
func TestReadVerdictsGivesEachFindingItsOutcome(t *testing.T) {
	fs, err := Declared(module(t))
	if err != nil {
		t.Fatal(err)
	}
	record := `{"Time":"2026-12-02T10:00:00Z","Action":"run","Package":"` + Module + `","Test":"TestFindingA"}
{"Time":"2026-12-02T10:00:01Z","Action":"output","Package":"` + Module + `","Test":"TestFindingA","Output":"    a_test.go:4: measured: 1.00x\n"}
{"Time":"2026-12-02T10:00:02Z","Action":"output","Package":"` + Module + `","Test":"TestFindingA","Output":"    a_test.go:4: measured: 2.00x\n"}
{"Time":"2026-12-02T10:00:03Z","Action":"pass","Package":"` + Module + `","Test":"TestFindingA"}
{"Time":"2026-12-02T10:00:04Z","Action":"run","Package":"` + Module + `","Test":"TestFindingB"}
{"Time":"2026-12-02T10:00:05Z","Action":"fail","Package":"` + Module + `","Test":"TestFindingB/sub"}
{"Time":"2026-12-02T10:00:06Z","Action":"fail","Package":"` + Module + `","Test":"TestFindingB"}
{"Time":"2026-12-02T10:00:07Z","Action":"pass","Package":"` + Module + `"}
`
	span, err := ReadVerdicts(strings.NewReader(record), fs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Span{time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 10, 0, 7, 0, time.UTC)}); !span.First.Equal(want.First) || !span.Last.Equal(want.Last) {
		t.Errorf("span %v to %v, want %v to %v", span.First, span.Last, want.First, want.Last)
	}
	for i, want := range []string{"holds", "broken", "not run: " + NotRunAbsent} {
		if got := fs[i].Outcome(); got != want {
			t.Errorf("%s: %q, want %q", fs[i].Name, got, want)
		}
	}
	if fs[0].Measured != "2.00x" {
		t.Errorf("TestFindingA measured %q, want its last line's 2.00x", fs[0].Measured)
	}
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{Finding{Ran: true, Verdict: "skip"}, "skipped"},
		{Finding{Ran: true}, "did not finish"},
		{Finding{NotRun: "lint"}, "not run: lint"},
	} {
		if got := c.f.Outcome(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

func TestBadInputIsAnError(t *testing.T) {
	root := module(t)
	fs, err := Declared(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, record := range []string{"", "ok  \tgithub.com/overshoot-go/overshoot\t1.0s\n"} {
		if _, err := ReadVerdicts(strings.NewReader(record), fs); err == nil {
			t.Errorf("want an error for a record with no test2json event: %q", record)
		}
	}
	if _, err := ReadVerdicts(strings.NewReader("{\"Action\":\"pass\"}\n{not json\n"), fs); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a malformed line: %v, want an error naming line 2", err)
	}
	if _, err := ReadVerdicts(strings.NewReader(`{"Action":"pass","Package":"elsewhere","Test":"TestFindingZ"}`), fs); err == nil {
		t.Error("want an error for a finding no test file declares")
	}
	if err := os.WriteFile(filepath.Join(root, "nolabel_test.go"), []byte("package x\n\n// No label.\nfunc TestFindingE(t *testing.T) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Declared(root); err == nil || !strings.Contains(err.Error(), "nolabel_test.go:4") {
		t.Errorf("a finding without a Badge line: %v, want an error naming nolabel_test.go:4", err)
	}
	if err := os.WriteFile(filepath.Join(root, "sub", "twice_test.go"), []byte("package sub\n\n// Badge: a again\nfunc TestFindingA(t *testing.T) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "nolabel_test.go"))
	if _, err := Declared(root); err == nil || !strings.Contains(err.Error(), "declared in") {
		t.Errorf("a name declared twice: %v, want an error naming both files", err)
	}
	if _, err := Declared(t.TempDir()); err == nil {
		t.Error("want an error for a tree without findings")
	}
}

// Records joined one after another are read as one: a finding that ran in
// both keeps the later record's verdict and measured line, as CI's badges
// job relies on (the merge's record after make test's).
func TestJoinedRecordsKeepTheLaterVerdict(t *testing.T) {
	fs, err := Declared(module(t))
	if err != nil {
		t.Fatal(err)
	}
	run := func(verdict, measured string) string {
		return `{"Action":"run","Package":"` + Module + `","Test":"TestFindingA"}
{"Action":"output","Package":"` + Module + `","Test":"TestFindingA","Output":"    a_test.go:4: measured: ` + measured + `\n"}
{"Action":"` + verdict + `","Package":"` + Module + `","Test":"TestFindingA"}
`
	}
	if _, err := ReadVerdicts(strings.NewReader(run("fail", "1.23x")+run("pass", "5.94x")), fs); err != nil {
		t.Fatal(err)
	}
	if got := fs[0].Outcome(); got != "holds" || fs[0].Measured != "5.94x" {
		t.Errorf("a failed run, then a passed one: %q, %q; want the later's holds, 5.94x", got, fs[0].Measured)
	}
}
