// Package findings reads the module's findings and what a test run said of
// each. A finding is a top-level test named TestFinding... whose doc comment
// names it with a line
//
//	// Badge: token bucket under skew
//
// and which reports its number by logging a line that contains
// "measured: ". Declared lists the findings from the test files' source, so
// that a finding a run never reached is still listed; ReadVerdicts fills in
// each one's verdict and last measured line from the JSON record of a run
// (`go test -json`, as `make test` keeps it), and says why, as far as the
// record tells, a finding it does not name did not run. Outcome is the one
// wording of a verdict, for cmd/badges' badges and the report's table.
//
// # What it owns, and what it must not import
//
// Reading the findings' sources and a test2json record. It imports nothing
// of this module: it reads the tests as source, not as code.
package findings
