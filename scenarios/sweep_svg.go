package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"math"

	"github.com/overshoot-go/overshoot/algos"
)

// seriesStyle is how one algorithm is drawn. Two algorithms that draw the
// same line (the leaky bucket and GCRA do) stay distinguishable: one is
// solid with filled markers, the other dashed with hollow ones.
type seriesStyle struct {
	color  string
	dash   string // stroke-dasharray, "" for solid
	marker string // circle, square, triangle, diamond
	hollow bool
}

var seriesStyles = []seriesStyle{
	{color: "#d55e00", marker: "circle"},
	{color: "#0072b2", marker: "square"},
	{color: "#009e73", dash: "7 4", marker: "circle", hollow: true},
	{color: "#e69f00", marker: "triangle"},
	{color: "#000000", marker: "diamond"},
	{color: "#cc79a7", dash: "3 3", marker: "square", hollow: true},
	{color: "#56b4e9", marker: "triangle", hollow: true},
	{color: "#666666", dash: "7 4", marker: "diamond", hollow: true},
}

// Chart geometry, in SVG user units (px).
const (
	svgWidth, svgHeight = 820, 520
	plotLeft, plotTop   = 78.0, 92.0
	plotRight           = 590.0
	plotBottom          = 450.0
	legendX             = 612.0
)

// WriteSVG draws the sweep as a line chart: peak (× the limit) against the
// skew in ms, one line per algorithm, the limit as a dashed line at 1×. It
// is written by hand with fmt; the bytes depend on the sweep alone.
func (r Sweep) WriteSVG(w io.Writer) (int64, error) {
	if len(r.Skews) == 0 || len(r.Points) != len(r.Algorithms) {
		return 0, errors.New("scenarios: a sweep with no skews, or not one line of points per algorithm, has nothing to draw (RunSweep makes one that has)")
	}
	o := r.Options
	win := algos.FormatMicros(o.Limit.Window)
	c := chart{
		title: fmt.Sprintf("Most admitted in any %s, as a multiple of the limit, against clock skew", win),
		sub: [2]string{
			fmt.Sprintf("node-clock deployment: %d nodes, each telling the store its own time; the store %s away (±%d%% a leg)", o.Nodes, algos.FormatMicros(o.RTT), o.Jitter),
			fmt.Sprintf("%v per client; worst of seeds %s and of the %d clients, %s per run", o.Limit, seedList(o.Seeds), len(o.Clients()), algos.FormatMicros(o.Duration)),
		},
		xLabel:    "skew between the two extreme node clocks (ms)",
		yLabel:    fmt.Sprintf("most admitted in any %s (× limit)", win),
		unit:      "×",
		ref:       1,
		refLabel:  fmt.Sprintf("limit: %d per %s", o.Limit.Rate, win),
		refLegend: "the limit (1×)",
		notes:     []string{"Lines that coincide are", "drawn solid and dashed.", "Peaks are counted by", "true decision time."},
	}
	for _, skew := range r.Skews {
		c.xs = append(c.xs, float64(skew)/1000)
	}
	for a, name := range r.Algorithms {
		ys := make([]float64, len(r.Skews))
		for k := range r.Skews {
			ys[k] = r.Points[a][k].PeakX
		}
		c.series = append(c.series, chartSeries{name: name, ys: ys, style: seriesStyles[a%len(seriesStyles)]})
	}
	return c.write(w)
}

// chart is a line chart of some series against one x axis, as the sweeps
// draw it: a title, two lines of conditions, a grid with ticks, a dashed
// red reference line, one line with markers per series, and a legend.
type chart struct {
	title          string
	sub            [2]string
	xLabel, yLabel string
	// xs are the points' places on the x axis, ascending from 0 or more;
	// the axis runs from 0 to a round number at or above the last.
	xs     []float64
	series []chartSeries
	// unit follows each y tick. With "×" (a multiple of the limit) the y
	// axis runs from 0 to at least 2, in steps of 1 (0.5 up to 3); with
	// any other unit it runs in round steps from 0 (or below the lowest
	// point) to above the highest.
	unit string
	// ref is where the reference line is drawn, refLabel its label on the
	// chart, refLegend its entry in the legend.
	ref                 float64
	refLabel, refLegend string
	notes               []string
}

// chartSeries is one line of a chart: a value per x, and how it is drawn.
type chartSeries struct {
	name  string
	ys    []float64
	style seriesStyle
}

