package svgchart

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chart is one line chart: the plot on the left, the legend on the right.
// The zero values of the optional fields (Sub, Ref, Legend, Notes) leave
// their parts out.
type Chart struct {
	Title string
	// Sub are the lines under the title (the conditions of the run), 18 px
	// apart from y = 52. A line longer than the chart is wide (subRunes
	// characters) is wrapped at its spaces, and everything below the lines
	// (the plot, the legend, the height) moves down 18 px for each line the
	// wrapping adds, so that no condition is cut off at the right edge.
	Sub []string
	// Height is the least height of the chart in px; it grows to fit a
	// long legend. The width is always 820.
	Height int
	// Top and Bottom are the plot's top and bottom edges, in px from the
	// chart's top; its left and right edges are fixed (78 and 590).
	Top, Bottom float64
	X, Y        Axis
	// Ref, if set, is a dashed red reference line across the plot (a
	// limit, the ideal run), labelled and given an entry in the legend.
	Ref *Ref
	// Legend is the legend's heading ("limiter", "algorithm").
	Legend string
	// Series are drawn in order, so later ones are on top, and listed in
	// the legend in that order. A chart needs at least one.
	Series []Series
	// Notes are lines of small print under the legend.
	Notes []string
}

// Axis is one axis: its range, a tick at every multiple of Step within
// it, and the words.
type Axis struct {
	Label    string
	Min, Max float64
	Step     float64
	// Unit follows each tick's number ("%", "×").
	Unit string
	// Scale divides a value before it is printed as a tick's number (1e6
	// for µs shown in seconds); 0 means 1. A tick's number has as many
	// decimals as Step/Scale needs, and no trailing zeros.
	Scale float64
}

// Ref is a horizontal reference line at Y, Label written at its right
// end on the plot, Legend its entry in the legend.
type Ref struct {
	Y             float64
	Label, Legend string
}

// Point is one data point, in the axes' units.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point
	Style  Style
	// Steps draws the series as steps (each point's Y held flat from its
	// X to the next point's X, the last point's to End) with round joins,
	// instead of straight lines from point to point.
	Steps bool
	End   float64
}

// Marker is the shape drawn at each point of a series, and on its line in
// the legend.
type Marker int

// The markers. NoMarker draws none.
const (
	NoMarker Marker = iota
	Circle
	Square
	Triangle
	Diamond
)

// Style is how one series is drawn. Two series that draw the same line
// stay distinguishable by their dash, and by a filled or hollow marker.
type Style struct {
	Color  string // "#rrggbb"
	Dash   string // stroke-dasharray, "" for solid
	Marker Marker
	Hollow bool // the marker white inside
}

// lineStyles are for charts of lines alone: coinciding lines are told
// apart by their dash only, so more of them are dashed.
var lineStyles = []Style{
	{Color: "#d55e00"},
	{Color: "#0072b2"},
	{Color: "#009e73", Dash: "7 4"},
	{Color: "#e69f00"},
	{Color: "#000000", Dash: "2 3"},
	{Color: "#cc79a7", Dash: "3 3"},
	{Color: "#56b4e9", Dash: "7 4"},
	{Color: "#666666", Dash: "9 3 2 3"},
}

// markedStyles are for charts with markers: the leaky bucket and GCRA
// (the second and third of the six) draw the same line, one solid with
// filled markers, the other dashed with hollow ones.
var markedStyles = []Style{
	{Color: "#d55e00", Marker: Circle},
	{Color: "#0072b2", Marker: Square},
	{Color: "#009e73", Dash: "7 4", Marker: Circle, Hollow: true},
	{Color: "#e69f00", Marker: Triangle},
	{Color: "#000000", Marker: Diamond},
	{Color: "#cc79a7", Dash: "3 3", Marker: Square, Hollow: true},
	{Color: "#56b4e9", Marker: Triangle, Hollow: true},
	{Color: "#666666", Dash: "7 4", Marker: Diamond, Hollow: true},
}

