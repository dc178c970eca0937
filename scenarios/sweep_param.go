package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// Param is one condition of a deployment that a Curve varies, the others
// staying at the Options'.
type Param uint8

// The parameters a Curve can sweep.
const (
	// ParamRestartEvery is Options.RestartEvery: the mean µs between one
	// local-split node's restarts, 0 for never.
	ParamRestartEvery Param = iota + 1
	// ParamNodes is Options.Nodes.
	ParamNodes
	// ParamWipePhase is where in its window the store is wiped: the µs, in
	// [0, W), after the start of the window that holds Options.WipeAt. The
	// wipe is at WipeAt − WipeAt mod W + the value.
	ParamWipePhase
	// ParamRTT is Options.RTT, the round trip to the store in µs.
	ParamRTT
	// ParamSkew is Options.Skew, the distance between the extreme node
	// clocks in µs.
	ParamSkew
)

var paramNames = [...]string{
	ParamRestartEvery: "restart interval",
	ParamNodes:        "node count",
	ParamWipePhase:    "wipe's position in the window",
	ParamRTT:          "round trip",
	ParamSkew:         "skew",
}

// String names the parameter in words.
func (p Param) String() string {
	if p >= ParamRestartEvery && p <= ParamSkew {
		return paramNames[p]
	}
	return fmt.Sprintf("Param(%d)", int(p))
}

// changes reports whether p changes deployment d's runs (as Options.Columns
// deploys d): a sweep of anything else would be flat by construction.
func (p Param) changes(d model.Deployment) bool {
	switch p {
	case ParamRestartEvery:
		return d == model.LocalSplit
	case ParamNodes:
		return d != model.Ideal
	case ParamWipePhase:
		return d == model.StoreWiped
	case ParamRTT:
		return d == model.NodeClock || d == model.StoreClock || d == model.StoreWiped || d == model.GetSet
	case ParamSkew:
		return d == model.NodeClock || d == model.LocalSplit
	}
	return false
}

// set returns o with p at v, or why v is not a value of p under o.
func (p Param) set(o Options, v int64) (Options, error) {
	switch p {
	case ParamRestartEvery:
		if v < 0 {
			return o, fmt.Errorf("scenarios: negative restart interval %d µs", v)
		}
		o.RestartEvery = v
	case ParamNodes:
		if v < 1 || v > 1<<16 {
			return o, fmt.Errorf("scenarios: %d nodes", v)
		}
		o.Nodes = int(v)
	case ParamWipePhase:
		w := o.Limit.Window
		if v < 0 || v >= w {
			return o, fmt.Errorf("scenarios: a wipe %d µs into a window of %s", v, algos.FormatMicros(w))
		}
		o.WipeAt = o.WipeAt - o.WipeAt%w + v
	case ParamRTT:
		if v < 0 {
			return o, fmt.Errorf("scenarios: negative round trip %d µs", v)
		}
		o.RTT = v
	case ParamSkew:
		if v < 0 {
			return o, fmt.Errorf("scenarios: negative skew %d µs", v)
		}
		o.Skew = v
	default:
		return o, fmt.Errorf("scenarios: %v is not a parameter a curve sweeps", p)
	}
	return o, o.Validate()
}

// CurveOf says what a Curve sweeps: one deployment, one of its parameters,
// the values it takes, and the clients each point is summarized over.
type CurveOf struct {
	// Deployment is the deployment measured at every point, as
	// Options.Columns deploys it; it is compared with the ideal run on the
	// same requests (so it cannot be model.Ideal).
	Deployment model.Deployment
	// NoIdeal, when set, runs the deployment alone, without the ideal run
	// that the over is measured against: the cells' over is not measured
	// (NaN), so the curve can have no Model and its Plot must be PlotPeak.
	// It saves one run per limiter and seed (per point for ParamWipePhase):
	// the skew sweep (SkewCurve) reads its peaks alone.
	NoIdeal bool
	// Param is the condition varied, Values its values, ascending (µs, or
	// nodes for ParamNodes).
	Param  Param
	Values []int64
	// Clients are the clients each point's cells summarize; none means every
	// client of the Options (as the table's cells do).
	Clients []traffic.ClientKind
	// Model, when set, is a simple model of one number of the curve: the
	// text prints it beside the measurement, the chart draws it, and tests
	// hold the measurement to it.
	Model *CurveModel
	// Plot is what the chart draws against the parameter.
	Plot Plot
	// Note, when not empty, is printed under the text's title: why these
	// conditions (fewer seeds than the table's, say).
	Note string
}

// Plot is the number a Curve's chart draws for each algorithm and point.
type Plot uint8

