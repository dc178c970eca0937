// Command report writes one static HTML report of a run (package report):
// the findings' verdicts and numbers from the run's `go test -json` record,
// and the matrix, the hunt with each breach's trace, and the charts from
// the reports the same run wrote with -golden.out (table.json, mutants.json,
// *.svg). Every chart golden/ holds must be among them: a chart this run did
// not compute is an error, never an old file shown in its place. `make
// report` runs the tests and then this command. Usage:
//
//	go run ./cmd/report -record run.json -reports <dir> -out .report
//	go run ./cmd/report -packages   # the packages that declare findings
//
// # What it owns, and what it must not import
//
// Its flags, and choosing the run's files. It imports report and
// internal/findings.
package main
