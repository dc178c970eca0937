package scenarios

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/overshoot-go/overshoot/internal/encode"
)

// The machine-readable reports: the matrix as JSON (Matrix.WriteJSON) and
// CSV (Matrix.WriteCSV), the hunt's verdicts as JSON (WriteVerdictsJSON),
// and one shard of a run split by seed (shard.go) as JSON.
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
	ShardSchema = "overshoot.shard/v2"
)

// ConditionsDoc is the runs' conditions (Options), as every schema of
// this package writes them.
type ConditionsDoc struct {
	Limit        encode.SchemaLimit `json:"limit"`
	DurationUS   int64              `json:"duration_us"`
	Seeds        []uint64           `json:"seeds"`
	Nodes        int                `json:"nodes"`
	RTTUS        int64              `json:"rtt_us"`
	JitterPct    int                `json:"jitter_pct"`
	SkewUS       int64              `json:"skew_us"`
	WipeAtUS     int64              `json:"wipe_at_us"`
	RestartEvery int64              `json:"restart_every_us"`
	Clients      []string           `json:"clients"`
}

func conditions(o Options) ConditionsDoc {
	c := ConditionsDoc{
		Limit:      encode.LimitOf(o.Limit),
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

// TableDoc is a document of TableSchema (Matrix.WriteJSON), for a reader
// of the JSON: the report decodes into it, so that what is written and
// what is read are one type.
type TableDoc struct {
	Schema     string        `json:"schema"`
	Conditions ConditionsDoc `json:"conditions"`
	Cells      []cellJSON    `json:"cells"`
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
		ref := ""
		if a < len(r.References) {
			ref = r.References[a]
		}
		for _, col := range r.Columns {
			if c, ok := r.Cell(name, col.Deployment); ok {
				out = append(out, cellOf(name, col, c, ref))
			}
		}
	}
	return out
}

// cellOf is cell c of algorithm name in column col, ref its reference.
func cellOf(name string, col Column, c Cell, ref string) cellJSON {
	j := cellJSON{Algorithm: name, Deployment: col.Deployment.String(), Column: col.Name, NotApplicable: c.NotApplicable}
	if c.NotApplicable != "" {
		return j
	}
	j.Peak, j.PeakX, j.PeakSeed, j.PeakClient = c.Peak, c.PeakX, c.PeakSeed, c.PeakClient.String()
	j.OverPct, j.OverSeed = measured(c.Over), c.OverSeed
	if j.OverPct != nil {
		j.OverClient = c.OverClient.String()
	}
	j.Reference = ref
	j.OverReferencePct, j.HonestRejectedPct = measured(c.OverReference), measured(c.HonestRejected)
	j.Violations, j.Runs, j.Errors = c.Violations, c.Runs, c.Errors
	if c.FirstError != nil {
		j.FirstError = c.FirstError.Error()
	}
	return j
}

// WriteJSON writes the matrix as one JSON document of schema TableSchema:
// the conditions, then a cell per algorithm and column (Cell over every
// client), each number as the table prints it but unrounded.
func (r Matrix) WriteJSON(w io.Writer) error {
	return encode.JSON(w, TableDoc{Schema: TableSchema, Conditions: conditions(r.Options), Cells: r.cells()})
}

// csvHeader is the columns of WriteCSV, the cell fields of the JSON.
var csvHeader = []string{"algorithm", "deployment", "column", "not_applicable", "peak", "peak_x", "peak_seed", "peak_client",
	"over_pct", "over_seed", "over_client", "reference", "over_reference_pct", "honest_rejected_pct", "violations", "runs", "errors", "first_error"}

// WriteCSV writes the matrix's cells as CSV, one row a cell under a header
// row of the JSON's cell field names; a number not measured is empty.
func (r Matrix) WriteCSV(w io.Writer) error {
	return writeCellsCSV(w, nil, []cellRow{{cells: r.cells()}})
}

// cellRow is cells with the leading columns every one of them shares.
type cellRow struct {
	lead  []string
	cells []cellJSON
}

// writeCellsCSV writes a header of the lead columns and csvHeader, then a
// row per cell, in one Write: the table's cells (no lead) or a curve's
// (lead: its param and value).
func writeCellsCSV(w io.Writer, lead []string, rows []cellRow) error {
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	var out [][]string
	for _, row := range rows {
		for _, c := range row.cells {
			out = append(out, append(slices.Clone(row.lead), c.Algorithm, c.Deployment, c.Column, c.NotApplicable, strconv.Itoa(c.Peak),
				strconv.FormatFloat(c.PeakX, 'g', -1, 64), strconv.FormatUint(c.PeakSeed, 10), c.PeakClient,
				num(c.OverPct), strconv.FormatUint(c.OverSeed, 10), c.OverClient, c.Reference, num(c.OverReferencePct),
				num(c.HonestRejectedPct), strconv.Itoa(c.Violations), strconv.Itoa(c.Runs), strconv.Itoa(c.Errors), c.FirstError))
		}
	}
	return encode.CSV(w, append(slices.Clone(lead), csvHeader...), out)
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

// HuntDoc is a document of HuntSchema (WriteVerdictsJSON), for a reader
// of the JSON.
type HuntDoc struct {
	Schema     string        `json:"schema"`
	Conditions ConditionsDoc `json:"conditions"`
	Verdicts   []verdictJSON `json:"verdicts"`
}

// WriteVerdictsJSON writes a hunt's verdicts under o as one JSON document
// of schema HuntSchema: the conditions, then per suspect its verdict and
// every kind of breach it showed (in Breaches order), with the seeds it
// showed on and its first example with its trace.
func WriteVerdictsJSON(w io.Writer, o Options, verdicts []Verdict) error {
	doc := HuntDoc{Schema: HuntSchema, Conditions: conditions(o), Verdicts: []verdictJSON{}}
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
	return encode.JSON(w, doc)
}

// shardJSON is one shard of a matrix, a curve or a hunt: the whole run's
// conditions and rows, and the shard's own seeds' results, run by run,
// with every number the merged reports are made of (shard.go).
type shardJSON struct {
	Schema     string        `json:"schema"`
	Kind       string        `json:"kind"`  // matrix, curve or hunt
	Shard      string        `json:"shard"` // "i/n"
	Conditions ConditionsDoc `json:"conditions"`
	ShardSeeds []uint64      `json:"shard_seeds"`
	// The rows: the limiters' names (matrix, curve) with, for a matrix,
	// each one's reference ("" for none), or the suspects' labels.
	Algorithms []string `json:"algorithms,omitempty"`
	References []string `json:"references,omitempty"`
	Suspects   []string `json:"suspects,omitempty"`
	// What a curve varies.
	Curve *shardCurveJSON `json:"curve,omitempty"`
	// The runs, in the order of the rows, then the columns (a curve's:
	// point by point, the ideal unless no_ideal, then the deployment),
	// then the seeds; the matrix's references' ideal runs after its own,
	// in row order; a hunt's verdict of each suspect on each seed.
	Runs          []seedRunJSON     `json:"runs,omitempty"`
	ReferenceRuns []seedRunJSON     `json:"reference_runs,omitempty"`
	Verdicts      []seedVerdictJSON `json:"verdicts,omitempty"`
}

// curveOfJSON is what a curve varies (CurveOf, but for its model and
// plot): its param by its name in JSON (paramKeys), the values it took,
// and the clients its cells summarize (none: every client of the
// conditions).
type curveOfJSON struct {
	Deployment string   `json:"deployment"`
	Param      string   `json:"param"`
	Values     []int64  `json:"values"`
	Clients    []string `json:"clients"`
}

// shardCurveJSON is what a curve a shard document holds varies, and
// whether it ran without the ideal (CurveOf.NoIdeal): the columns of its
// runs at each point.
type shardCurveJSON struct {
	curveOfJSON
	NoIdeal bool `json:"no_ideal,omitempty"`
}

// seedRunJSON is one SeedRun, with Point the curve's point (0 otherwise).
type seedRunJSON struct {
	Algorithm     string          `json:"algorithm"`
	Point         int             `json:"point"`
	Column        int             `json:"column"`
	Seed          uint64          `json:"seed"`
	NotApplicable string          `json:"not_applicable,omitempty"`
	Clients       []clientRunJSON `json:"clients"`
	FirstError    *string         `json:"first_error,omitempty"`
}

// clientRunJSON is one ClientRun of a client of the run.
type clientRunJSON struct {
	Client    string         `json:"client"`
	Requests  int            `json:"requests"`
	Admitted  int            `json:"admitted"`
	Peak      int            `json:"peak"`
	AfterWipe int            `json:"after_wipe"`
	Errors    int            `json:"errors"`
	Violation *violationJSON `json:"violation"`
}

// violationJSON is an algos.Violation.
type violationJSON struct {
	FromUS  int64  `json:"from_us"`
	ToUS    int64  `json:"to_us"`
	Admits  int64  `json:"admits"`
	Allowed int64  `json:"allowed"`
	Reason  string `json:"reason"`
}

// seedVerdictJSON is one suspect's Verdict on one seed: its first breach
// of each kind, in Breaches order, and FirstBreach the first of all.
type seedVerdictJSON struct {
	Suspect     string           `json:"suspect"`
	Seed        uint64           `json:"seed"`
	FirstBreach string           `json:"first_breach,omitempty"`
	Breaches    []seedBreachJSON `json:"breaches"`
	Requests    int              `json:"requests"`
	Errors      int              `json:"errors"`
	FirstError  *string          `json:"first_error,omitempty"`
}

// seedBreachJSON is a suspect's first breach of one kind on one seed.
type seedBreachJSON struct {
	Kind      string         `json:"kind"`
	Client    string         `json:"client"`
	Violation *violationJSON `json:"violation"`
	Trace     []string       `json:"trace"`
}

// SchemaFields lists the fields of a report schema (TableSchema,
// HuntSchema or ShardSchema) as paths ("cells[].peak", "conditions.limit.rate"), read
// from the types that write it, so that the documentation can be checked
// against what is written.
func SchemaFields(schema string) ([]string, error) {
	doc, ok := map[string]any{TableSchema: TableDoc{}, HuntSchema: HuntDoc{}, ShardSchema: shardJSON{}, CurveSchema: curveJSON{}}[schema]
	if !ok {
		return nil, fmt.Errorf("scenarios: no report schema %q (have %s, %s, %s and %s)", schema, TableSchema, HuntSchema, ShardSchema, CurveSchema)
	}
	return encode.Fields(doc), nil
}
