package findings

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Module is the import path of the module whose findings are read.
const Module = "github.com/overshoot-go/overshoot"

// Finding is one TestFinding function: where it is, its label, and what a
// run said of it (the zero values until ReadVerdicts).
type Finding struct {
	Package string // import path
	Name    string // the test's name
	File    string // slash path from the module root
	Line    int    // of the func keyword
	Label   string // the text after "Badge:" in its doc comment

	Ran      bool   // the record names it
	Verdict  string // pass, fail, skip, or "" when it did not finish
	Measured string // its last "measured: " line, without that prefix
	NotRun   string // why it did not run, when it did not: a CI step, or one of the NotRun reasons
}

// Why a finding the record does not name did not run, from what the record
// says of its package.
const (
	NotRunBuild   = "build failed"        // its package's test binary did not build
	NotRunStopped = "test binary stopped" // its package failed before it started: a panic, a timeout
	NotRunAbsent  = "not in the record"   // its package is not there, or passed without it
)

// Outcome is what the run made of f, in words: "holds", "broken",
// "skipped", "did not finish", or "not run: <why>". Only "holds" and
// "skipped" are not a failure of the run.
func (f Finding) Outcome() string {
	if f.NotRun != "" {
		return "not run: " + f.NotRun
	}
	switch f.Verdict {
	case "pass":
		return "holds"
	case "fail":
		return "broken"
	case "skip":
		return "skipped"
	}
	return "did not finish"
}

// Span is the time a record covers: the Time of its first and last events
// that carry one (zero when none does).
type Span struct {
	First, Last time.Time
}

// testEvent is the part of test2json's event that is read here. go test
// -json reports a package whose test binary could not be built with a
// "fail" event whose FailedBuild is set.
type testEvent struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

var (
	measuredLine = regexp.MustCompile(`measured: (.*)$`)
	// go test's line for a package it could not build or set up, in plain
	// text (before Go 1.24, or with GODEBUG=gotestjsonbuildtext=1) or as
	// the package's output.
	buildFailedLine = regexp.MustCompile(`^FAIL\s+(\S+) \[(?:build|setup) failed\]`)
)

// Declared lists every TestFinding function in the *_test.go files under
// root (the module's root; folders named testdata or vendor, or starting
// with a dot, are skipped), sorted by package and name, each with its
// Badge label. A finding without one is an error that says where to add
// it, and so is a name declared twice: badges are published by name alone.
func Declared(root string) ([]Finding, error) {
	var out []Finding
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(src, []byte("func TestFinding")) {
			return nil // most test files: no need to parse them
		}
		file, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		pkg := Module
		if dir := path.Dir(rel); dir != "." {
			pkg += "/" + dir
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "TestFinding") {
				continue
			}
			pos := fset.Position(fn.Pos())
			label := badgeLabel(fn.Doc)
			if label == "" {
				return fmt.Errorf("%s:%d: %s has no `// Badge: <a few words>` line in its doc comment", rel, pos.Line, fn.Name.Name)
			}
			out = append(out, Finding{Package: pkg, Name: fn.Name.Name, File: rel, Line: pos.Line, Label: label})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no TestFinding functions in the *_test.go files under %s", root)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return strings.Compare(a.Package+" "+a.Name, b.Package+" "+b.Name)
	})
	files := map[string]string{}
	for _, f := range out {
		if other, ok := files[f.Name]; ok {
			return nil, fmt.Errorf("%s is declared in %s and in %s: badges need unique finding names", f.Name, other, f.File)
		}
		files[f.Name] = f.File
	}
	return out, nil
}

// Packages is the import paths of the packages that declare fs, each once,
// in fs's order.
func Packages(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Package) {
			out = append(out, f.Package)
		}
	}
	return out
}

// badgeLabel is the text after "Badge:" in a doc comment, or "".
func badgeLabel(doc *ast.CommentGroup) string {
	if doc == nil {
		return ""
	}
	for _, line := range strings.Split(doc.Text(), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Badge:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// ReadVerdicts fills in each finding's verdict and last measured line from
// a test2json stream, and returns the time the stream covers. A finding the
// stream names but the source does not declare is an error (the record is
// from other code); one the stream does not name did not run, and is marked
// with why, as far as the record says: its package did not build, or its
// test binary stopped before it started (a panic, a timeout), or its
// package is not in the record. A record with no test2json event at all is
// an error: it is not `go test -json`'s. Records joined one after another
// are one stream: where a finding ran in several, the last one's verdict
// and measured line are kept (CI's badges job puts the merge's record,
// measured on the runs merged from the shards, after make test's).
func ReadVerdicts(r io.Reader, findings []Finding) (Span, error) {
	var span Span
	byKey := map[string]*Finding{}
	for i := range findings {
		byKey[findings[i].Package+" "+findings[i].Name] = &findings[i]
	}
	events := 0
	buildFailed := map[string]bool{} // package: its test binary did not build
	pkgFailed := map[string]bool{}   // package: go test said FAIL for it
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			// go test prints some build errors as plain text.
			if m := buildFailedLine.FindSubmatch(line); m != nil {
				buildFailed[string(m[1])] = true
			}
			continue
		}
		var e testEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return Span{}, fmt.Errorf("line %d: malformed test2json line %q: %v", n, line, err)
		}
		events++
		if !e.Time.IsZero() {
			if span.First.IsZero() {
				span.First = e.Time
			}
			span.Last = e.Time
		}
		if e.Test == "" {
			switch {
			case e.Action == "fail" && e.FailedBuild != "":
				buildFailed[e.Package] = true
			case e.Action == "fail":
				pkgFailed[e.Package] = true
			case e.Action == "output":
				if m := buildFailedLine.FindStringSubmatch(e.Output); m != nil {
					buildFailed[m[1]] = true
				}
			}
			continue
		}
		name, _, _ := strings.Cut(e.Test, "/")
		if !strings.HasPrefix(name, "TestFinding") {
			continue
		}
		f := byKey[e.Package+" "+name]
		if f == nil {
			return Span{}, fmt.Errorf("the record has %s in %s, which no test file here declares: is it from another checkout?", name, e.Package)
		}
		f.Ran = true
		switch {
		case e.Action == "output":
			if m := measuredLine.FindStringSubmatch(strings.TrimRight(e.Output, "\n")); m != nil {
				f.Measured = strings.TrimSpace(m[1])
			}
		case e.Test == name && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			f.Verdict = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		return Span{}, err
	}
	if events == 0 {
		return Span{}, errors.New("no test2json event in the record (it should be `go test -json ./...`'s)")
	}
	for i := range findings {
		f := &findings[i]
		switch {
		case f.Ran:
		case buildFailed[f.Package]:
			f.NotRun = NotRunBuild
		case pkgFailed[f.Package]:
			f.NotRun = NotRunStopped
		default:
			f.NotRun = NotRunAbsent
		}
	}
	return span, nil
}
