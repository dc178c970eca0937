package scenarios_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
	"github.com/overshoot-go/overshoot/traffic"
)

// curveDoc reads back what the curve schema writes, for these tests.
type curveDoc struct {
	Schema     string  `json:"schema"`
	Deployment string  `json:"deployment"`
	Param      string  `json:"param"`
	Values     []int64 `json:"values"`
	Model      *struct {
		Name string `json:"name"`
	} `json:"model"`
	Points []struct {
		Value int64 `json:"value"`
		Cells []struct {
			Algorithm  string   `json:"algorithm"`
			Peak       int      `json:"peak"`
			PeakX      float64  `json:"peak_x"`
			OverPct    *float64 `json:"over_pct"`
			Violations int      `json:"violations"`
			Runs       int      `json:"runs"`
		} `json:"cells"`
		Models []struct {
			Algorithm string   `json:"algorithm"`
			Measured  *float64 `json:"measured"`
			Predicted *float64 `json:"predicted"`
		} `json:"models"`
	} `json:"points"`
}

func readCurve(t *testing.T, write func(io.Writer) error) curveDoc {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	var d curveDoc
	dec := json.NewDecoder(&b)
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Schema != scenarios.CurveSchema {
		t.Errorf("schema %q, want %q", d.Schema, scenarios.CurveSchema)
	}
	return d
}

// A curve's JSON holds, at every value, each algorithm's cell as the curve
// computes it and its model's numbers beside.
func TestCurveJSONIsTheCurvesCells(t *testing.T) {
	o := small()
	specs := limiter.FromAlgorithms(algos.TokenBucket, algos.FixedWindow)
	c, err := scenarios.RunCurve(specs, o, scenarios.CurveOf{Deployment: model.StoreWiped, Param: scenarios.ParamWipePhase,
		Values: []int64{0, algos.Second / 2}, Clients: []traffic.ClientKind{traffic.Flood}, Model: scenarios.WipeModel()})
	if err != nil {
		t.Fatal(err)
	}
	d := readCurve(t, c.WriteJSON)
	if d.Deployment != "store-wiped" || d.Param != "wipe_phase_us" || len(d.Points) != 2 || d.Model == nil {
		t.Fatalf("curve of %q against %q, %d points, model %v", d.Deployment, d.Param, len(d.Points), d.Model)
	}
	for k, p := range d.Points {
		if p.Value != c.Values[k] || len(p.Cells) != 2 || len(p.Models) != 2 {
			t.Fatalf("point %d: value %d, %d cells, %d models", k, p.Value, len(p.Cells), len(p.Models))
		}
		for i, got := range p.Cells {
			want, _ := c.Cell(got.Algorithm, k)
			if got.Algorithm != c.Algorithms[i] || got.Peak != want.Peak || got.PeakX != want.PeakX || got.OverPct == nil ||
				*got.OverPct != want.Over || got.Violations != want.Violations || got.Runs != want.Runs {
				t.Errorf("point %d: cell %+v, the curve's %+v", k, got, want)
			}
			m := p.Models[i]
			if m.Measured == nil || *m.Measured != c.Model.Measure(c, got.Algorithm, k) {
				t.Errorf("point %d, %s: measured %v, the model's %v", k, got.Algorithm, m.Measured, c.Model.Measure(c, got.Algorithm, k))
			}
			pred, ok := c.Model.Predict(c, got.Algorithm, k)
			if ok != (m.Predicted != nil) || ok && *m.Predicted != pred && !math.IsNaN(pred) {
				t.Errorf("point %d, %s: predicted %v, the model's %v (%v)", k, got.Algorithm, m.Predicted, pred, ok)
			}
		}
	}
}

