package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/overshoot-go/overshoot/internal/findings"
)

// A small module with three findings, as findings.Declared reads it.
func writeModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := fstest.MapFS{
		"findings_test.go": {Data: []byte(`package x

// A holds.
// Badge: a holds
func TestFindingA(t *testing.T) {}

// Badge: b breaks
func TestFindingB(t *testing.T) {}

func TestOther(t *testing.T) {}
`)},
		"sub/findings_test.go": {Data: []byte(`package sub

// C never finishes.
//
// Badge: c hangs
func TestFindingC(t *testing.T) {}
`)},
	}
	if err := os.CopyFS(root, files); err != nil {
		t.Fatal(err)
	}
	return root
}

const stream = `{"Action":"run","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingA"}
{"Action":"output","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingA","Output":"    findings_test.go:10: measured: peak 5.79x at 50 ms\n"}
{"Action":"pass","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingA"}
{"Action":"run","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingB"}
{"Action":"run","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingB/sub"}
{"Action":"output","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingB/sub","Output":"    findings_test.go:12: measured: fixed-window 1.79x\n"}
{"Action":"fail","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingB/sub"}
{"Action":"fail","Package":"github.com/overshoot-go/overshoot","Test":"TestFindingB"}
{"Action":"run","Package":"github.com/overshoot-go/overshoot","Test":"TestOther"}
{"Action":"pass","Package":"github.com/overshoot-go/overshoot","Test":"TestOther"}
{"Action":"run","Package":"github.com/overshoot-go/overshoot/sub","Test":"TestFindingC"}
`

// The same module with a fourth finding the record does not name.
const notRun = "package sub\n\n// Badge: d never ran\nfunc TestFindingD(t *testing.T) {}\n"

// A badge shows the finding's short label, its verdict and the number it
// measured: a broken finding is red with its number, and a finding that
// never finished, or never ran, is red too, never shown as passing.
func TestBadgesShowLabelVerdictAndMeasuredNumber(t *testing.T) {
	root := writeModule(t)
	if err := os.WriteFile(filepath.Join(root, "sub", "notrun_test.go"), []byte(notRun), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "badges")
	if err := os.WriteFile(filepath.Join(root, "run.json"), []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(filepath.Join(root, "run.json"), dir, root, false, "", &out); err != nil {
		t.Fatal(err)
	}
	want := map[string]Badge{
		"TestFindingA": {1, "a holds", "holds: peak 5.79x at 50 ms", "brightgreen"},
		"TestFindingB": {1, "b breaks", "broken: fixed-window 1.79x", "red"},
		"TestFindingC": {1, "c hangs", "did not finish", "red"},
		"TestFindingD": {1, "d never ran", "not run: not in the record", "red"},
	}
	checkBadges(t, dir, want)
}

// checkBadges fails unless dir holds exactly the badges of want.
func checkBadges(t *testing.T, dir string, want map[string]Badge) {
	t.Helper()
	for name, w := range want {
		data, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Error(err)
			continue
		}
		var got Badge
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("%s: badge %+v, want %+v", name, got, w)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(want) {
		t.Errorf("%d badges written, want %d", len(entries), len(want))
	}
}

// The README's markdown for a badge carries the label as alt text and links
// to the line that declares the test.
func TestBadgeMarkdownLinksToTheTestsLine(t *testing.T) {
	fs, err := findings.Declared(writeModule(t))
	if err != nil {
		t.Fatal(err)
	}
	got := markdown(fs[len(fs)-1])
	want := "[![c hangs](https://img.shields.io/endpoint?url=https://raw.githubusercontent.com/overshoot-go/overshoot/badges/TestFindingC.json)](https://github.com/overshoot-go/overshoot/blob/main/sub/findings_test.go#L6)"
	if got != want {
		t.Errorf("markdown:\n got %s\nwant %s", got, want)
	}
}

func TestBadgesRejectBadInput(t *testing.T) {
	root := writeModule(t)
	if err := run(filepath.Join(root, "missing.json"), t.TempDir(), root, false, "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "make test") {
		t.Errorf("a missing record: %v, want an error that says to run make test", err)
	}
	bad := filepath.Join(root, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(bad, t.TempDir(), root, false, "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a malformed record: %v, want an error naming %s", err, bad)
	}
}

// Every finding of this module has its badge in the README's findings
// index, with its label and a link to the line it is declared on, and no
// badge anywhere in the README or docs/ is stale (another label, another
// line, a finding that is gone), so the docs cannot drift from the code;
// the failure prints the markdown to paste.
func TestREADMEShowsEveryFindingsBadgeLinkedToItsLine(t *testing.T) {
	root := filepath.Join("..", "..")
	fs, err := findings.Declared(root)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, index, _ := bytes.Cut(readme, []byte("\n## Findings\n"))
	index, _, _ = bytes.Cut(index, []byte("\n## "))
	current := map[string]string{}
	for _, f := range fs {
		md := markdown(f)
		current[f.Name] = md
		if !bytes.Contains(index, []byte(md)) {
			t.Errorf("README.md's findings index lacks the badge of %s (%s:%d); it should read:\n%s", f.Name, f.File, f.Line, md)
		}
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range badgeMarkdown.FindAllSubmatch(text, -1) {
			if md, ok := current[string(m[1])]; !ok {
				t.Errorf("%s shows a badge of %s, which is not a finding of this module", path, m[1])
			} else if string(m[0]) != md {
				t.Errorf("%s shows a stale badge of %s:\n%s\nit should read:\n%s", path, m[1], m[0], md)
			}
		}
	}
}

// badgeMarkdown is a finding's badge markdown, whatever its label and line.
var badgeMarkdown = regexp.MustCompile(`\[!\[[^\]]*\]\(https://img\.shields\.io/endpoint\?url=[^)]*/badges/(TestFinding\w+)\.json\)\]\([^)]*\)`)
