package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/overshoot-go/overshoot/internal/findings"
	"github.com/overshoot-go/overshoot/report"
)

// The reports a run writes with -golden.out, under the names golden/ has.
const (
	tableFile = "table.json"
	huntFile  = "mutants.json"
)

func main() {
	root := flag.String("root", ".", "the module's root, whose *_test.go files declare the findings")
	record := flag.String("record", "", "the run's `go test -json` record")
	reports := flag.String("reports", "", "the `folder` the run wrote its reports into (-golden.out): table.json, mutants.json and the charts")
	golden := flag.String("golden", "golden", "the golden `folder`: every chart it holds must be among the run's")
	out := flag.String("out", ".report", "the `folder` to write the report into (replaced whole)")
	packages := flag.Bool("packages", false, "print the import paths of the packages that declare findings, and write nothing")
	flag.Parse()
	if err := run(*root, *record, *reports, *golden, *out, *packages, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err) // package report's errors, and this one's, say "report: "
		os.Exit(1)
	}
}

func run(root, record, reports, golden, out string, packages bool, w io.Writer) error {
	if packages {
		fs, err := findings.Declared(root)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, p := range findings.Packages(fs) {
			fmt.Fprintln(w, p)
		}
		return nil
	}
	if record == "" || reports == "" {
		return fmt.Errorf("report: -record and -reports are required (make report runs the tests and passes them)")
	}
	charts, err := runCharts(reports, golden)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	sum, err := report.Write(out, report.Inputs{
		Root: root, Record: record,
		Table: filepath.Join(reports, tableFile), Hunt: filepath.Join(reports, huntFile),
		Charts: charts,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "report: wrote %s\n", sum)
	return nil
}

// runCharts is every SVG the run wrote, by name; a chart golden/ holds
// that the run did not write is an error.
func runCharts(reports, golden string) ([]string, error) {
	wrote, err := filepath.Glob(filepath.Join(reports, "*.svg"))
	if err != nil {
		return nil, err
	}
	want, err := filepath.Glob(filepath.Join(golden, "*.svg"))
	if err != nil {
		return nil, err
	}
	for _, g := range want {
		if _, err := os.Stat(filepath.Join(reports, filepath.Base(g))); err != nil {
			return nil, fmt.Errorf("this run did not write %s (%s has that chart): the test that writes it must run in make report (REPORT_TESTS)", filepath.Base(g), g)
		}
	}
	slices.Sort(wrote)
	return wrote, nil
}
