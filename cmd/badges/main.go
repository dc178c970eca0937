package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/overshoot-go/overshoot/internal/findings"
)

// Where the badges are published and the source is read, for the README.
const (
	endpointBase = "https://raw.githubusercontent.com/overshoot-go/overshoot/badges/"
	sourceBase   = "https://github.com/overshoot-go/overshoot/blob/main/"
)

// Badge is a shields.io endpoint document.
type Badge struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
}

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
	fs, err := findings.Declared(root)
	if err != nil {
		return err
	}
	if readme {
		for _, f := range fs {
			fmt.Fprintln(out, markdown(f))
		}
		return nil
	}
	// A step that failed before the tests: no finding ran, whatever a
	// record left by an earlier run says, and every badge says so.
	if notRun = strings.TrimSpace(notRun); notRun != "" {
		for i := range fs {
			fs[i].NotRun = notRun
		}
		return writeBadges(dir, fs, out)
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
	if _, err := findings.ReadVerdicts(in, fs); err != nil {
		if jsonPath != "-" {
			err = fmt.Errorf("%s: %w", jsonPath, err)
		}
		return err
	}
	return writeBadges(dir, fs, out)
}

// badgeFor says pass or fail with the measured number. A finding that did
// not run, or did not finish, is red and says so, never a pass: CI failed
// for it, and the badge must not keep an earlier run's green.
func badgeFor(f findings.Finding) Badge {
	b := Badge{SchemaVersion: 1, Label: f.Label, Message: f.Outcome()}
	switch {
	case f.NotRun != "":
		b.Color = "red"
		return b
	case f.Verdict == "pass":
		b.Color = "brightgreen"
	case f.Verdict == "skip":
		b.Color = "lightgrey"
	default: // broken, or did not finish
		b.Color = "red"
	}
	if f.Measured != "" {
		b.Message += ": " + f.Measured
	}
	return b
}

// markdown is the README's badge for f: the label as alt text, the
// published endpoint, and a link to the test's source line.
func markdown(f findings.Finding) string {
	return fmt.Sprintf("[![%s](https://img.shields.io/endpoint?url=%s%s.json)](%s%s#L%d)",
		f.Label, endpointBase, f.Name, sourceBase, f.File, f.Line)
}

func writeBadges(dir string, fs []findings.Finding, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range fs {
		b := badgeFor(f)
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return err
		}
		p := filepath.Join(dir, f.Name+".json")
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s (%s, %s): %s\n", p, b.Label, b.Color, b.Message)
	}
	return nil
}
