package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/encode"
	"github.com/overshoot-go/overshoot/internal/svgchart"
	"github.com/overshoot-go/overshoot/model"
)

// The skew sweep: every limiter's peak against the skew between node
// clocks, in the node-clock deployment. It is a curve (SkewCurve, run by
// RunCurve and sharded as every curve is); SkewSweep renders it in the
// format the sweep has always had (golden/skew.*), which differs from a
// curve's in every report, so that those bytes did not move when the
// sweep became a curve.

// DefaultSkews are the sweep's skews: 0 to 200 ms every 10 ms, in µs.
func DefaultSkews() []int64 {
	skews := make([]int64, 0, 21)
	for ms := int64(0); ms <= 200; ms += 10 {
		skews = append(skews, ms*1000)
	}
	return skews
}

// SkewCurve is the skew sweep as a curve: the node-clock deployment against
// the skew (µs, ascending, non-negative), every client, its peaks alone
// (NoIdeal: no ideal run, no over) and charted. o.Skew is not used: each
// point's is its value.
func SkewCurve(skews []int64) CurveOf {
	return CurveOf{Deployment: model.NodeClock, Param: ParamSkew, Values: skews, NoIdeal: true, Plot: PlotPeak}
}

// SkewSweep is a curve of the node clock against the skew (SkewCurve's,
// from RunCurve or MergeCurve) rendered as the skew sweep: a table of the
// peaks with WriteTo, a chart of them with WriteSVG, and their cells as
// JSON and CSV. It adds no run and no number to the curve's: each point is
// the curve's cell over the curve's clients (Curve.At), of which it reports
// the peak, the violations and the errors. Its renderers refuse a curve of
// another deployment or parameter.
type SkewSweep struct {
	Curve
}

// check says why r is not a skew sweep to render.
func (r SkewSweep) check() error {
	switch {
	case len(r.Values) == 0 || len(r.Points) != len(r.Values) || len(r.Algorithms) == 0:
		return errors.New("scenarios: a skew sweep with no skews, or not a point per skew, has nothing to show (RunCurve of SkewCurve makes one that has)")
	case r.Deployment != model.NodeClock || r.Param != ParamSkew:
		return fmt.Errorf("scenarios: a skew sweep is a curve of the node clock against the skew, not of %v against the %v", r.Deployment, r.Param)
	}
	return nil
}

