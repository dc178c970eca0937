package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/findings"
	"github.com/overshoot-go/overshoot/scenarios"
)

// Inputs names the files of one run that a report shows.
type Inputs struct {
	Root   string   // the module's root, whose *_test.go files declare the findings
	Record string   // the run's `go test -json` record: the findings' verdicts
	Table  string   // the matrix the run computed (scenarios.TableSchema JSON)
	Hunt   string   // the hunt the run computed (scenarios.HuntSchema JSON)
	Charts []string // the run's SVG charts, shown in this order; their base names must differ
}

// Summary counts what a written report shows.
type Summary struct {
	Index    string // the written page: <dir>/index.html
	Findings int    // findings declared
	Held     int    // of them, those that held
	Failed   int    // broken, or did not finish
	Skipped  int
	NotRun   int
	Cells    int // the matrix's cells
	Suspects int // the hunt's suspects
	Caught   int // of them, those caught
	Traces   int // breaches, each with its trace
	Charts   int
}

// String is the summary in one line.
func (s Summary) String() string {
	return fmt.Sprintf("%s: %d findings (%d held, %d failed, %d skipped, %d not run), %d matrix cells, %d suspects hunted (%d caught, %d traces), %d charts",
		s.Index, s.Findings, s.Held, s.Failed, s.Skipped, s.NotRun, s.Cells, s.Suspects, s.Caught, s.Traces, s.Charts)
}

//go:embed index.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("index.html").Parse(pageText))

// chartsDir is the folder, beside index.html, the charts are copied into.
const chartsDir = "charts"

// Write renders the run that in names into dir: dir/index.html, and the
// charts in dir/charts. The folder is built beside dir and renamed over it,
// so dir is either the earlier report or the whole new one. A dir that
// exists and is not a report (not empty, no index.html) is left alone, and
// is an error.
func Write(dir string, in Inputs) (Summary, error) {
	if err := replaceable(dir); err != nil {
		return Summary{}, err
	}
	p, sum, err := read(in)
	if err != nil {
		return Summary{}, err
	}
	var html bytes.Buffer
	if err := pageTemplate.Execute(&html, p); err != nil {
		return Summary{}, fmt.Errorf("report: %w", err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Summary{}, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return Summary{}, err
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Summary{}, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "index.html"), html.Bytes(), 0o644); err != nil {
		return Summary{}, err
	}
	if len(p.Charts) > 0 {
		if err := os.Mkdir(filepath.Join(tmp, chartsDir), 0o755); err != nil {
			return Summary{}, err
		}
	}
	for i, c := range p.Charts {
		if err := os.WriteFile(filepath.Join(tmp, chartsDir, c.File), p.chartData[i], 0o644); err != nil {
			return Summary{}, err
		}
	}
	if err := replace(tmp, dir); err != nil {
		return Summary{}, err
	}
	sum.Index = filepath.Join(dir, "index.html")
	return sum, nil
}

// replaceable is nil when dir is absent, empty, or a report.
func replaceable(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("report: %s exists and is not a folder: not replacing it", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
		return nil
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		return fmt.Errorf("report: %s exists and holds no report (no index.html): not replacing it", dir)
	}
	return nil
}

