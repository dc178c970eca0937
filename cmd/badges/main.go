// Command badges turns `go test -json` output into one shields.io endpoint
// badge per finding test (a top-level test named TestFinding...), so a README
// can show, beside each finding, whether it held on the last CI run and the
// number it measured.
//
// A finding reports its number by logging a line that starts with
// "measured: "; the last such line becomes the badge's message. Usage:
//
//	go test -json ./... | go run ./cmd/badges -dir badges
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// testEvent is the part of test2json's event that badges reads.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// Badge is a shields.io endpoint document.
type Badge struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
}

type finding struct {
	name, verdict, measured string
}

var measuredLine = regexp.MustCompile(`measured: (.*)$`)

func main() {
	dir := flag.String("dir", "badges", "folder to write one <TestName>.json per finding into")
	flag.Parse()
	findings, err := readFindings(os.Stdin)
	if err == nil {
		err = writeBadges(*dir, findings)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "badges:", err)
		os.Exit(1)
	}
}

// readFindings collects the verdict and last measured line of every
// top-level TestFinding test in a test2json stream.
func readFindings(r io.Reader) ([]finding, error) {
	byName := map[string]*finding{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test prints build errors as plain text
		}
		var e testEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("malformed test2json line %q: %v", line, err)
		}
		name, _, _ := strings.Cut(e.Test, "/")
		if !strings.HasPrefix(name, "TestFinding") {
			continue
		}
		f := byName[name]
		if f == nil {
			f = &finding{name: name}
			byName[name] = f
			order = append(order, name)
		}
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
		return nil, err
	}
	if len(order) == 0 {
		return nil, errors.New("no TestFinding tests in the input (pipe `go test -json ./...` into it)")
	}
	slices.Sort(order)
	out := make([]finding, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out, nil
}

// badgeFor says pass or fail with the measured number; a finding that did not
// finish is shown as such, never as a pass.
func badgeFor(f finding) Badge {
	b := Badge{SchemaVersion: 1, Label: strings.TrimPrefix(f.name, "TestFinding")}
	switch f.verdict {
	case "pass":
		b.Color, b.Message = "brightgreen", "holds"
	case "fail":
		b.Color, b.Message = "red", "broken"
	case "skip":
		b.Color, b.Message = "lightgrey", "skipped"
	default:
		b.Color, b.Message = "lightgrey", "did not finish"
	}
	if f.measured != "" {
		b.Message += ": " + f.measured
	}
	return b
}

func writeBadges(dir string, findings []finding) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range findings {
		data, err := json.MarshalIndent(badgeFor(f), "", "  ")
		if err != nil {
			return err
		}
		path := filepath.Join(dir, f.name+".json")
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", path, badgeFor(f).Message)
	}
	return nil
}
