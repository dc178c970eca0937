package capacity

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/overshoot-go/overshoot/internal/encode"
	"github.com/overshoot-go/overshoot/metrics"
	"github.com/overshoot-go/overshoot/traffic"
)

// Schema is the schema of capacity's reports as JSON: a comparison of
// limiters on one trace (WriteComparisonJSON) and a sweep of one setting
// (SweepResult.WriteJSON). Its conventions are the other reports': times
// are integer µs (names ending in _us), shares percentages (_pct), and a
// number that was not measured is null, never 0. Within a version a field
// is only ever added.
const Schema = "overshoot.capacity/v1"

// capacityJSON is one comparison or one sweep: the trace, then a result per
// limiter (a comparison) or a row per value (a sweep).
type capacityJSON struct {
	Schema  string       `json:"schema"`
	Trace   traceJSON    `json:"trace"`
	Results []resultJSON `json:"results,omitempty"`
	Sweep   *sweepJSON   `json:"sweep,omitempty"`
}

// traceJSON summarizes the trace the limiters were given.
type traceJSON struct {
	Requests    int      `json:"requests"`
	Keys        []string `json:"keys"`
	FirstUS     int64    `json:"first_us"`
	SpanUS      int64    `json:"span_us"`
	OfferedCost int64    `json:"offered_cost"`
}

// sweepJSON is a Sweep's table: the budget, a row per value, and the
// tightest value that meets it (null when none does).
type sweepJSON struct {
	Parameter string         `json:"parameter"`
	BudgetPct float64        `json:"budget_pct"`
	Rows      []sweepRowJSON `json:"rows"`
	Tightest  *int64         `json:"tightest"`
}

type sweepRowJSON struct {
	Value       int64      `json:"value"`
	RejectedPct float64    `json:"rejected_pct"`
	Meets       bool       `json:"meets"`
	Result      resultJSON `json:"result"`
}

// resultJSON is one TraceResult: the limiter, its limit, and its run's measures
// (metrics.Run).
type resultJSON struct {
	Limiter      string             `json:"limiter"`
	Limit        encode.SchemaLimit `json:"limit"`
	AcceptedCost int64              `json:"accepted_cost"`
	FirstError   string             `json:"first_error,omitempty"`
	Requests     int64              `json:"requests"`
	Accepted     int64              `json:"accepted"`
	Rejected     int64              `json:"rejected"`
	Errors       int64              `json:"errors"`
	AcceptPct    *float64           `json:"accept_pct"`
	StartUS      int64              `json:"start_us"`
	EndUS        int64              `json:"end_us"`
	WindowUS     int64              `json:"window_us"`
	PerSecond    float64            `json:"accepted_per_second"`
	MostIn1s     int64              `json:"max_accepted_1s"`
	MostIn10s    int64              `json:"max_accepted_10s"`
	MostInWindow int64              `json:"max_accepted_window"`
	// FirstRejectionUS is null when nothing was refused.
	FirstRejectionUS *int64           `json:"first_rejection_us"`
	KeysDecided      int              `json:"keys_decided"`
	Jain             float64          `json:"jain"`
	Gini             float64          `json:"gini"`
	WorstKey         *string          `json:"worst_key"`
	RetryAfter       *percentilesJSON `json:"retry_after"`
	Held             int64            `json:"held"`
	Wait             *percentilesJSON `json:"wait"`
	StateCells       *int64           `json:"state_cells"`
	Timeline         []windowJSON     `json:"timeline"`
	Keys             []keyJSON        `json:"keys"`
}

// percentilesJSON is a metrics.Percentiles; null where there was nothing
// to summarize.
type percentilesJSON struct {
	N     int64 `json:"n"`
	P50US int64 `json:"p50_us"`
	P90US int64 `json:"p90_us"`
	P99US int64 `json:"p99_us"`
	MaxUS int64 `json:"max_us"`
}

type windowJSON struct {
	StartUS  int64 `json:"start_us"`
	Accepted int64 `json:"accepted"`
}

