package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
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
)

// Where the badges are published and the source is read, for the README.
const (
	module       = "github.com/overshoot-go/overshoot"
	endpointBase = "https://raw.githubusercontent.com/overshoot-go/overshoot/badges/"
	sourceBase   = "https://github.com/overshoot-go/overshoot/blob/main/"
)

// testEvent is the part of test2json's event that badges reads. go test
// -json reports a package whose test binary could not be built with a
// "fail" event whose FailedBuild is set.
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

// Badge is a shields.io endpoint document.
type Badge struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
}

// finding is one TestFinding function: where it is, its badge's label, and
// what the run said of it.
type finding struct {
	pkg, name string // import path, test name
	file      string // slash path from the module root
	line      int    // of the func keyword
	label     string
	ran       bool   // the record names it
	verdict   string // pass, fail, skip, or "" when it did not finish
	measured  string
	notRun    string // why it did not run, when it did not: a CI step, or what the record says
}

// Why a finding the record does not name did not run, from what the record
// says of its package.
const (
	notRunBuild   = "build failed"        // its package's test binary did not build
	notRunStopped = "test binary stopped" // its package failed before it started: a panic, a timeout
	notRunAbsent  = "not in the record"   // its package is not there, or passed without it
)

var (
	measuredLine = regexp.MustCompile(`measured: (.*)$`)
	// go test's line for a package it could not build or set up, in plain
	// text (before Go 1.24, or with GODEBUG=gotestjsonbuildtext=1) or as
	// the package's output.
	buildFailedLine = regexp.MustCompile(`^FAIL\s+(\S+) \[(?:build|setup) failed\]`)
)

func main() {
	jsonPath := flag.String("json", "-", "the `go test -json` record to read (- for standard input)")
	dir := flag.String("dir", "badges", "folder to write one <TestName>.json per finding into")
	root := flag.String("root", ".", "the module's root, whose *_test.go files declare the findings")
	readme := flag.Bool("readme", false, "print the README's badge markdown for every finding, and write no badges")
	notRun := flag.String("not-run", "", "the CI `step` that failed before the tests ran: every finding's badge is red \"not run: <step>\", and no record is read")
	flag.Parse()
	if err := run(*jsonPath, *dir, *root, *readme, *notRun, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "badges:", err)
		os.Exit(1)
	}
}

func run(jsonPath, dir, root string, readme bool, notRun string, out io.Writer) error {
	findings, err := sourceFindings(root)
	if err != nil {
		return err
	}
	if readme {
		for _, f := range findings {
			fmt.Fprintln(out, markdown(f))
		}
		return nil
	}
	// A step that failed before the tests: no finding ran, whatever a
	// record left by an earlier run says, and every badge says so.
	if notRun = strings.TrimSpace(notRun); notRun != "" {
		for i := range findings {
			findings[i].notRun = notRun
		}
		return writeBadges(dir, findings, out)
	}
	var in io.Reader = os.Stdin
	if jsonPath != "-" {
		file, err := os.Open(jsonPath)
		if err != nil {
			return fmt.Errorf("%v (run `make test` first: it keeps the run's record there)", err)
		}
		defer file.Close()
		in = file
	}
	if err := readVerdicts(in, findings); err != nil {
		return err
	}
	return writeBadges(dir, findings, out)
}

// sourceFindings lists every TestFinding function in the module's test
// files, sorted by package and name, each with its Badge label. A finding
// without one is an error that says where to add it.
func sourceFindings(root string) ([]finding, error) {
	var out []finding
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
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		pkg := module
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
			out = append(out, finding{pkg: pkg, name: fn.Name.Name, file: rel, line: pos.Line, label: label})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no TestFinding functions in the *_test.go files under %s", root)
	}
	slices.SortFunc(out, func(a, b finding) int {
		return strings.Compare(a.pkg+" "+a.name, b.pkg+" "+b.name)
	})
	// Badges are published by test name alone.
	files := map[string]string{}
	for _, f := range out {
		if other, ok := files[f.name]; ok {
			return nil, fmt.Errorf("%s is declared in %s and in %s: badges need unique finding names", f.name, other, f.file)
		}
		files[f.name] = f.file
	}
	return out, nil
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

// readVerdicts fills in each finding's verdict and last measured line from
// a test2json stream. A finding the stream names but the source does not
// declare is an error (the record is from other code); one the stream does
// not name did not run, and is marked with why, as far as the record says:
// its package did not build, or its test binary stopped before it started
// (a panic, a timeout), or its package is not in the record. A record with
// no test2json event at all is an error: it is not `go test -json`'s.
func readVerdicts(r io.Reader, findings []finding) error {
	byKey := map[string]*finding{}
	for i := range findings {
		byKey[findings[i].pkg+" "+findings[i].name] = &findings[i]
	}
	events := 0
	buildFailed := map[string]bool{} // package: its test binary did not build
	pkgFailed := map[string]bool{}   // package: go test said FAIL for it
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
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
			return fmt.Errorf("malformed test2json line %q: %v", line, err)
		}
		events++
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
			return fmt.Errorf("the record has %s in %s, which no test file here declares: is it from another checkout?", name, e.Package)
		}
		f.ran = true
		switch {
		case e.Action == "output":
			if m := measuredLine.FindStringSubmatch(strings.TrimRight(e.Output, "\n")); m != nil {
				f.measured = strings.TrimSpace(m[1])
			}
		case e.Test == name && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			f.verdict = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if events == 0 {
		return errors.New("no test2json event in the record (it should be `go test -json ./...`'s)")
	}
	for i := range findings {
		f := &findings[i]
		switch {
		case f.ran:
		case buildFailed[f.pkg]:
			f.notRun = notRunBuild
		case pkgFailed[f.pkg]:
			f.notRun = notRunStopped
		default:
			f.notRun = notRunAbsent
		}
	}
	return nil
}

// badgeFor says pass or fail with the measured number. A finding that did
// not run, or did not finish, is red and says so, never a pass: CI failed
// for it, and the badge must not keep an earlier run's green.
func badgeFor(f finding) Badge {
	b := Badge{SchemaVersion: 1, Label: f.label}
	if f.notRun != "" {
		b.Color, b.Message = "red", "not run: "+f.notRun
		return b
	}
	switch f.verdict {
	case "pass":
		b.Color, b.Message = "brightgreen", "holds"
	case "fail":
		b.Color, b.Message = "red", "broken"
	case "skip":
		b.Color, b.Message = "lightgrey", "skipped"
	default:
		b.Color, b.Message = "red", "did not finish"
	}
	if f.measured != "" {
		b.Message += ": " + f.measured
	}
	return b
}

// markdown is the README's badge for f: the label as alt text, the
// published endpoint, and a link to the test's source line.
func markdown(f finding) string {
	return fmt.Sprintf("[![%s](https://img.shields.io/endpoint?url=%s%s.json)](%s%s#L%d)",
		f.label, endpointBase, f.name, sourceBase, f.file, f.line)
}

func writeBadges(dir string, findings []finding, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range findings {
		b := badgeFor(f)
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return err
		}
		p := filepath.Join(dir, f.name+".json")
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s (%s, %s): %s\n", p, b.Label, b.Color, b.Message)
	}
	return nil
}
