package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/internal/findings"
)

// fixture is a real run's files: an excerpt of a `go test -json` record
// (three findings, as a run logged them), and the matrix, hunt and charts
// a run of the table tests wrote (golden/ holds them, and the root tests
// keep them current).
func fixture(t *testing.T) Inputs {
	t.Helper()
	charts, err := filepath.Glob(filepath.Join("..", "golden", "*.svg"))
	if err != nil || len(charts) == 0 {
		t.Fatalf("no charts in ../golden: %v", err)
	}
	return Inputs{
		Root:   "..",
		Record: filepath.Join("testdata", "record.json"),
		Table:  filepath.Join("..", "golden", "table.json"),
		Hunt:   filepath.Join("..", "golden", "mutants.json"),
		Charts: charts,
	}
}

func write(t *testing.T, in Inputs) (string, Summary) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "report")
	sum, err := Write(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum
}

// The page shows every declared finding with what the record says of it,
// a matrix row per algorithm, a hunt row per suspect, every breach linked
// to an anchor that holds its trace, and every chart, copied unchanged.
func TestReportShowsEveryFindingCellSuspectTraceAndChart(t *testing.T) {
	in := fixture(t)
	dir, sum := write(t, in)
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)

	declared, err := findings.Declared(in.Root)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Findings != len(declared) || sum.Held != 3 || sum.NotRun != len(declared)-3 || sum.Failed != 0 {
		t.Errorf("summary %+v: want %d findings, the record's 3 held and the rest not run", sum, len(declared))
	}
	if got := strings.Count(text, `<tr class="held"><td>`); got != 3 {
		t.Errorf("%d findings shown as held, want the record's 3", got)
	}
	for _, f := range declared {
		if !strings.Contains(text, "<code>"+f.Name+"</code>") {
			t.Errorf("the page lacks the finding %s", f.Name)
		}
	}
	if !strings.Contains(text, "<td>holds</td><td>token bucket 5.94x at 50 ms skew, leaky-bucket 2.03x, gcra 2.02x</td>") {
		t.Error("the page lacks TestFindingTokenBucketCollapsesUnderSkew's verdict and measured line")
	}
	if !strings.Contains(text, "recorded from 2026-12-02T18:36:20Z to 2026-12-02T18:36:28Z") {
		t.Error("the page does not say when the record was made")
	}

	var table struct {
		Cells []struct{ Algorithm string } `json:"cells"`
	}
	readJSONFile(t, in.Table, &table)
	algorithms := map[string]bool{}
	for _, c := range table.Cells {
		algorithms[c.Algorithm] = true
	}
	if sum.Cells != len(table.Cells) {
		t.Errorf("%d cells summarized, the table has %d", sum.Cells, len(table.Cells))
	}
	for a := range algorithms {
		if !strings.Contains(text, "<tr><th>"+a+"</th>") {
			t.Errorf("the matrix lacks a row for %s", a)
		}
	}
	matrix := text[strings.Index(text, `<section id="matrix">`):]
	matrix = matrix[:strings.Index(matrix, "</section>")]
	if got := strings.Count(matrix, "<tr><th>") - 1; got != len(algorithms) { // less the header's second row
		t.Errorf("%d matrix rows, want one per algorithm: %d", got, len(algorithms))
	}

	var hunt struct {
		Verdicts []struct {
			Suspect  string `json:"suspect"`
			Breaches []struct {
				Kind  string `json:"kind"`
				First struct {
					Reason string   `json:"reason"`
					Trace  []string `json:"trace"`
				} `json:"first"`
			} `json:"breaches"`
		} `json:"verdicts"`
	}
	readJSONFile(t, in.Hunt, &hunt)
	if sum.Suspects != len(hunt.Verdicts) || strings.Count(text, `<tr id="suspect-`) != len(hunt.Verdicts) {
		t.Errorf("%d suspects summarized, %d rows, the hunt has %d", sum.Suspects, strings.Count(text, `<tr id="suspect-`), len(hunt.Verdicts))
	}
	traces := 0
	rowRE := regexp.MustCompile(`(?s)<tr id="suspect-\d+"[^>]*>(.*?)</tr>`)
	linkRE := regexp.MustCompile(`<a href="#([^"]+)">([^<]*)</a>`)
	rows := rowRE.FindAllStringSubmatch(text, -1)
	for i, v := range hunt.Verdicts {
		if i >= len(rows) {
			break
		}
		links := linkRE.FindAllStringSubmatch(rows[i][1], -1)
		if len(links) != len(v.Breaches) {
			t.Errorf("%s: %d links in its row, want one per breach: %d", v.Suspect, len(links), len(v.Breaches))
			continue
		}
		for j, b := range v.Breaches {
			traces++
			if html.UnescapeString(links[j][2]) != b.Kind {
				t.Errorf("%s: link %d says %q, want %q", v.Suspect, j+1, links[j][2], b.Kind)
			}
			at := strings.Index(text, `<article id="`+links[j][1]+`">`)
			if at < 0 {
				t.Errorf("%s, %s: the link #%s has no anchor", v.Suspect, b.Kind, links[j][1])
				continue
			}
			body := text[at:]
			body = html.UnescapeString(body[:strings.Index(body, "</article>")])
			want := append([]string{"<h3>" + v.Suspect + ": " + b.Kind + "</h3>", b.First.Reason}, b.First.Trace...)
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("%s, %s: the anchor %s lacks %q", v.Suspect, b.Kind, links[j][1], w)
				}
			}
		}
	}
	if sum.Traces != traces || strings.Count(text, "<article id=") != traces {
		t.Errorf("%d traces summarized, %d anchors, the hunt has %d breaches", sum.Traces, strings.Count(text, "<article id="), traces)
	}

	if sum.Charts != len(in.Charts) {
		t.Errorf("%d charts summarized, want %d", sum.Charts, len(in.Charts))
	}
	for _, c := range in.Charts {
		name := filepath.Base(c)
		want, _ := os.ReadFile(c)
		got, err := os.ReadFile(filepath.Join(dir, "charts", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("charts/%s is not a copy of %s: %v", name, c, err)
		}
		if !strings.Contains(text, `<img src="charts/`+name+`"`) {
			t.Errorf("the page does not show charts/%s", name)
		}
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// The same inputs give the same bytes, and writing again replaces the
// report whole, leaving nothing else beside it.
func TestReportIsTheSameBytesAndReplacedWhole(t *testing.T) {
	in := fixture(t)
	dir, _ := write(t, in)
	first, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "charts", "stale.svg")
	if err := os.WriteFile(stale, []byte("<svg></svg>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("two reports of the same inputs differ")
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a file of the earlier report survived the new one")
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("beside the report: %v, want the report alone", entries)
	}
}

// Bad input is an error that names the file, and leaves the earlier report
// as it was; a folder that is not a report is never replaced.
func TestBadInputIsAnErrorNamingTheFile(t *testing.T) {
	tmp := t.TempDir()
	put := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := fixture(t)
	dir, _ := write(t, good)
	before, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*Inputs)
		want string // in the error
	}{
		{"a missing record", func(in *Inputs) { in.Record = filepath.Join(tmp, "none.json") }, "none.json"},
		{"a malformed record", func(in *Inputs) { in.Record = put("bad-record.json", "{\"Action\":\n") }, "bad-record.json"},
		{"a missing table", func(in *Inputs) { in.Table = filepath.Join(tmp, "no-table.json") }, "no-table.json"},
		{"a malformed table", func(in *Inputs) { in.Table = put("bad-table.json", `{"schema": "overshoot.table/v1", "cells": [`) }, "bad-table.json: malformed JSON"},
		{"the hunt given as the table", func(in *Inputs) { in.Table = in.Hunt }, `mutants.json: schema "overshoot.hunt/v1", want "overshoot.table/v1"`},
		{"a table without cells", func(in *Inputs) { in.Table = put("empty-table.json", `{"schema": "overshoot.table/v1", "cells": []}`) }, "empty-table.json: the matrix has no cells"},
		{"a malformed hunt", func(in *Inputs) { in.Hunt = put("bad-hunt.json", `{"schema": 1}`) }, "bad-hunt.json: malformed JSON"},
		{"a missing chart", func(in *Inputs) { in.Charts = append(in.Charts, filepath.Join(tmp, "gone.svg")) }, "gone.svg"},
		{"a chart that is no SVG", func(in *Inputs) { in.Charts = append(in.Charts, put("png.svg", "\x89PNG")) }, "png.svg: not an SVG"},
		{"an empty chart", func(in *Inputs) { in.Charts = append(in.Charts, put("empty.svg", "")) }, "empty.svg: not an SVG"},
		{"two charts of one name", func(in *Inputs) { in.Charts = append(in.Charts, in.Charts[0]) }, "two charts named"},
	} {
		in := good
		in.Charts = append([]string(nil), good.Charts...)
		c.edit(&in)
		if _, err := Write(dir, in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	after, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("bad input changed the earlier report: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("beside the report: %v, want the report alone", entries)
	}

	notReport := t.TempDir()
	keep := filepath.Join(notReport, "keep.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(notReport, good); err == nil || !strings.Contains(err.Error(), "holds no report") {
		t.Errorf("writing over a folder that is not a report: %v, want a refusal", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the folder that is not a report lost its file: %v", err)
	}
}