// The skew sweep's JSON is the same schema, its param the skew; the over a
// sweep does not measure is null, never 0.
func TestSweepJSONIsTheSweepsPoints(t *testing.T) {
	o := small()
	skews := []int64{0, 50_000}
	s, err := scenarios.RunCurve(limiter.FromAlgorithms(algos.TokenBucket, algos.SlidingLog), o, scenarios.SkewCurve(skews))
	if err != nil {
		t.Fatal(err)
	}
	d := readCurve(t, scenarios.SkewSweep{Curve: s}.WriteJSON)
	if d.Deployment != "node-clock" || d.Param != "skew_us" || d.Model != nil || len(d.Points) != len(skews) {
		t.Fatalf("sweep of %q against %q, model %v, %d points", d.Deployment, d.Param, d.Model, len(d.Points))
	}
	for k, p := range d.Points {
		for _, got := range p.Cells {
			want, _ := s.At(got.Algorithm, skews[k])
			if got.Peak != want.Peak || got.PeakX != want.PeakX || got.Violations != want.Violations ||
				got.Runs != len(o.Seeds)*len(o.Clients()) || got.OverPct != nil {
				t.Errorf("skew %d: cell %+v, the sweep's %+v", skews[k], got, want)
			}
		}
	}
	// The token bucket breaks its promise at 50 ms and the log does not:
	// the JSON says so as the table does.
	if v := d.Points[1].Cells[0].Violations; v == 0 {
		t.Error("the token bucket kept its promise at a 50 ms skew, in the JSON")
	}
}

// A curve's CSV is its JSON's cells, a row per point and algorithm led by
// the param and its value.
func TestCurveCSVIsItsCells(t *testing.T) {
	o := small()
	s, err := scenarios.RunCurve(limiter.FromAlgorithms(algos.TokenBucket, algos.SlidingLog), o, scenarios.SkewCurve([]int64{0, 50_000}))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (scenarios.SkewSweep{Curve: s}).WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0][0] != "param" || rows[0][2] != "algorithm" {
		t.Fatalf("CSV %v", rows)
	}
	for _, row := range rows[1:] {
		v, _ := strconv.ParseInt(row[1], 10, 64)
		p, _ := s.At(row[2], v)
		if row[0] != "skew_us" || row[6] != strconv.Itoa(p.Peak) {
			t.Errorf("row %v, the sweep's peak %d", row, p.Peak)
		}
	}
}

// A curve without the ideal run plays the same deployment runs as the
// whole curve and reports what they measure: the peaks, violations and
// honest share are the whole curve's, and the over, which needs the ideal
// run, is NaN in its cells, null in its JSON and absent from its text.
func TestCurveWithoutTheIdealIsTheSameRuns(t *testing.T) {
	o := small()
	specs := limiter.FromAlgorithms(algos.TokenBucket, algos.SlidingCounter)
	of := scenarios.CurveOf{Deployment: model.LocalSplit, Param: scenarios.ParamNodes, Values: []int64{2, 4}, Plot: scenarios.PlotPeak}
	whole, err := scenarios.RunCurve(specs, o, of)
	if err != nil {
		t.Fatal(err)
	}
	of.NoIdeal = true
	alone, err := scenarios.RunCurve(specs, o, of)
	if err != nil {
		t.Fatal(err)
	}
	for k := range of.Values {
		for _, a := range alone.Algorithms {
			w, _ := whole.Cell(a, k)
			c, ok := alone.Cell(a, k)
			if !ok || c.Peak != w.Peak || c.PeakSeed != w.PeakSeed || c.PeakClient != w.PeakClient || c.Violations != w.Violations ||
				c.Runs != w.Runs || c.HonestRejected != w.HonestRejected || !math.IsNaN(c.Over) || math.IsNaN(w.Over) {
				t.Errorf("%s at point %d: without the ideal %+v (%v), with it %+v", a, k, c, ok, w)
			}
			if runs, ideal := alone.SeedRuns(a, k); len(runs) != len(o.Seeds) || ideal != nil {
				t.Errorf("%s at point %d: %d runs and %d ideal runs, want %d and none", a, k, len(runs), len(ideal), len(o.Seeds))
			}
			if cells := alone.SeedCells(a, k); len(cells) != len(o.Seeds) || !math.IsNaN(cells[0].Over) {
				t.Errorf("%s at point %d: seed cells %+v", a, k, cells)
			}
		}
	}
	var text bytes.Buffer
	if _, err := alone.WriteTo(&text); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); strings.Contains(s, "\nover:") || !strings.Contains(s, "\npeak:") || !strings.Contains(s, "\nhonest:") || strings.Contains(s, "NaN") {
		t.Errorf("the text of a curve without the ideal:\n%s", s)
	}
	d := readCurve(t, alone.WriteJSON)
	for _, p := range d.Points {
		for _, c := range p.Cells {
			if c.OverPct != nil || c.Peak == 0 {
				t.Errorf("value %d: cell %+v, want a peak and no over", p.Value, c)
			}
		}
	}
	if _, err := alone.WriteSVG(io.Discard); err != nil {
		t.Error(err)
	}
}