// LineStyle is the style of the i-th series (from 0) of a chart of lines
// without markers; the eight styles repeat after the eighth.
func LineStyle(i int) Style { return lineStyles[i%len(lineStyles)] }

// MarkedStyle is the style of the i-th series (from 0) of a chart whose
// points have markers; the eight styles repeat after the eighth.
func MarkedStyle(i int) Style { return markedStyles[i%len(markedStyles)] }

// NiceCeil is the smallest of 1, 2 and 5 times a power of ten at or above
// v, and 1 for a v of 0 or less.
func NiceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p // also when Log10 rounded down below a power of ten
}

// NiceStep is the one rule for a tick step: the smallest of 1, 2 and 5
// times a power of ten that divides span into at most ten steps (an axis
// of whole numbers, such as counts, takes the larger of it and 1).
func NiceStep(span float64) float64 { return NiceCeil(span / 10) }

// The geometry every chart shares, in SVG user units (px).
const (
	width       = 820
	plotLeft    = 78.0
	plotRight   = 590.0
	legendX     = 612.0
	legendRunes = 22 // a legend entry's most characters, to stay inside the width
	subRunes    = 96 // a line under the title's most characters, to stay inside the width (13 px text)
	maxTicks    = 1000
	markerR     = 3.6
)

// WriteTo writes the chart as SVG to w; the bytes depend on c alone. It
// returns an error, writing nothing, for a chart with no series, a series
// with no points, a number that is not finite, an axis whose Max is not
// above its Min or whose Step is not positive or gives more than 1000
// ticks, or a stepped series whose End is before its last point.
func (c Chart) WriteTo(w io.Writer) (int64, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	var sub []string
	for _, line := range c.Sub {
		sub = append(sub, wrap(printable(line), subRunes)...)
	}
	if added := float64(18 * max(0, len(sub)-len(c.Sub))); added > 0 {
		c.Top, c.Bottom, c.Height = c.Top+added, c.Bottom+added, c.Height+int(added)
	}
	x := func(v float64) float64 { return plotLeft + (plotRight-plotLeft)*(v-c.X.Min)/(c.X.Max-c.X.Min) }
	y := func(v float64) float64 { return c.Bottom - (c.Bottom-c.Top)*(v-c.Y.Min)/(c.Y.Max-c.Y.Min) }

	rows := len(c.Series)
	if c.Ref != nil {
		rows++
	}
	legendEnd := c.Top + 6 + 24*float64(rows) + 30 + 16*float64(len(c.Notes))
	height := max(c.Height, int(math.Ceil(legendEnd))+30)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%.1f" y="28" font-size="17" font-weight="bold" fill="#222222">%s</text>`+"\n", plotLeft, text(c.Title))
	for i, line := range sub {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="13" fill="#444444">%s</text>`+"\n", plotLeft, 52+18*i, html.EscapeString(line))
	}

	// Grid and ticks.
	b.WriteString(`<g font-size="12" fill="#333333">` + "\n")
	for _, v := range c.Y.ticks() {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3" stroke-width="1"/>`+"\n", plotLeft, y(v), plotRight, y(v))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1"/>`+"\n", plotLeft-5, y(v), plotLeft, y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-8, y(v)+4, text(c.Y.label(v)))
	}
	for _, v := range c.X.ticks() {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3" stroke-width="1"/>`+"\n", x(v), c.Top, x(v), c.Bottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1"/>`+"\n", x(v), c.Bottom, x(v), c.Bottom+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(v), c.Bottom+19, text(c.X.label(v)))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="#333333" stroke-width="1.2"/>`+"\n", plotLeft, c.Top, c.Bottom, plotRight)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle" fill="#222222">%s</text>`+"\n",
		(plotLeft+plotRight)/2, c.Bottom+44, text(c.X.Label))
	fmt.Fprintf(&b, `<text transform="translate(%.1f %.1f) rotate(-90)" font-size="13" text-anchor="middle" fill="#222222">%s</text>`+"\n",
		plotLeft-48, (c.Top+c.Bottom)/2, text(c.Y.Label))

	if r := c.Ref; r != nil {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b00020" stroke-width="1.5" stroke-dasharray="5 4"/>`+"\n", plotLeft, y(r.Y), plotRight, y(r.Y))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end" fill="#b00020">%s</text>`+"\n", plotRight-4, y(r.Y)-6, text(r.Label))
	}

	for _, s := range c.Series {
		var path bytes.Buffer
		join := ""
		if s.Steps {
			join = ` stroke-linejoin="round"`
			for k, p := range s.Points {
				if k == 0 {
					fmt.Fprintf(&path, "M%.1f %.1f", x(p.X), y(p.Y))
				} else {
					fmt.Fprintf(&path, "V%.1f", y(p.Y))
				}
				to := s.End
				if k+1 < len(s.Points) {
					to = s.Points[k+1].X
				}
				fmt.Fprintf(&path, "H%.1f", x(to))
			}
		} else {
			for k, p := range s.Points {
				cmd := "L"
				if k == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&path, "%s%.1f %.1f", cmd, x(p.X), y(p.Y))
			}
		}
		fmt.Fprintf(&b, `<g><title>%s</title>`+"\n", text(s.Name))
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s%s/>`+"\n", path.String(), attr(s.Style.Color), join, dash(s.Style.Dash))
		for _, p := range s.Points {
			marker(&b, s.Style, x(p.X), y(p.Y))
		}
		b.WriteString("</g>\n")
	}

	// The legend.
	ly := c.Top + 6
	if c.Legend != "" {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" font-weight="bold" fill="#222222">%s</text>`+"\n", legendX, ly, text(c.Legend))
	}
	for _, s := range c.Series {
		ly += 24
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", legendX, ly-4, legendX+34, ly-4, attr(s.Style.Color), dash(s.Style.Dash))
		marker(&b, s.Style, legendX+17, ly-4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" fill="#222222">%s</text>`+"\n", legendX+44, ly, legendText(s.Name))
	}
	if r := c.Ref; r != nil {
		ly += 24
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b00020" stroke-width="1.5" stroke-dasharray="5 4"/>`+"\n", legendX, ly-4, legendX+34, ly-4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" fill="#222222">%s</text>`+"\n", legendX+44, ly, legendText(r.Legend))
	}
	ly += 30
	for _, note := range c.Notes {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11.5" fill="#555555">%s</text>`+"\n", legendX, ly, text(note))
		ly += 16
	}
	b.WriteString("</svg>\n")
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// check is WriteTo's list of errors.
func (c Chart) check() error {
	if len(c.Series) == 0 {
		return errors.New("svgchart: a chart needs at least one series")
	}
	finite := func(vs ...float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	if !finite(c.Top, c.Bottom) || c.Bottom <= c.Top {
		return fmt.Errorf("svgchart: the plot runs from %v to %v px; its bottom must be below its top", c.Top, c.Bottom)
	}
	for _, a := range []struct {
		name string
		Axis
	}{{"x", c.X}, {"y", c.Y}} {
		switch {
		case !finite(a.Min, a.Max, a.Step, a.Scale) || a.Max <= a.Min || a.Step <= 0 || a.Scale < 0:
			return fmt.Errorf("svgchart: the %s axis runs from %v to %v in steps of %v (scale %v); it needs a finite Min below its Max, a positive Step and a Scale of 0 or more", a.name, a.Min, a.Max, a.Step, a.Scale)
		case (a.Max-a.Min)/a.Step > maxTicks || math.Abs(a.Min/a.Step) > 1<<53 || math.Abs(a.Max/a.Step) > 1<<53:
			return fmt.Errorf("svgchart: the %s axis's step of %v is too fine for its range [%v, %v]", a.name, a.Step, a.Min, a.Max)
		}
	}
	if c.Ref != nil && !finite(c.Ref.Y) {
		return fmt.Errorf("svgchart: the reference line is at %v", c.Ref.Y)
	}
	for _, s := range c.Series {
		if len(s.Points) == 0 {
			return fmt.Errorf("svgchart: series %q has no points", s.Name)
		}
		for _, p := range s.Points {
			if !finite(p.X, p.Y) {
				return fmt.Errorf("svgchart: series %q has a point at (%v, %v)", s.Name, p.X, p.Y)
			}
		}
		if last := s.Points[len(s.Points)-1].X; s.Steps && (!finite(s.End) || s.End < last) {
			return fmt.Errorf("svgchart: series %q steps to %v, before its last point at %v", s.Name, s.End, last)
		}
	}
	return nil
}

// ticks are the multiples of a.Step within [a.Min, a.Max], a hair of
// rounding allowed at both ends. Each is an integer times Step, not a sum
// of steps, so that no drift accumulates.
func (a Axis) ticks() []float64 {
	const hair = 1e-9
	var ts []float64
	for k := int64(math.Ceil(a.Min/a.Step - hair)); k <= int64(math.Floor(a.Max/a.Step+hair)); k++ {
		ts = append(ts, float64(k)*a.Step)
	}
	return ts
}

// label is the tick at v as printed: v/Scale with the decimals Step/Scale
// needs, no trailing zeros, then Unit.
func (a Axis) label(v float64) string {
	scale := a.Scale
	if scale == 0 {
		scale = 1
	}
	step, d := a.Step/scale, 0
	for ; d < 15; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Abs(s-math.Round(s)) <= 1e-9*s {
			break
		}
	}
	num := strconv.FormatFloat(v/scale, 'f', d, 64)
	if d > 0 {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	if num == "-0" {
		num = "0"
	}
	return num + a.Unit
}

// text makes s safe as SVG text: printable, then escaped.
func text(s string) string { return html.EscapeString(printable(s)) }

// wrap breaks s at its spaces into lines of at most n characters; a word
// longer than n keeps a line of its own, whole.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Split(s, " ") {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// legendText is s as a legend entry: printable, at most legendRunes
// characters (ending with … when it was cut, so that it stays inside the
// chart's width), then escaped.
func legendText(s string) string {
	if s = printable(s); utf8.RuneCountInString(s) > legendRunes {
		s = string([]rune(s)[:legendRunes-1]) + "…"
	}
	return html.EscapeString(s)
}

// printable quotes s, Go-style, when it holds a character that is not
// printable or not UTF-8: one that XML may not hold, or that would break
// the line.
func printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) {
		return strconv.Quote(s)
	}
	return s
}

// attr makes s safe inside an attribute's quotes.
func attr(s string) string { return html.EscapeString(s) }

// dash is the stroke-dasharray attribute of a dash pattern, "" for solid.
func dash(pattern string) string {
	if pattern == "" {
		return ""
	}
	return ` stroke-dasharray="` + attr(pattern) + `"`
}

// marker draws st's marker centred on (cx, cy), nothing for NoMarker.
func marker(b *bytes.Buffer, st Style, cx, cy float64) {
	fill, r := st.Color, markerR
	if st.Hollow {
		fill = "#ffffff"
	}
	paint := fmt.Sprintf(`fill="%s" stroke="%s" stroke-width="1.5"`, attr(fill), attr(st.Color))
	switch st.Marker {
	case Circle:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f" %s/>`+"\n", cx, cy, r+0.4, paint)
	case Square:
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s/>`+"\n", cx-r, cy-r, 2*r, 2*r, paint)
	case Triangle:
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`+"\n", cx, cy-r*1.2, cx+r*1.1, cy+r*0.8, cx-r*1.1, cy+r*0.8, paint)
	case Diamond:
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`+"\n", cx, cy-r*1.25, cx+r*1.25, cy, cx, cy+r*1.25, cx-r*1.25, cy, paint)
	}
}
