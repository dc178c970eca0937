package scenarios

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// The machine-readable reports: the matrix as JSON (Matrix.WriteJSON) and
// CSV (Matrix.WriteCSV), the hunt's verdicts as JSON (WriteVerdictsJSON).
// Each JSON document names its schema and version in its first field
// ("schema"); a field is never renamed or given another meaning within a
// version, only added. Times are integer µs (names ending in _us), shares
// and overs are percentages (names ending in _pct), and a number that was
// not measured is null, never 0. The bytes depend on the results alone, as
// the text tables' do.

// The schemas' names and versions.
const (
	TableSchema = "overshoot.table/v1"
	HuntSchema  = "overshoot.hunt/v1"
)

// conditionsJSON is the runs' conditions (Options), in both schemas.
type conditionsJSON struct {
	Limit        limitJSON `json:"limit"`
	DurationUS   int64     `json:"duration_us"`
	Seeds        []uint64  `json:"seeds"`
	Nodes        int       `json:"nodes"`
	RTTUS        int64     `json:"rtt_us"`
	JitterPct    int       `json:"jitter_pct"`
	SkewUS       int64     `json:"skew_us"`
	WipeAtUS     int64     `json:"wipe_at_us"`
	RestartEvery int64     `json:"restart_every_us"`
	Clients      []string  `json:"clients"`
}

type limitJSON struct {
	Rate     int64 `json:"rate"`
	WindowUS int64 `json:"window_us"`
	Burst    int64 `json:"burst"`
}

func conditions(o Options) conditionsJSON {
	c := conditionsJSON{
		Limit:      limitJSON{Rate: o.Limit.Rate, WindowUS: o.Limit.Window, Burst: o.Limit.Burst},
		DurationUS: o.Duration, Seeds: o.Seeds, Nodes: o.Nodes, RTTUS: o.RTT, JitterPct: o.Jitter,
		SkewUS: o.Skew, WipeAtUS: o.WipeAt, RestartEvery: o.RestartEvery, Clients: []string{},
	}
	for _, cl := range o.Clients() {
		c.Clients = append(c.Clients, cl.String())
	}
	return c
}

// cellJSON is one Cell.
type cellJSON struct {
	Algorithm         string   `json:"algorithm"`
	Deployment        string   `json:"deployment"`
	Column            string   `json:"column"`
	NotApplicable     string   `json:"not_applicable,omitempty"`
	Peak              int      `json:"peak"`
	PeakX             float64  `json:"peak_x"`
	PeakSeed          uint64   `json:"peak_seed"`
	PeakClient        string   `json:"peak_client"`
	OverPct           *float64 `json:"over_pct"`
	OverSeed          uint64   `json:"over_seed"`
	OverClient        string   `json:"over_client"`
	Reference         string   `json:"reference,omitempty"`
	OverReferencePct  *float64 `json:"over_reference_pct"`
	HonestRejectedPct *float64 `json:"honest_rejected_pct"`
	Violations        int      `json:"violations"`
	Runs              int      `json:"runs"`
	Errors            int      `json:"errors"`
	FirstError        string   `json:"first_error,omitempty"`
}

type tableJSON struct {
	Schema     string         `json:"schema"`
	Conditions conditionsJSON `json:"conditions"`
	Cells      []cellJSON     `json:"cells"`
}

// measured is p, or nil (null) for NaN: a number that was not measured.
func measured(p float64) *float64 {
	if math.IsNaN(p) {
		return nil
	}
	return &p
}

// cells is every cell of r, algorithm by algorithm, in column order.
func (r Matrix) cells() []cellJSON {
	var out []cellJSON
	for a, name := range r.Algorithms {
		for _, col := range r.Columns {
			c, ok := r.Cell(name, col.Deployment)
			if !ok {
				continue
			}
			j := cellJSON{Algorithm: name, Deployment: col.Deployment.String(), Column: col.Name, NotApplicable: c.NotApplicable}
			if c.NotApplicable == "" {
				j.Peak, j.PeakX, j.PeakSeed, j.PeakClient = c.Peak, c.PeakX, c.PeakSeed, c.PeakClient.String()
				j.OverPct, j.OverSeed = measured(c.Over), c.OverSeed
				if j.OverPct != nil {
					j.OverClient = c.OverClient.String()
				}
				if a < len(r.References) {
					j.Reference = r.References[a]
				}
				j.OverReferencePct, j.HonestRejectedPct = measured(c.OverReference), measured(c.HonestRejected)
				j.Violations, j.Runs, j.Errors = c.Violations, c.Runs, c.Errors
				if c.FirstError != nil {
					j.FirstError = c.FirstError.Error()
				}
			}
			out = append(out, j)
		}
	}
	return out
}

// WriteJSON writes the matrix as one JSON document of schema TableSchema:
// the conditions, then a cell per algorithm and column (Cell over every
// client), each number as the table prints it but unrounded.
func (r Matrix) WriteJSON(w io.Writer) error {
	return writeJSON(w, tableJSON{Schema: TableSchema, Conditions: conditions(r.Options), Cells: r.cells()})
}