type keyJSON struct {
	Name      string   `json:"name"`
	Requests  int64    `json:"requests"`
	Accepted  int64    `json:"accepted"`
	Rejected  int64    `json:"rejected"`
	Errors    int64    `json:"errors"`
	AcceptPct *float64 `json:"accept_pct"`
}

// WriteComparisonJSON writes what WriteComparison prints, unrounded, as one
// JSON document of schema Schema: the trace, then each limiter's result
// with every measure of its run, its timeline and its keys.
func WriteComparisonJSON(w io.Writer, tr traffic.Trace, results []TraceResult) error {
	if len(results) == 0 {
		return fmt.Errorf("capacity: no results to compare")
	}
	doc := capacityJSON{Schema: Schema, Trace: traceOf(tr)}
	for _, r := range results {
		doc.Results = append(doc.Results, resultOf(r))
	}
	return encode.JSON(w, doc)
}

// WriteJSON writes the sweep's table as one JSON document of schema
// Schema: the trace, the budget, each value's result and whether it meets
// the budget, and the tightest value that does.
func (r SweepResult) WriteJSON(w io.Writer) error {
	s := r.Sweep
	doc := capacityJSON{Schema: Schema, Trace: traceOf(s.Trace),
		Sweep: &sweepJSON{Parameter: s.parameter(), BudgetPct: 100 * s.Budget, Rows: []sweepRowJSON{}}}
	for _, row := range r.Rows {
		doc.Sweep.Rows = append(doc.Sweep.Rows, sweepRowJSON{Value: row.Value, RejectedPct: 100 * row.Result.RejectShare(),
			Meets: row.Meets, Result: resultOf(row.Result)})
	}
	if best, ok := r.Tightest(); ok {
		doc.Sweep.Tightest = &best.Value
	}
	return encode.JSON(w, doc)
}

func traceOf(tr traffic.Trace) traceJSON {
	t := traceJSON{Requests: len(tr.Requests), Keys: tr.Keys, SpanUS: tr.Span()}
	if t.Keys == nil {
		t.Keys = []string{}
	}
	if len(tr.Requests) > 0 {
		t.FirstUS = tr.Requests[0].Sent
	}
	for _, q := range tr.Requests {
		t.OfferedCost += q.Cost
	}
	return t
}

func resultOf(r TraceResult) resultJSON {
	m := r.Run
	j := resultJSON{Limiter: r.Limiter, Limit: encode.LimitOf(r.Limit),
		AcceptedCost: r.AcceptedCost, Requests: m.Requests, Accepted: m.Accepted, Rejected: m.Rejected, Errors: m.Errors,
		AcceptPct: pctOf(m.AcceptRatio), StartUS: m.Start, EndUS: m.End, WindowUS: m.Window, PerSecond: m.AcceptedPerSecond,
		MostIn1s: m.MaxAccepted1s, MostIn10s: m.MaxAccepted10s, MostInWindow: m.PerWindow.Max, KeysDecided: m.KeysDecided,
		Jain: m.Jain, Gini: m.Gini, RetryAfter: percentilesOf(m.RetryAfter), Held: m.Held, Wait: percentilesOf(m.Wait),
		Timeline: []windowJSON{}, Keys: []keyJSON{}}
	if r.FirstError != nil {
		j.FirstError = r.FirstError.Error()
	}
	if m.TimeToFirstRejection >= 0 {
		j.FirstRejectionUS = &m.TimeToFirstRejection
	}
	if m.Worst >= 0 {
		j.WorstKey = &m.Keys[m.Worst].Name
	}
	if m.State.Samples > 0 {
		j.StateCells = &m.State.Cells
	}
	for _, wc := range m.Timeline {
		j.Timeline = append(j.Timeline, windowJSON{StartUS: wc.Start, Accepted: wc.Accepted})
	}
	for _, k := range m.Keys {
		j.Keys = append(j.Keys, keyJSON{Name: k.Name, Requests: k.Requests, Accepted: k.Accepted, Rejected: k.Rejected,
			Errors: k.Errors, AcceptPct: pctOf(k.AcceptRatio)})
	}
	return j
}

