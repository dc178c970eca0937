package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runReports is a folder as a run with -golden.out leaves it: the matrix,
// the hunt and the charts (golden/'s, which the root tests keep current).
func runReports(t *testing.T, leaveOut string) string {
	t.Helper()
	dir := t.TempDir()
	charts, _ := filepath.Glob(filepath.Join("..", "..", "golden", "*.svg"))
	for _, p := range append(charts, filepath.Join("..", "..", "golden", tableFile), filepath.Join("..", "..", "golden", huntFile)) {
		if filepath.Base(p) == leaveOut {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var record = filepath.Join("..", "..", "report", "testdata", "record.json")

// The command writes the report of the run's files and says where it went.
func TestReportIsWrittenAndSaysWhere(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report")
	var w bytes.Buffer
	if err := run(filepath.Join("..", ".."), record, runReports(t, ""), filepath.Join("..", "..", "golden"), out, false, &w); err != nil {
		t.Fatal(err)
	}
	if want := "report: wrote " + filepath.Join(out, "index.html") + ": "; !strings.HasPrefix(w.String(), want) {
		t.Errorf("printed %q, want it to start %q", w.String(), want)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Error(err)
	}
}

// A chart golden/ holds that the run did not write is an error naming it:
// the report never shows a committed file in place of this run's.
func TestAChartTheRunDidNotWriteIsAnError(t *testing.T) {
	err := run(filepath.Join("..", ".."), record, runReports(t, "skew.svg"), filepath.Join("..", "..", "golden"), filepath.Join(t.TempDir(), "r"), false, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "this run did not write skew.svg") {
		t.Errorf("got %v, want an error naming skew.svg", err)
	}
	err = run(filepath.Join("..", ".."), record, runReports(t, huntFile), filepath.Join("..", "..", "golden"), filepath.Join(t.TempDir(), "r"), false, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), huntFile) {
		t.Errorf("got %v, want an error naming %s", err, huntFile)
	}
	if err := run(".", "", "", "golden", "r", false, &bytes.Buffer{}); err == nil {
		t.Error("no -record and -reports: want an error")
	}
}

// -packages lists each package that declares a finding once, the root's
// first.
func TestPackagesListsWhereTheFindingsAre(t *testing.T) {
	var w bytes.Buffer
	if err := run(filepath.Join("..", ".."), "", "", "", "", true, &w); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	if len(lines) < 2 || lines[0] != "github.com/overshoot-go/overshoot" {
		t.Errorf("-packages printed %q, want the module's root first, then the others", lines)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("%s listed twice", l)
		}
		seen[l] = true
	}
}
