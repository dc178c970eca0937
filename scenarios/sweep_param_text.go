package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/svgchart"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// paramHead is the heading of the curve's first column.
func (p Param) head() string {
	switch p {
	case ParamRestartEvery:
		return "restart every"
	case ParamNodes:
		return "nodes"
	case ParamWipePhase:
		return "wiped at"
	case ParamRTT:
		return "round trip"
	}
	return "skew"
}

// deploymentWords says what deployment d is under o, but for param p
// (which the rows give).
func deploymentWords(d model.Deployment, o Options, p Param) string {
	nodes := fmt.Sprintf("%d nodes", o.Nodes)
	rtt := "the store " + algos.FormatMicros(o.RTT) + " away (round trip)"
	skew := "clocks " + algos.FormatMicros(o.Skew) + " apart"
	restarts := "restarting every " + algos.FormatMicros(o.RestartEvery) + " on average"
	if o.RestartEvery == 0 {
		restarts = "never restarting"
	}
	switch p {
	case ParamNodes:
		nodes = "N nodes"
	case ParamRTT:
		rtt = "the store a round trip away"
	case ParamSkew:
		skew = "clocks the skew apart"
	case ParamRestartEvery:
		restarts = "restarting every R on average (each gap uniform in [1µs, 2R]), losing its state"
	}
	switch d {
	case model.NodeClock:
		return fmt.Sprintf("node clock: %s, each telling the store its own time, %s; %s", nodes, skew, rtt)
	case model.StoreClock:
		return fmt.Sprintf("store clock: %s, the script reads the store's time; %s", nodes, rtt)
	case model.StoreWiped:
		wipe := "every key lost at " + fmtSeconds(o.WipeAt)
		if p == ParamWipePhase {
			wipe = "every key lost once, at the time the row gives"
		}
		return fmt.Sprintf("store wiped: %s, the script reads the store's time; %s; %s", nodes, rtt, wipe)
	case model.LocalSplit:
		return fmt.Sprintf("local split: no store, %s each enforcing L/N per W (burst B/N) on its own clock, %s, %s", nodes, skew, restarts)
	case model.GetSet:
		return fmt.Sprintf("GET, decide, SET: %s, clocks in agreement, nothing restarting; %s", nodes, rtt)
	case model.LocalFull:
		return fmt.Sprintf("local, full limit: no store, %s each enforcing the whole limit, nothing restarting", nodes)
	}
	return d.String()
}

// cellClients are the clients a curve's cells are taken over: its
// Clients, or every client of its options.
func (r Curve) cellClients() []traffic.ClientKind {
	if len(r.Clients) == 0 {
		return r.Options.Clients()
	}
	return r.Clients
}

// clientWords names the clients a curve's cells are taken over.
func (r Curve) clientWords() string {
	cs := r.cellClients()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return strings.Join(names, ", ")
}

// Title is the curve's one-line name.
func (r Curve) Title() string {
	return fmt.Sprintf("%v against the %v", r.Deployment, r.Param)
}

