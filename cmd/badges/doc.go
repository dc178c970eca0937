// Command badges turns the JSON record of a test run (`go test -json`, as
// `make test` keeps it) into one shields.io endpoint badge per finding test
// (a top-level test named TestFinding...), so that the README can show,
// beside each finding, whether it held on the last CI run of main and the
// number it measured. A finding that broke is a red badge with its number,
// never an absent one: the badges are written whatever the verdicts. A
// finding that did not run is red too, "not run: <why>": its package did
// not build, or its test binary stopped before it (a panic, a timeout), or
// the record does not name it; with -not-run=<step> (.ci/run, when a step
// before the tests failed) no record is read and every finding's badge is
// red, "not run: <step>", so that no badge keeps an earlier run's green.
//
// Each finding names its badge in its doc comment, with a line
//
//	// Badge: token bucket under skew
//
// and reports its number by logging a line that contains "measured: ";
// the last such line becomes the badge's message. Usage:
//
//	go run ./cmd/badges -json .test-results/go-test.json -dir badges
//	go run ./cmd/badges -not-run lint -dir badges
//
// The findings are read from the test files, never from the record, so a
// run that never happened still gives every finding its badge. Both are
// read by internal/findings, shared with the HTML report (cmd/report);
// this command owns the badges' colors and files.
//
// The README links each badge to its test's source line; `-readme` prints
// that markdown, and this package's tests fail when README.md differs.
//
// # What it owns, and what it must not import
//
// Writing the badges and the README's markdown. It imports only
// internal/findings, which reads the tests as source, not as code, and the
// record. Its tests also run .ci/steps.sh, the part of .ci/run that names
// each step and writes the not-run badges.
package main