// write renders the chart; the bytes depend on the chart alone.
func (c chart) write(w io.Writer) (int64, error) {
	if len(c.xs) == 0 {
		return 0, errors.New("scenarios: a chart with no points")
	}
	var b bytes.Buffer
	xMax := niceCeil(c.xs[len(c.xs)-1])
	xStep := tickStep(xMax)
	yTop, yLow := math.Max(0, c.ref), math.Min(0, c.ref)
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
		yStep = tickStep(math.Max(yTop*1.04, 1) - yLow)
		yMax = math.Max(yStep, math.Ceil(yTop*1.04/yStep)*yStep)
		yMin = math.Floor(yLow/yStep) * yStep
	}
	x := func(v float64) float64 { return plotLeft + (plotRight-plotLeft)*v/xMax }
	y := func(v float64) float64 { return plotBottom - (plotBottom-plotTop)*(v-yMin)/(yMax-yMin) }

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%.1f" y="28" font-size="17" font-weight="bold" fill="#222222">%s</text>`+"\n", plotLeft, html.EscapeString(c.title))
	fmt.Fprintf(&b, `<text x="%.1f" y="52" font-size="13" fill="#444444">%s</text>`+"\n", plotLeft, html.EscapeString(c.sub[0]))
	fmt.Fprintf(&b, `<text x="%.1f" y="70" font-size="13" fill="#444444">%s</text>`+"\n", plotLeft, html.EscapeString(c.sub[1]))

	// Grid and ticks.
	b.WriteString(`<g font-size="12" fill="#333333">` + "\n")
	for v := yMin; v <= yMax+1e-9; v += yStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3" stroke-width="1"/>`+"\n", plotLeft, y(v), plotRight, y(v))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1"/>`+"\n", plotLeft-5, y(v), plotLeft, y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s%s</text>`+"\n", plotLeft-8, y(v)+4, trimFloat(v), c.unit)
	}
	for v := 0.0; v <= xMax+1e-9; v += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3" stroke-width="1"/>`+"\n", x(v), plotTop, x(v), plotBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1"/>`+"\n", x(v), plotBottom, x(v), plotBottom+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(v), plotBottom+19, trimFloat(v))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="#333333" stroke-width="1.2"/>`+"\n", plotLeft, plotTop, plotBottom, plotRight)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle" fill="#222222">%s</text>`+"\n",
		(plotLeft+plotRight)/2, plotBottom+44, html.EscapeString(c.xLabel))
	fmt.Fprintf(&b, `<text transform="translate(%.1f %.1f) rotate(-90)" font-size="13" text-anchor="middle" fill="#222222">%s</text>`+"\n",
		plotLeft-48, (plotTop+plotBottom)/2, html.EscapeString(c.yLabel))

	// The reference line.
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b00020" stroke-width="1.5" stroke-dasharray="5 4"/>`+"\n", plotLeft, y(c.ref), plotRight, y(c.ref))
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end" fill="#b00020">%s</text>`+"\n", plotRight-4, y(c.ref)-6, html.EscapeString(c.refLabel))

	// One line per series, drawn in order so later ones are on top.
	for _, s := range c.series {
		st := s.style
		var path bytes.Buffer
		for k, xv := range c.xs {
			cmd := "L"
			if k == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f %.1f", cmd, x(xv), y(s.ys[k]))
		}
		fmt.Fprintf(&b, `<g><title>%s</title>`+"\n", html.EscapeString(s.name))
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", path.String(), st.color, dashAttr(st.dash))
		for k, xv := range c.xs {
			marker(&b, st, x(xv), y(s.ys[k]), 3.6)
		}
		b.WriteString("</g>\n")
	}

	// Legend.
	ly := plotTop + 6
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" font-weight="bold" fill="#222222">algorithm</text>`+"\n", legendX, ly)
	for _, s := range c.series {
		st := s.style
		ly += 24
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", legendX, ly-4, legendX+34, ly-4, st.color, dashAttr(st.dash))
		marker(&b, st, legendX+17, ly-4, 3.6)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" fill="#222222">%s</text>`+"\n", legendX+44, ly, html.EscapeString(s.name))
	}
	ly += 24
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b00020" stroke-width="1.5" stroke-dasharray="5 4"/>`+"\n", legendX, ly-4, legendX+34, ly-4)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" fill="#222222">%s</text>`+"\n", legendX+44, ly, html.EscapeString(c.refLegend))
	ly += 30
	for _, line := range c.notes {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11.5" fill="#555555">%s</text>`+"\n", legendX, ly, html.EscapeString(line))
		ly += 16
	}
	b.WriteString("</svg>\n")
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, dash)
}

// marker draws one data point of style st centred on (cx, cy).
func marker(b *bytes.Buffer, st seriesStyle, cx, cy, r float64) {
	fill := st.color
	if st.hollow {
		fill = "#ffffff"
	}
	paint := fmt.Sprintf(`fill="%s" stroke="%s" stroke-width="1.5"`, fill, st.color)
	switch st.marker {
	case "square":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s/>`+"\n", cx-r, cy-r, 2*r, 2*r, paint)
	case "triangle":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`+"\n", cx, cy-r*1.2, cx+r*1.1, cy+r*0.8, cx-r*1.1, cy+r*0.8, paint)
	case "diamond":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`+"\n", cx, cy-r*1.25, cx+r*1.25, cy, cx, cy+r*1.25, cx-r*1.25, cy, paint)
	default:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f" %s/>`+"\n", cx, cy, r+0.4, paint)
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// tickStep is a 1, 2 or 5 step giving about ten ticks up to max.
func tickStep(max float64) float64 {
	step := niceCeil(max / 10)
	if max/step < 5 {
		step /= 2
	}
	return step
}

// trimFloat prints v without trailing zeros.
func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}
