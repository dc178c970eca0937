package scenarios

import (
	"fmt"
	"io"
	"strconv"

	"github.com/overshoot-go/overshoot/internal/encode"
)

// CurveSchema is the schema of a curve as JSON: a Curve (one deployment
// against one condition) and the skew sweep (SkewSweep) alike.
const CurveSchema = "overshoot.curve/v1"

// curveJSON is a curve: the conditions (the varied one, param, at its base
// value, which each point replaces), the values param took (in µs, or
// nodes for "nodes"), the clients its cells summarize, and a point per
// value.
type curveJSON struct {
	Schema     string        `json:"schema"`
	Conditions ConditionsDoc `json:"conditions"`
	curveOfJSON
	Model  *curveModelJSON  `json:"model"`
	Points []curvePointJSON `json:"points"`
}

// curveModelJSON names the number a curve's model predicts.
type curveModelJSON struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// curvePointJSON is every algorithm at one value of the param: its cell in
// the curve's deployment, and the model's number beside the measured one.
type curvePointJSON struct {
	Value int64      `json:"value"`
	Cells []cellJSON `json:"cells"`
	// Models is one per algorithm, in cell order, when the curve has a
	// model; Predicted is null where the model says nothing.
	Models []modelPointJSON `json:"models,omitempty"`
}

type modelPointJSON struct {
	Algorithm string   `json:"algorithm"`
	Measured  *float64 `json:"measured"`
	Predicted *float64 `json:"predicted"`
}

// paramKeys are the params' names in JSON, with their unit.
var paramKeys = [...]string{
	ParamRestartEvery: "restart_every_us",
	ParamNodes:        "nodes",
	ParamWipePhase:    "wipe_phase_us",
	ParamRTT:          "rtt_us",
	ParamSkew:         "skew_us",
}

// WriteJSON writes the curve as one JSON document of schema CurveSchema:
// at every value of its param, each algorithm's cell in its deployment
// over its clients (the numbers the text prints, unrounded), and the
// model's measured and predicted numbers when it has a model.
func (r Curve) WriteJSON(w io.Writer) error {
	doc, err := r.doc()
	if err != nil {
		return err
	}
	return encode.JSON(w, doc)
}

// WriteCSV writes the cells of WriteJSON's points as CSV: the table's
// columns (Matrix.WriteCSV) after two of the point's, param and value, a
// row per point and algorithm. The model's numbers are in the JSON only.
func (r Curve) WriteCSV(w io.Writer) error {
	doc, err := r.doc()
	if err != nil {
		return err
	}
	return doc.writeCSV(w)
}

func (d curveJSON) writeCSV(w io.Writer) error {
	rows := make([]cellRow, len(d.Points))
	for k, p := range d.Points {
		rows[k] = cellRow{lead: []string{d.Param, strconv.FormatInt(p.Value, 10)}, cells: p.Cells}
	}
	return writeCellsCSV(w, []string{"param", "value"}, rows)
}

// doc is the curve as its JSON document.
func (r Curve) doc() (curveJSON, error) {
	if r.Param < ParamRestartEvery || r.Param > ParamSkew {
		return curveJSON{}, fmt.Errorf("scenarios: a curve of %v", r.Param)
	}
	doc := curveJSON{Schema: CurveSchema, Conditions: conditions(r.Options), curveOfJSON: *curveOf(r.CurveOf), Points: []curvePointJSON{}}
	if r.Model != nil {
		doc.Model = &curveModelJSON{Name: r.Model.Name, Unit: r.Model.Unit}
	}
	for k, v := range r.Values {
		p := curvePointJSON{Value: v, Cells: []cellJSON{}}
		col := Column{Name: r.Deployment.String(), Deployment: r.Deployment}
		for _, name := range r.Algorithms {
			c, ok := r.Cell(name, k)
			if !ok {
				return curveJSON{}, fmt.Errorf("scenarios: curve has no cell of %s at %d", name, v)
			}
			p.Cells = append(p.Cells, cellOf(name, col, c, ""))
			if r.Model != nil {
				m := modelPointJSON{Algorithm: name}
				if c.NotApplicable == "" {
					m.Measured = measured(r.Model.Measure(r, name, k))
					if pred, ok := r.Model.Predict(r, name, k); ok {
						m.Predicted = measured(pred)
					}
				}
				p.Models = append(p.Models, m)
			}
		}
		doc.Points = append(doc.Points, p)
	}
	return doc, nil
}