const (
	// PlotOver is the cell's over: % admitted beyond the ideal run.
	PlotOver Plot = iota
	// PlotPeak is the cell's peak, × the limit.
	PlotPeak
	// PlotModel is the model's measurement, with the model beside it.
	PlotModel
)

// Curve is one deployment against one parameter: at each value, every
// limiter through that deployment and through the ideal reference (but
// with NoIdeal), on every seed. Each point is a Matrix of those columns,
// so its cells (peak, over, honest turned away, violations) are the
// table's, computed by Matrix.Cell. It renders itself as text with
// WriteTo and as a chart with WriteSVG; SkewSweep renders the skew sweep's
// curve in that sweep's own format.
type Curve struct {
	CurveOf
	// Options are the conditions at every point, but for the parameter.
	Options Options
	// Algorithms are the limiters' names, in the order they were given.
	Algorithms []string
	// Points[k] is the matrix at Values[k], under PointOptions(k).
	Points []Matrix
}

// RunCurve runs every limiter of specs through c.Deployment and, unless
// c.NoIdeal, the ideal reference at every value of c.Param, on every seed
// of o, o's other conditions unchanged. The ideal runs do not depend on
// the parameter (but for where a wipe is counted from), and are run once.
// A deployment that cannot hold a limiter (model.Applies) is not run, and
// its cells say why. Like RunMatrix's, the result depends on the arguments
// alone, not on the number of workers.
func RunCurve(specs []limiter.Spec, o Options, c CurveOf) (Curve, error) {
	if err := o.Validate(); err != nil {
		return Curve{}, err
	}
	names, err := checkLimiters(specs)
	if err != nil {
		return Curve{}, err
	}
	switch {
	case c.Deployment == model.Ideal || !slices.Contains(model.Deployments(), c.Deployment):
		return Curve{}, fmt.Errorf("scenarios: a curve needs a deployment to compare with the ideal, not %v", c.Deployment)
	case !c.Param.changes(c.Deployment):
		return Curve{}, fmt.Errorf("scenarios: the %v does not change the %v deployment", c.Param, c.Deployment)
	case len(c.Values) == 0:
		return Curve{}, errors.New("scenarios: no values to sweep")
	case !slices.IsSorted(c.Values) || len(slices.Compact(slices.Clone(c.Values))) != len(c.Values):
		return Curve{}, errors.New("scenarios: a curve's values must be ascending, each once")
	case c.NoIdeal && c.Model != nil:
		return Curve{}, errors.New("scenarios: a curve's model is measured against the ideal run, which NoIdeal leaves out")
	case c.NoIdeal && c.Plot != PlotPeak:
		return Curve{}, errors.New("scenarios: a curve with NoIdeal has no over to plot: its Plot must be PlotPeak")
	}
	for _, cl := range c.Clients {
		if !slices.Contains(o.Clients(), cl) {
			return Curve{}, fmt.Errorf("scenarios: the %v client does not run under these options", cl)
		}
	}
	r := Curve{CurveOf: c, Options: o, Algorithms: names, Points: make([]Matrix, len(c.Values))}
	r.Values, r.Clients = slices.Clone(c.Values), slices.Clone(c.Clients)
	// Every point's runs in one batch through the pipeline, so that the
	// workers are not left waiting for a point's last run. Point by point,
	// each column's limiters one after another (the ideal's at the first
	// point only, unless the parameter moves where a wipe is counted from):
	// the pipeline plays a seed's jobs in turn, and the model draws a
	// plan once for the jobs of one shape that follow each other.
	opts := make([]Options, len(c.Values))
	var jobs []job
	var at [][][]int // at[k][col][a]: the job of algorithm a in column col of point k
	idealOnce := c.Param != ParamWipePhase
	for k, v := range c.Values {
		if opts[k], err = c.Param.set(o, v); err != nil {
			return Curve{}, err
		}
		cols := c.columns(opts[k])
		at = append(at, make([][]int, len(cols)))
		for col, column := range cols {
			if column.Deployment == model.Ideal && idealOnce && k > 0 {
				at[k][col] = at[0][col]
				continue
			}
			for a := range specs {
				label := names[a] + ", " + column.Name + " at " + c.Param.String() + " " + c.Param.label(v, o)
				at[k][col] = append(at[k][col], len(jobs))
				jobs = append(jobs, job{spec: specs[a], col: column, label: label, opts: &opts[k]})
			}
		}
	}
	runs, err := o.runJobs(jobs)
	if err != nil {
		return Curve{}, err
	}
	// Each point as a matrix of its columns, the ideal (unless NoIdeal)
	// and the deployment.
	ns := len(o.Seeds)
	for k := range c.Values {
		cols := c.columns(opts[k])
		m := Matrix{Options: opts[k], Algorithms: names, Columns: cols, SeedRuns: make([]SeedRun, 0, len(cols)*len(specs)*ns)}
		for a := range specs {
			for col := range cols {
				j := at[k][col][a]
				for s, run := range runs[j*ns : (j+1)*ns] {
					m.SeedRuns = append(m.SeedRuns, SeedRun{Algorithm: names[a], Column: col, Seed: o.Seeds[s],
						Clients: run.clients, FirstError: run.firstError, NotApplicable: run.notApplicable})
				}
			}
		}
		r.Points[k] = m
	}
	return r, nil
}