// csvHeader is the columns of WriteCSV, the cell fields of the JSON.
var csvHeader = []string{"algorithm", "deployment", "column", "not_applicable", "peak", "peak_x", "peak_seed", "peak_client",
	"over_pct", "over_seed", "over_client", "reference", "over_reference_pct", "honest_rejected_pct", "violations", "runs", "errors", "first_error"}

// WriteCSV writes the matrix's cells as CSV, one row a cell under a header
// row of the JSON's cell field names; a number not measured is empty.
func (r Matrix) WriteCSV(w io.Writer) error {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write(csvHeader)
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, c := range r.cells() {
		_ = cw.Write([]string{c.Algorithm, c.Deployment, c.Column, c.NotApplicable, strconv.Itoa(c.Peak),
			strconv.FormatFloat(c.PeakX, 'g', -1, 64), strconv.FormatUint(c.PeakSeed, 10), c.PeakClient,
			num(c.OverPct), strconv.FormatUint(c.OverSeed, 10), c.OverClient, c.Reference, num(c.OverReferencePct),
			num(c.HonestRejectedPct), strconv.Itoa(c.Violations), strconv.Itoa(c.Runs), strconv.Itoa(c.Errors), c.FirstError})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// exampleJSON is one Example: where and why a breach showed.
type exampleJSON struct {
	Seed   uint64   `json:"seed"`
	Client string   `json:"client"`
	FromUS int64    `json:"from_us"`
	ToUS   int64    `json:"to_us"`
	Reason string   `json:"reason"`
	Trace  []string `json:"trace"`
}

// breachJSON is one kind of breach a suspect showed.
type breachJSON struct {
	Kind  string      `json:"kind"`
	Seeds int         `json:"seeds"`
	First exampleJSON `json:"first"`
}

// verdictJSON is one Verdict.
type verdictJSON struct {
	Suspect     string       `json:"suspect"`
	Caught      bool         `json:"caught"`
	Seeds       int          `json:"seeds"`
	SeedsCaught int          `json:"seeds_caught"`
	FirstBreach string       `json:"first_breach,omitempty"`
	Breaches    []breachJSON `json:"breaches"`
	Requests    int          `json:"requests"`
	Errors      int          `json:"errors"`
	FirstError  string       `json:"first_error,omitempty"`
}

type huntJSON struct {
	Schema     string         `json:"schema"`
	Conditions conditionsJSON `json:"conditions"`
	Verdicts   []verdictJSON  `json:"verdicts"`
}

// WriteVerdictsJSON writes a hunt's verdicts under o as one JSON document
// of schema HuntSchema: the conditions, then per suspect its verdict and
// every kind of breach it showed (in Breaches order), with the seeds it
// showed on and its first example with its trace.
func WriteVerdictsJSON(w io.Writer, o Options, verdicts []Verdict) error {
	doc := huntJSON{Schema: HuntSchema, Conditions: conditions(o), Verdicts: []verdictJSON{}}
	for _, v := range verdicts {
		j := verdictJSON{Suspect: v.Suspect, Caught: v.Caught, Seeds: v.Seeds, SeedsCaught: v.SeedsCaught,
			Breaches: []breachJSON{}, Requests: v.Requests, Errors: v.Errors}
		if v.Caught {
			j.FirstBreach = v.FirstBreach.String()
		}
		if v.FirstError != nil {
			j.FirstError = v.FirstError.Error()
		}
		for _, b := range Breaches() {
			ex := v.FirstBy[b]
			if ex == nil {
				continue
			}
			e := exampleJSON{Seed: ex.Seed, Client: ex.Client.String(), Trace: ex.Trace}
			if e.Trace == nil {
				e.Trace = []string{}
			}
			if ex.Violation != nil {
				e.FromUS, e.ToUS, e.Reason = ex.Violation.From, ex.Violation.To, ex.Violation.Reason
			}
			j.Breaches = append(j.Breaches, breachJSON{Kind: b.String(), Seeds: v.SeedsBy[b], First: e})
		}
		doc.Verdicts = append(doc.Verdicts, j)
	}
	return writeJSON(w, doc)
}

// writeJSON writes v indented, with a final newline, in one Write: a
// report is written whole or not at all by this function. Names such as
// "my <bucket>" are kept as they are (no HTML escaping).
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("scenarios: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// SchemaFields lists the fields of a report schema (TableSchema or
// HuntSchema) as paths ("cells[].peak", "conditions.limit.rate"), read
// from the types that write it, so that the documentation can be checked
// against what is written.
func SchemaFields(schema string) ([]string, error) {
	var t reflect.Type
	switch schema {
	case TableSchema:
		t = reflect.TypeFor[tableJSON]()
	case HuntSchema:
		t = reflect.TypeFor[huntJSON]()
	default:
		return nil, fmt.Errorf("scenarios: no report schema %q (have %s and %s)", schema, TableSchema, HuntSchema)
	}
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			path := prefix + name
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct:
				walk(ft, path+".")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				out = append(out, path)
				walk(ft.Elem(), path+"[].")
			default:
				out = append(out, path)
			}
		}
	}
	walk(t, "")
	return out, nil
}