// replace renames tmp to dir, moving an earlier dir aside first and
// removing it after; if the rename fails, the earlier dir is put back.
func replace(tmp, dir string) error {
	old := ""
	if _, err := os.Stat(dir); err == nil {
		if err := replaceable(dir); err != nil {
			return err
		}
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// page is what the template shows.
type page struct {
	Recorded string
	Counts   string
	Findings []findingRow
	Matrix   matrixView
	Hunt     huntView
	Charts   []chart

	chartData [][]byte
}

type findingRow struct {
	Label, Name, Where, Outcome, Measured, Class string
}

type matrixView struct {
	Conditions string
	Columns    []string
	Rows       []matrixRow
	Errors     []string
}

type matrixRow struct {
	Algorithm string
	Cells     []matrixCell
}

type matrixCell struct {
	NotApplicable                string
	Peak, Over, Honest, Violated string
	PeakTitle, OverTitle         string
}

type huntView struct {
	Conditions string
	Rows       []huntRow
	Traces     []trace
}

type huntRow struct {
	ID, Suspect, Verdict, Class, Seeds, FirstBreach string
	Breaches                                        []breachLink
	Requests, Errors                                int
	FirstError                                      string
}

type breachLink struct {
	Kind   string
	Seeds  int
	Anchor string
}

type trace struct {
	Anchor, Back, Suspect, Kind, Seed, Client, Window, Reason string
	Lines                                                     []string
}

type chart struct {
	File, Title string
}

// read reads every input, each error naming its file.
func read(in Inputs) (page, Summary, error) {
	var p page
	var sum Summary
	fs, err := findings.Declared(in.Root)
	if err != nil {
		return p, sum, fmt.Errorf("report: %w", err)
	}
	record, err := os.Open(in.Record)
	if err != nil {
		return p, sum, fmt.Errorf("report: the record: %w", err)
	}
	span, err := findings.ReadVerdicts(record, fs)
	record.Close()
	if err != nil {
		return p, sum, fmt.Errorf("report: %s: %w", in.Record, err)
	}
	p.Recorded = recorded(span)
	p.Findings, sum = findingRows(fs)
	p.Counts = fmt.Sprintf("%d findings: %d held, %d failed, %d skipped, %d not run.", sum.Findings, sum.Held, sum.Failed, sum.Skipped, sum.NotRun)

	var table scenarios.TableDoc
	if err := readJSON(in.Table, scenarios.TableSchema, &table, func() string { return table.Schema }); err != nil {
		return p, sum, err
	}
	if len(table.Cells) == 0 {
		return p, sum, fmt.Errorf("report: %s: the matrix has no cells", in.Table)
	}
	p.Matrix = matrix(table)
	sum.Cells = len(table.Cells)

	var hunt scenarios.HuntDoc
	if err := readJSON(in.Hunt, scenarios.HuntSchema, &hunt, func() string { return hunt.Schema }); err != nil {
		return p, sum, err
	}
	if len(hunt.Verdicts) == 0 {
		return p, sum, fmt.Errorf("report: %s: the hunt has no verdicts", in.Hunt)
	}
	p.Hunt = hunted(hunt)
	sum.Suspects, sum.Traces = len(hunt.Verdicts), len(p.Hunt.Traces)
	for _, v := range hunt.Verdicts {
		if v.Caught {
			sum.Caught++
		}
	}

	seen := map[string]string{}
	for _, path := range in.Charts {
		data, err := os.ReadFile(path)
		if err != nil {
			return p, sum, fmt.Errorf("report: a chart: %w", err)
		}
		if !isSVG(data) {
			return p, sum, fmt.Errorf("report: %s: not an SVG chart (it does not start with <svg)", path)
		}
		name := filepath.Base(path)
		if other, ok := seen[name]; ok {
			return p, sum, fmt.Errorf("report: two charts named %s: %s and %s", name, other, path)
		}
		seen[name] = path
		p.Charts = append(p.Charts, chart{File: name, Title: strings.TrimSuffix(name, ".svg")})
		p.chartData = append(p.chartData, data)
	}
	sum.Charts = len(p.Charts)
	return p, sum, nil
}

// readJSON decodes path into v, and checks its schema.
func readJSON(path, schema string, v any, got func() string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("report: %s: malformed JSON: %w", path, err)
	}
	if s := got(); s != schema {
		return fmt.Errorf("report: %s: schema %q, want %q", path, s, schema)
	}
	return nil
}

// isSVG: an SVG document, perhaps after an XML declaration or a comment.
func isSVG(data []byte) bool {
	s := bytes.TrimSpace(data)
	for bytes.HasPrefix(s, []byte("<?")) || bytes.HasPrefix(s, []byte("<!--")) {
		end := []byte("?>")
		if bytes.HasPrefix(s, []byte("<!--")) {
			end = []byte("-->")
		}
		i := bytes.Index(s, end)
		if i < 0 {
			return false
		}
		s = bytes.TrimSpace(s[i+len(end):])
	}
	return bytes.HasPrefix(s, []byte("<svg")) && bytes.Contains(s, []byte("</svg>"))
}

func recorded(s findings.Span) string {
	if s.First.IsZero() {
		return "The record carries no times."
	}
	return fmt.Sprintf("The findings' verdicts are from the test run recorded from %s to %s.",
		s.First.UTC().Format(time.RFC3339), s.Last.UTC().Format(time.RFC3339))
}

func findingRows(fs []findings.Finding) ([]findingRow, Summary) {
	var rows []findingRow
	sum := Summary{Findings: len(fs)}
	for _, f := range fs {
		class := "failed"
		switch {
		case f.NotRun != "":
			class = "notrun"
			sum.NotRun++
		case f.Verdict == "pass":
			class = "held"
			sum.Held++
		case f.Verdict == "skip":
			class = "skipped"
			sum.Skipped++
		default:
			sum.Failed++
		}
		rows = append(rows, findingRow{Label: f.Label, Name: f.Name, Where: fmt.Sprintf("%s:%d", f.File, f.Line),
			Outcome: f.Outcome(), Measured: f.Measured, Class: class})
	}
	return rows, sum
}

func conditionsText(c scenarios.ConditionsDoc) string {
	l := algos.Limit{Rate: c.Limit.Rate, Window: c.Limit.WindowUS, Burst: c.Limit.Burst}
	parts := []string{
		"limit " + l.String(),
		algos.FormatMicros(c.DurationUS) + " a run",
		"seeds " + seedRange(c.Seeds),
		fmt.Sprintf("%d nodes", c.Nodes),
		fmt.Sprintf("round trip %s (±%d%% a leg)", algos.FormatMicros(c.RTTUS), c.JitterPct),
	}
	if c.SkewUS > 0 {
		parts = append(parts, "node clocks "+algos.FormatMicros(c.SkewUS)+" apart")
	} else {
		parts = append(parts, "node clocks in agreement")
	}
	if c.WipeAtUS > 0 {
		parts = append(parts, "store wiped at "+algos.FormatMicros(c.WipeAtUS))
	}
	if c.RestartEvery > 0 {
		parts = append(parts, "restarts every "+algos.FormatMicros(c.RestartEvery)+" on average")
	}
	parts = append(parts, "clients: "+strings.Join(c.Clients, ", "))
	return strings.Join(parts, "; ") + "."
}

// seedRange prints seeds as runs: 1-10, 12.
func seedRange(seeds []uint64) string {
	var out []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			out = append(out, strconv.FormatUint(seeds[i], 10))
		}
		i = j + 1
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func pct(p *float64, sign bool) string {
	if p == nil || math.IsNaN(*p) {
		return "–"
	}
	if sign {
		return fmt.Sprintf("%+.1f%%", *p)
	}
	return fmt.Sprintf("%.1f%%", *p)
}

// matrix pivots the cells: a row per algorithm, a column group per column,
// both in the order the document first names them.
func matrix(t scenarios.TableDoc) matrixView {
	v := matrixView{Conditions: conditionsText(t.Conditions)}
	rowOf, colOf := map[string]int{}, map[string]int{}
	for _, c := range t.Cells {
		if _, ok := colOf[c.Column]; !ok {
			colOf[c.Column] = len(v.Columns)
			v.Columns = append(v.Columns, c.Column)
		}
		if _, ok := rowOf[c.Algorithm]; !ok {
			rowOf[c.Algorithm] = len(v.Rows)
			v.Rows = append(v.Rows, matrixRow{Algorithm: c.Algorithm})
		}
	}
	for i := range v.Rows {
		v.Rows[i].Cells = make([]matrixCell, len(v.Columns))
		for j := range v.Rows[i].Cells {
			v.Rows[i].Cells[j].NotApplicable = "not in this run's table"
		}
	}
	for _, c := range t.Cells {
		cell := matrixCell{NotApplicable: c.NotApplicable}
		if c.NotApplicable == "" {
			cell.Peak = fmt.Sprintf("%.2fx", c.PeakX)
			cell.PeakTitle = fmt.Sprintf("seed %d, %s client", c.PeakSeed, c.PeakClient)
			cell.Over = pct(c.OverPct, true)
			if c.OverPct != nil {
				cell.OverTitle = fmt.Sprintf("seed %d, %s client", c.OverSeed, c.OverClient)
			}
			cell.Honest = pct(c.HonestRejectedPct, false)
			cell.Violated = fmt.Sprintf("%d/%d", c.Violations, c.Runs)
			if c.Errors > 0 {
				v.Errors = append(v.Errors, fmt.Sprintf("%s, %s: %d errors, the first: %s", c.Algorithm, c.Column, c.Errors, c.FirstError))
			}
		}
		v.Rows[rowOf[c.Algorithm]].Cells[colOf[c.Column]] = cell
	}
	return v
}

// hunted is the hunt's table, and a trace per breach with an anchor the
// table links to and a link back to the suspect's row.
func hunted(h scenarios.HuntDoc) huntView {
	v := huntView{Conditions: conditionsText(h.Conditions)}
	for i, s := range h.Verdicts {
		row := huntRow{ID: fmt.Sprintf("suspect-%d", i+1), Suspect: s.Suspect, Verdict: "clean", Class: "held",
			Seeds: fmt.Sprintf("%d of %d", s.SeedsCaught, s.Seeds), FirstBreach: s.FirstBreach,
			Requests: s.Requests, Errors: s.Errors, FirstError: s.FirstError}
		if s.Caught {
			row.Verdict, row.Class = "caught", "failed"
		}
		for j, b := range s.Breaches {
			anchor := fmt.Sprintf("trace-%d-%d", i+1, j+1)
			row.Breaches = append(row.Breaches, breachLink{Kind: b.Kind, Seeds: b.Seeds, Anchor: anchor})
			window := seconds(b.First.FromUS)
			if b.First.ToUS != b.First.FromUS {
				window += " to " + seconds(b.First.ToUS)
			}
			v.Traces = append(v.Traces, trace{Anchor: anchor, Back: row.ID, Suspect: s.Suspect, Kind: b.Kind,
				Seed: strconv.FormatUint(b.First.Seed, 10), Client: b.First.Client, Window: window,
				Reason: b.First.Reason, Lines: b.First.Trace})
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// seconds prints a time in µs as the traces do: 2.990480s.
func seconds(us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Sprintf("%s%d.%06ds", sign, us/1_000_000, us%1_000_000)
}