// columns are the columns of each point's matrix under o: the ideal
// (unless NoIdeal), then the deployment.
func (c CurveOf) columns(o Options) []Column {
	if c.NoIdeal {
		return []Column{o.column(c.Deployment)}
	}
	return []Column{o.column(model.Ideal), o.column(c.Deployment)}
}

// column is deployment d's column of the matrix under o.
func (o Options) column(d model.Deployment) Column {
	for _, c := range o.Columns() {
		if c.Deployment == d {
			return c
		}
	}
	return Column{}
}

// PointOptions are the options of point k: Options with the parameter at
// Values[k].
func (r Curve) PointOptions(k int) Options {
	o, _ := r.Param.set(r.Options, r.Values[k])
	return o
}

// Cell is one algorithm at point k, summarized as the table's cell over
// the given clients (the curve's Clients if none are given).
func (r Curve) Cell(algo string, k int, clients ...traffic.ClientKind) (Cell, bool) {
	if k < 0 || k >= len(r.Points) {
		return Cell{}, false
	}
	if len(clients) == 0 {
		clients = r.Clients
	}
	return r.Points[k].Cell(algo, r.Deployment, clients...)
}

// At is Cell at the point whose value is v.
func (r Curve) At(algo string, v int64, clients ...traffic.ClientKind) (Cell, bool) {
	return r.Cell(algo, slices.Index(r.Values, v), clients...)
}

// SeedRuns are the runs of one algorithm at point k, the deployment's and
// the ideal's (nil with NoIdeal), one per seed in the order of
// Options.Seeds.
func (r Curve) SeedRuns(algo string, k int) (runs, ideal []SeedRun) {
	if k < 0 || k >= len(r.Points) {
		return nil, nil
	}
	m := r.Points[k]
	return m.CellSeedRuns(algo, r.Deployment), m.CellSeedRuns(algo, model.Ideal)
}

// SeedCells are one algorithm at point k as one cell per seed, each the
// table's cell of that seed alone, over the given clients (the curve's if
// none are given).
func (r Curve) SeedCells(algo string, k int, clients ...traffic.ClientKind) []Cell {
	runs, ideal := r.SeedRuns(algo, k)
	if runs == nil {
		return nil
	}
	if len(clients) == 0 {
		clients = r.Clients
	}
	out := make([]Cell, len(runs))
	for s := range runs {
		m := r.Points[k]
		m.Options.Seeds = []uint64{runs[s].Seed}
		m.Algorithms = []string{algo}
		m.SeedRuns = []SeedRun{runs[s]}
		if ideal != nil {
			m.SeedRuns = []SeedRun{ideal[s], runs[s]}
		}
		out[s], _ = m.Cell(algo, r.Deployment, clients...)
	}
	return out
}

// label prints value v of p as a row of the text prints it.
func (p Param) label(v int64, o Options) string {
	switch p {
	case ParamRestartEvery:
		if v == 0 {
			return "never"
		}
		return algos.FormatMicros(v)
	case ParamNodes:
		return fmt.Sprint(v)
	case ParamWipePhase:
		return fmtSeconds(o.WipeAt-o.WipeAt%o.Limit.Window+v) + " (+" + fmtMillis(v) + ")"
	}
	return fmtMillis(v)
}

// axis is where value v of p sits on the chart's x axis, and the axis's
// name: restarts per node per minute (so that never is 0 and the extra
// bursts grow along it), nodes, or ms.
func (p Param) axis(v int64) float64 {
	switch p {
	case ParamRestartEvery:
		if v == 0 {
			return 0
		}
		return float64(60*algos.Second) / float64(v)
	case ParamNodes:
		return float64(v)
	}
	return float64(v) / 1000
}

func (p Param) axisName() string {
	switch p {
	case ParamRestartEvery:
		return "restarts per node per minute (mean); 0 is never"
	case ParamNodes:
		return "nodes"
	case ParamWipePhase:
		return "the wipe's position in its window (ms)"
	case ParamRTT:
		return "round trip to the store (ms)"
	}
	return "skew between the two extreme node clocks (ms)"
}