// WriteTo renders the sweep as a text table, one row per skew and one
// column per algorithm: each cell the peak as a multiple of the limit. The
// bytes depend on the curve alone.
func (r SkewSweep) WriteTo(w io.Writer) (int64, error) {
	if err := r.check(); err != nil {
		return 0, err
	}
	var b bytes.Buffer
	o := r.Options
	win := algos.FormatMicros(o.Limit.Window)
	fmt.Fprintf(&b, "overshoot skew sweep\n\n")
	fmt.Fprintf(&b, "Peak: most admitted in any %s (by true decision time), as a multiple of the limit, the worst of\n", win)
	fmt.Fprintf(&b, "seeds %s and of the %d clients (%s), each client on\n", seedList(o.Seeds), len(r.cellClients()), r.clientWords())
	fmt.Fprintf(&b, "its own key with a limit of %v. Node clock: each node tells the store its own time;\n", o.Limit)
	fmt.Fprintf(&b, "%d node clocks spread evenly so that the two extreme ones are the skew apart. The store is %s away,\n", o.Nodes, algos.FormatMicros(o.RTT))
	fmt.Fprintf(&b, "round trip, each leg ±%d%%. %s per run.\n\n", o.Jitter, algos.FormatMicros(o.Duration))
	heads := append([]string{"skew"}, r.Algorithms...)
	rows := make([][]string, len(r.Values))
	for k, skew := range r.Values {
		row := []string{fmtMillis(skew)}
		for _, a := range r.Algorithms {
			c, _ := r.Cell(a, k)
			if c.NotApplicable != "" {
				row = append(row, "n/a")
				continue
			}
			row = append(row, fmtPeak(c.PeakX))
		}
		rows[k] = row
	}
	renderGrid(&b, nil, heads, rows)
	for _, a := range r.Algorithms {
		for k, skew := range r.Values {
			c, _ := r.Cell(a, k)
			if c.NotApplicable != "" {
				fmt.Fprintf(&b, "%s at %s: n/a, %s\n", a, fmtMillis(skew), c.NotApplicable)
			}
			if c.Errors > 0 {
				fmt.Fprintf(&b, "%s at %s: %d requests answered with an error, neither admitted nor denied; the first: %v\n",
					a, fmtMillis(skew), c.Errors, c.FirstError)
			}
		}
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// WriteSVG draws the sweep as a line chart: peak (× the limit) against the
// skew in ms, one line per algorithm, the limit as a dashed line at 1×. It
// is drawn as every chart of the module is (internal/svgchart); the bytes
// depend on the curve alone.
func (r SkewSweep) WriteSVG(w io.Writer) (int64, error) {
	if err := r.check(); err != nil {
		return 0, err
	}
	o := r.Options
	win := algos.FormatMicros(o.Limit.Window)
	c := chart{
		title: fmt.Sprintf("Most admitted in any %s, as a multiple of the limit, against clock skew", win),
		sub: []string{
			fmt.Sprintf("node-clock deployment: %d nodes, each telling the store its own time; the store %s away (±%d%% a leg)", o.Nodes, algos.FormatMicros(o.RTT), o.Jitter),
			fmt.Sprintf("%v per client; worst of seeds %s and of the %d clients, %s per run", o.Limit, seedList(o.Seeds), len(r.cellClients()), algos.FormatMicros(o.Duration)),
		},
		xLabel: "skew between the two extreme node clocks (ms)",
		yLabel: fmt.Sprintf("most admitted in any %s (× limit)", win),
		unit:   "×",
		ref:    svgchart.Ref{Y: 1, Label: fmt.Sprintf("limit: %d per %s", o.Limit.Rate, win), Legend: "the limit (1×)"},
		notes:  []string{"Lines that coincide are", "drawn solid and dashed.", "Peaks are counted by", "true decision time."},
	}
	for _, skew := range r.Values {
		c.xs = append(c.xs, float64(skew)/1000)
	}
	for a, name := range r.Algorithms {
		ys := make([]float64, len(r.Values))
		for k := range r.Values {
			cell, _ := r.Cell(name, k)
			ys[k] = cell.PeakX
		}
		c.series = append(c.series, chartSeries{name: name, ys: ys, style: svgchart.MarkedStyle(a)})
	}
	return c.write(w)
}

// WriteJSON writes the sweep as one JSON document of schema CurveSchema,
// its param "skew_us" in the node-clock deployment: at every skew, each
// algorithm's cell in a column named for the skew, with its peak over
// every client and seed, its violations out of its (seed, client) runs,
// and its errors. The sweep reports no over, reference or share of the
// honest client's requests turned away: null, and no model.
func (r SkewSweep) WriteJSON(w io.Writer) error {
	doc, err := r.doc()
	if err != nil {
		return err
	}
	return encode.JSON(w, doc)
}

// WriteCSV writes the cells of WriteJSON as Curve.WriteCSV does, its param
// skew_us.
func (r SkewSweep) WriteCSV(w io.Writer) error {
	doc, err := r.doc()
	if err != nil {
		return err
	}
	return doc.writeCSV(w)
}

// doc is the sweep as its JSON document: the curve's, its cells reduced to
// what the sweep reports.
func (r SkewSweep) doc() (curveJSON, error) {
	if err := r.check(); err != nil {
		return curveJSON{}, err
	}
	c := r.Curve
	c.Model = nil
	doc, err := c.doc()
	if err != nil {
		return curveJSON{}, err
	}
	for k := range doc.Points {
		p := &doc.Points[k]
		for i := range p.Cells {
			cell := &p.Cells[i]
			cell.Column = "skew " + algos.FormatMicros(p.Value)
			cell.OverPct, cell.OverSeed, cell.OverClient, cell.OverReferencePct, cell.HonestRejectedPct = nil, 0, "", nil, nil
		}
	}
	return doc, nil
}