// WriteTo renders the curve as text: its conditions, then a grid per
// number of the table's cell for its deployment (over, peak, and the
// honest client's share where the table prints it), the promise
// violations, and the model beside what it predicts. One row per value,
// one column per algorithm; the bytes depend on the curve alone.
func (r Curve) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	o := r.Options
	l := o.Limit
	fmt.Fprintf(&b, "overshoot sweep: %s\n\n", r.Title())
	if r.Note != "" {
		fmt.Fprintf(&b, "%s\n\n", r.Note)
	}
	fmt.Fprintf(&b, "%s.\n", deploymentWords(r.Deployment, o, r.Param))
	fmt.Fprintf(&b, "Each client on its own key with a limit of %v, L per W with burst B; %s per run, seeds %s,\n", l, algos.FormatMicros(o.Duration), seedList(o.Seeds))
	if r.NoIdeal {
		fmt.Fprintf(&b, "each leg to or from the store ±%d%%; the same requests at every point, and no ideal run to measure the over\n", o.Jitter)
		fmt.Fprintf(&b, "against. Every cell is the table's: the worst seed and the worst of the clients %s.\n", r.clientWords())
	} else {
		fmt.Fprintf(&b, "each leg to or from the store ±%d%%; the same requests at every point and in the ideal run (one node, true\n", o.Jitter)
		fmt.Fprintf(&b, "clock, no latency) each point is measured against. Every cell is the table's: the worst seed and the worst of\n")
		fmt.Fprintf(&b, "the clients %s.\n", r.clientWords())
	}
	for _, m := range metrics(r.Deployment) {
		if m.head == overMetric.head && r.NoIdeal {
			continue // not measured
		}
		fmt.Fprintf(&b, "\n%s\n\n", metricWords[m.head])
		r.writeGrid(&b, func(a string, k int) string {
			c, _ := r.Cell(a, k)
			if c.NotApplicable != "" {
				return "n/a"
			}
			return m.print(c)
		})
	}
	runs := len(o.Seeds) * len(r.cellClients())
	fmt.Fprintf(&b, "\nviolations: runs (seed × client, %d per cell) whose admits broke the algorithm's own promise.\n\n", runs)
	r.writeGrid(&b, func(a string, k int) string {
		c, _ := r.Cell(a, k)
		return fmt.Sprint(c.Violations)
	})
	if m := r.Model; m != nil {
		fmt.Fprintf(&b, "\n%s.\n\n", m.Name)
		r.writeGrid(&b, func(a string, k int) string {
			s := m.format(m.Measure(r, a, k))
			if p, ok := m.Predict(r, a, k); ok {
				s += " (" + m.format(p) + ")"
			}
			return s
		})
	}
	for _, a := range r.Algorithms {
		for k := range r.Values {
			c, _ := r.Cell(a, k)
			if c.NotApplicable != "" {
				fmt.Fprintf(&b, "%s at %s: n/a, %s\n", a, r.Param.label(r.Values[k], o), c.NotApplicable)
			}
			if c.Errors > 0 {
				fmt.Fprintf(&b, "%s at %s: %d requests answered with an error, neither admitted nor denied; the first: %v\n",
					a, r.Param.label(r.Values[k], o), c.Errors, c.FirstError)
			}
		}
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

var metricWords = map[string]string{
	"over":   "over: admitted beyond the same algorithm's ideal run on the same requests, in % of the ideal's admits (attack clients).",
	"peak":   "peak: most admitted in any W (by true decision time), as a multiple of the limit.",
	"honest": "honest: share of the honest client's requests turned away.",
}

// writeGrid writes one grid: a row per value, a column per algorithm.
func (r Curve) writeGrid(b *bytes.Buffer, cell func(algo string, k int) string) {
	heads := append([]string{r.Param.head()}, r.Algorithms...)
	rows := make([][]string, len(r.Values))
	for k, v := range r.Values {
		row := []string{r.Param.label(v, r.Options)}
		for _, a := range r.Algorithms {
			row = append(row, cell(a, k))
		}
		rows[k] = row
	}
	renderGrid(b, nil, heads, rows)
}

// WriteSVG draws the curve as a line chart against the parameter: the
// over (%), the peak (× the limit) or the model's measurement, one line per
// algorithm; with a model, its distinct predictions as dashed grey lines.
// The bytes depend on the curve alone.
func (r Curve) WriteSVG(w io.Writer) (int64, error) {
	if len(r.Values) == 0 || len(r.Points) != len(r.Values) {
		return 0, errors.New("scenarios: a curve with no points (RunCurve makes one that has)")
	}
	o := r.Options
	win := algos.FormatMicros(o.Limit.Window)
	c := chart{
		sub: []string{
			deploymentWords(r.Deployment, o, r.Param),
			fmt.Sprintf("%v per client; %s per run, seeds %s; the worst of the clients %s", o.Limit, algos.FormatMicros(o.Duration), seedList(o.Seeds), r.clientWords()),
		},
		xLabel: r.Param.axisName(),
		notes:  []string{"Lines that coincide are", "drawn solid and dashed."},
	}
	for _, v := range r.Values {
		c.xs = append(c.xs, r.Param.axis(v))
	}
	value := func(a string, k int) float64 { cell, _ := r.Cell(a, k); return cell.Over }
	switch {
	case r.Plot == PlotPeak:
		c.title = fmt.Sprintf("Most admitted in any %s, as a multiple of the limit, against the %v", win, r.Param)
		c.yLabel = fmt.Sprintf("most admitted in any %s (× limit)", win)
		c.unit, c.ref = "×", svgchart.Ref{Y: 1, Label: fmt.Sprintf("limit: %d per %s", o.Limit.Rate, win), Legend: "the limit (1×)"}
		value = func(a string, k int) float64 { cell, _ := r.Cell(a, k); return cell.PeakX }
	case r.Plot == PlotModel && r.Model != nil:
		m := r.Model
		c.title = fmt.Sprintf("%s: the model's number against the %v", r.Deployment, r.Param)
		c.yLabel = strings.SplitN(m.Name, ",", 2)[0]
		c.unit = ""
		if m.Unit == "%" {
			c.unit = "%"
		}
		c.ref = svgchart.Ref{Label: "the ideal run", Legend: "the ideal run (0)"}
		value = func(a string, k int) float64 { return m.Measure(r, a, k) }
	default:
		c.title = fmt.Sprintf("Admitted beyond the ideal run, against the %v", r.Param)
		c.yLabel = "over the ideal (% of its admits)"
		c.unit, c.ref = "%", svgchart.Ref{Label: "the ideal run", Legend: "the ideal run (0%)"}
	}
	for a, name := range r.Algorithms {
		ys := make([]float64, len(r.Values))
		for k := range r.Values {
			ys[k] = value(name, k)
		}
		c.series = append(c.series, chartSeries{name: name, ys: ys, style: svgchart.MarkedStyle(a)})
	}
	if m := r.Model; m != nil && r.Plot == PlotModel {
		var drawn [][]float64
		for _, name := range m.algorithms(r) {
			ys := make([]float64, len(r.Values))
			for k := range r.Values {
				ys[k], _ = m.Predict(r, name, k)
			}
			if slices.ContainsFunc(drawn, func(d []float64) bool { return slices.Equal(d, ys) }) {
				continue
			}
			drawn = append(drawn, ys)
			c.series = append(c.series, chartSeries{name: "model, " + name, ys: ys,
				style: svgchart.Style{Color: "#888888", Dash: "2 3", Marker: svgchart.Circle, Hollow: true}})
		}
		c.notes = append(c.notes, "Grey dotted: the model,", "named by the first", "algorithm it predicts.")
	}
	return c.write(w)
}
