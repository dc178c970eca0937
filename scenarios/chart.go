package scenarios

import (
	"cmp"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/internal/svgchart"
)

// chart is what a curve's chart (or the skew sweep's) shows: some series
// against one x axis, from 0; a reference line (the limit, the ideal run);
// one line with markers per series. write chooses the axes and hands it to
// svgchart.
type chart struct {
	title          string
	sub            []string
	xLabel, yLabel string
	// xs are the points' places on the x axis, 0 or more, in any order;
	// the axis runs from 0 to a round number at or above the largest.
	xs     []float64
	series []chartSeries
	// unit follows each y tick. With "×" (a multiple of the limit) the y
	// axis runs from 0 to at least 2, in steps of 1 (0.5 up to 3); with
	// any other unit it runs in round steps from 0 (or below the lowest
	// point) to above the highest.
	unit  string
	ref   svgchart.Ref
	notes []string
}

// chartSeries is one line of a chart: a value per x, and how it is drawn.
type chartSeries struct {
	name  string
	ys    []float64
	style svgchart.Style
}

// write renders the chart; the bytes depend on the chart alone.
func (c chart) write(w io.Writer) (int64, error) {
	if len(c.xs) == 0 {
		return 0, errors.New("scenarios: a chart with no points")
	}
	// The points in the order of their x, so that each line runs left to
	// right and the axis ends above the largest: the restart sweep's xs
	// (restarts per minute: 0 for never, then fewer as the interval grows)
	// do not ascend.
	order := make([]int, len(c.xs))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(c.xs[i], c.xs[j]) })
	xMax := svgchart.NiceCeil(c.xs[order[len(order)-1]])
	yTop, yLow := math.Max(0, c.ref.Y), math.Min(0, c.ref.Y)
	for _, s := range c.series {
		for _, v := range s.ys {
			yTop, yLow = math.Max(yTop, v), math.Min(yLow, v)
		}
	}
	yMin, yMax, yStep := 0.0, 0.0, 0.0
	if c.unit == "×" {
		yMax = math.Max(2, math.Ceil(yTop*1.04))
		yStep = 1.0
		if yMax <= 3 {
			yStep = 0.5
		}
	} else {
		yStep = svgchart.NiceStep(math.Max(yTop*1.04, 1) - yLow)
		yMax = math.Max(yStep, math.Ceil(yTop*1.04/yStep)*yStep)
		yMin = math.Floor(yLow/yStep) * yStep
	}
	ref := c.ref
	sc := svgchart.Chart{
		Title:  c.title,
		Sub:    c.sub,
		Height: 520,
		Top:    92, Bottom: 450,
		X:      svgchart.Axis{Label: c.xLabel, Max: xMax, Step: svgchart.NiceStep(xMax)},
		Y:      svgchart.Axis{Label: c.yLabel, Min: yMin, Max: yMax, Step: yStep, Unit: c.unit},
		Ref:    &ref,
		Legend: "algorithm",
		Notes:  c.notes,
	}
	for _, s := range c.series {
		cs := svgchart.Series{Name: s.name, Style: s.style}
		for _, k := range order {
			cs.Points = append(cs.Points, svgchart.Point{X: c.xs[k], Y: s.ys[k]})
		}
		sc.Series = append(sc.Series, cs)
	}
	return sc.WriteTo(w)
}