// pctOf is a ratio as a percentage, null when it was not measured (NaN).
func pctOf(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	p := 100 * x
	return &p
}

func percentilesOf(p metrics.Percentiles) *percentilesJSON {
	if p.N == 0 {
		return nil
	}
	return &percentilesJSON{N: p.N, P50US: p.P50, P90US: p.P90, P99US: p.P99, MaxUS: p.Max}
}

// SchemaFields lists the fields of Schema as paths ("results[].jain"),
// read from the types that write it, so that the documentation can be
// checked against what is written.
func SchemaFields() []string { return encode.Fields(capacityJSON{}) }

// csvHeader is the columns of capacity's CSV: a result's measures, as its
// JSON names them (percentiles flattened: retry_after_p99_us); a sweep's
// rows lead with value, rejected_pct and meets.
var csvHeader = []string{"limiter", "rate", "window_us", "burst", "requests", "accepted", "rejected", "errors", "accept_pct",
	"accepted_per_second", "max_accepted_1s", "max_accepted_10s", "max_accepted_window", "first_rejection_us", "keys_decided",
	"jain", "gini", "worst_key", "retry_after_n", "retry_after_p50_us", "retry_after_p90_us", "retry_after_p99_us",
	"retry_after_max_us", "held", "wait_p50_us", "wait_p90_us", "wait_p99_us", "wait_max_us", "state_cells", "first_error"}

// WriteComparisonCSV writes WriteComparisonJSON's results as CSV, a row
// per limiter; a number not measured is an empty field. Timelines and keys
// are in the JSON only.
func WriteComparisonCSV(w io.Writer, tr traffic.Trace, results []TraceResult) error {
	if len(results) == 0 {
		return fmt.Errorf("capacity: no results to compare")
	}
	rows := make([][]string, len(results))
	for i, r := range results {
		rows[i] = csvRow(resultOf(r))
	}
	return encode.CSV(w, csvHeader, rows)
}

// WriteCSV writes the sweep's table as CSV: a row per value, its rejected
// share and whether it meets the budget before its result's columns.
func (r SweepResult) WriteCSV(w io.Writer) error {
	rows := make([][]string, len(r.Rows))
	for i, row := range r.Rows {
		rows[i] = append([]string{strconv.FormatInt(row.Value, 10), formatFloat(100 * row.Result.RejectShare()),
			strconv.FormatBool(row.Meets)}, csvRow(resultOf(row.Result))...)
	}
	return encode.CSV(w, append([]string{"value", "rejected_pct", "meets"}, csvHeader...), rows)
}

func csvRow(j resultJSON) []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	opt := func(p *int64) string {
		if p == nil {
			return ""
		}
		return i(*p)
	}
	pct := func(p *float64) string {
		if p == nil {
			return ""
		}
		return formatFloat(*p)
	}
	worst := ""
	if j.WorstKey != nil {
		worst = *j.WorstKey
	}
	ra, wait := [5]string{}, [4]string{}
	if p := j.RetryAfter; p != nil {
		ra = [5]string{i(p.N), i(p.P50US), i(p.P90US), i(p.P99US), i(p.MaxUS)}
	}
	if p := j.Wait; p != nil {
		wait = [4]string{i(p.P50US), i(p.P90US), i(p.P99US), i(p.MaxUS)}
	}
	row := []string{j.Limiter, i(j.Limit.Rate), i(j.Limit.WindowUS), i(j.Limit.Burst), i(j.Requests), i(j.Accepted),
		i(j.Rejected), i(j.Errors), pct(j.AcceptPct), formatFloat(j.PerSecond), i(j.MostIn1s), i(j.MostIn10s),
		i(j.MostInWindow), opt(j.FirstRejectionUS), strconv.Itoa(j.KeysDecided), formatFloat(j.Jain), formatFloat(j.Gini), worst}
	row = append(row, ra[:]...)
	row = append(row, i(j.Held))
	row = append(row, wait[:]...)
	return append(row, opt(j.StateCells), j.FirstError)
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
