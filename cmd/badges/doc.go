// Command badges turns the JSON record of a test run (`go test -json`, as
// `make test` keeps it) into one shields.io endpoint badge per finding test
// (a top-level test named TestFinding...), so that the README can show,
// beside each finding, whether it held on the last CI run of main and the
// number it measured. A finding that broke is a red badge with its number,
// never an absent one: the badges are written whatever the verdicts.
//
// Each finding names its badge in its doc comment, with a line
//
//	// Badge: token bucket under skew
//
// and reports its number by logging a line that contains "measured: ";
// the last such line becomes the badge's message. Usage:
//
//	go run ./cmd/badges -json .test-results/go-test.json -dir badges
//
// The README links each badge to its test's source line; `-readme` prints
// that markdown, and this package's tests fail when README.md differs.
//
// # What it owns, and what it must not import
//
// Reading the test record and the findings' sources, and writing the
// badges and the README's markdown. It imports nothing of this module: it
// reads the tests as source, not as code.
package main
