// Package report renders one run's results as one static HTML page: the
// findings' verdicts with the numbers they measured (from the run's
// `go test -json` record), the deployment matrix and the hunt (from the
// run's overshoot.table/v1 and overshoot.hunt/v1 JSON), each breach's trace
// under an anchor the hunt's table links to, and the run's SVG charts,
// copied beside the page. The page loads nothing from the network and runs
// no script: it is a folder to open from disk or keep as a CI artifact.
//
// Write builds the whole folder in a temporary one beside it and renames it
// into place, so a reader never sees half a report; bad input (a missing
// file, malformed JSON, another schema, a chart that is no SVG) is an error
// naming the file, and leaves an earlier report as it was. The same inputs
// give the same bytes.
//
// The tests open a written report in headless Chromium (chromedp) and fail
// on a console error or exception, an image that does not load, a link
// whose anchor or file does not exist, or a missing section; they also
// plant each of those breakages to show that the check fails on it. With
// -report.dir=<dir> they check that folder instead (`make report` does).
//
// # What it owns, and what it must not import
//
// The page and the folder. It reads the record through internal/findings,
// takes the schemas' names from scenarios and prints times with algos; it
// runs nothing, and no test helper (internal/golden) is imported.
package report
