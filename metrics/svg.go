package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Series is one line of a chart of accepted over time: Points[i] is the
// most requests admitted in one Window-long aligned window within
// [Start + i·Step, Start + (i+1)·Step). With Step = Window a point is one
// window; a longer Step buckets several windows into one point and keeps
// the busiest, so that a burst is not averaged away.
type Series struct {
	Name   string
	Start  int64 // µs
	Step   int64 // µs each point covers
	Window int64 // µs of the windows counted
	Points []int64
}

// Series returns r's timeline as a Series of at most points points (at
// least one), bucketing whole windows when the span holds more windows than
// that. An empty run gives a series with no points.
func (r Run) Series(name string, points int) Series {
	s := Series{Name: name, Start: r.Start, Step: r.Window, Window: r.Window}
	if r.Window <= 0 || r.End <= r.Start {
		return s
	}
	windows := (r.End - r.Start) / r.Window
	n := min(int64(max(points, 1)), windows)
	per := (windows + n - 1) / n // windows per point
	s.Step = per * r.Window
	s.Points = make([]int64, (windows+per-1)/per)
	for _, wc := range r.Timeline {
		if p := (wc.Start - r.Start) / s.Step; wc.Start >= r.Start && p < int64(len(s.Points)) { // as Measure made it
			s.Points[p] = max(s.Points[p], wc.Accepted)
		}
	}
	return s
}

// lineStyle is how one series is drawn: a colour of the palette the
// project's sweep charts use, and a dash pattern so that two series that
// coincide stay distinguishable.
type lineStyle struct {
	color, dash string
}

var lineStyles = []lineStyle{
	{"#d55e00", ""},
	{"#0072b2", ""},
	{"#009e73", "7 4"},
	{"#e69f00", ""},
	{"#000000", "2 3"},
	{"#cc79a7", "3 3"},
	{"#56b4e9", "7 4"},
	{"#666666", "9 3 2 3"},
}

// The chart's geometry, in SVG user units (px), as the sweep charts lay
// theirs out: the plot on the left, the legend on the right.
const (
	chartWidth                = 820
	chartMinHeight            = 480
	chartLeft, chartTop       = 78.0, 78.0
	chartRight                = 590.0
	chartBottom               = 408.0
	chartLegendX              = 612.0
	legendNameRunes           = 22
	chartMaxTicks       int64 = 10
)

// WriteSVG draws series as an SVG line chart of accepted per window against
// time in seconds: one stepped line per series (each point flat across the
// time it covers), axes with ticks and labels, and a legend. It is plain
// SVG text written by hand; the bytes depend on title and series alone, and
// every text is escaped. It returns an error for no series, a series with
// no points, a non-positive Step or Window, a negative point, or a series
// reaching past MaxTime; or w's error.
func WriteSVG(w io.Writer, title string, series []Series) error {
	if len(series) == 0 {
		return errors.New("metrics: a chart needs at least one series")
	}
	t0, t1, top := int64(math.MaxInt64), int64(0), int64(0)
	window := series[0].Window
	for _, s := range series {
		switch {
		case len(s.Points) == 0:
			return fmt.Errorf("metrics: series %q has no points", s.Name)
		case s.Step <= 0 || s.Window <= 0:
			return fmt.Errorf("metrics: series %q has a step of %d µs and a window of %d µs; both must be positive", s.Name, s.Step, s.Window)
		case s.Start < 0 || s.Start > MaxTime || int64(len(s.Points)) > (MaxTime-s.Start)/s.Step:
			return fmt.Errorf("metrics: series %q runs outside [0, MaxTime]", s.Name)
		}
		for _, v := range s.Points {
			if v < 0 {
				return fmt.Errorf("metrics: series %q has a negative point, %d", s.Name, v)
			}
			top = max(top, v)
		}
		t0, t1 = min(t0, s.Start), max(t1, s.Start+int64(len(s.Points))*s.Step)
		if s.Window != window {
			window = 0
		}
	}

	yStep := niceStep(max(top, 1), chartMaxTicks)
	yMax := (top/yStep + 1) * yStep // a step of headroom above the highest point
	xStep := niceStep(t1-t0, chartMaxTicks)
	x := func(t int64) float64 { return chartLeft + (chartRight-chartLeft)*float64(t-t0)/float64(t1-t0) }
	y := func(v int64) float64 { return chartBottom - (chartBottom-chartTop)*float64(v)/float64(yMax) }

	per := "window"
	if window > 0 {
		per = fmtDur(window) + " window"
	}
	height := max(chartMinHeight, int(chartTop)+6+24*(len(series)+1)+4*16+20)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", chartWidth, height)
	fmt.Fprintf(&b, `<text x="%.1f" y="28" font-size="17" font-weight="bold" fill="#222222">%s</text>`+"\n", chartLeft, html.EscapeString(printable(title)))
	fmt.Fprintf(&b, `<text x="%.1f" y="52" font-size="13" fill="#444444">%s</text>`+"\n", chartLeft,
		html.EscapeString(fmt.Sprintf("requests admitted per %s, %s to %s", per, fmtDur(t0), fmtDur(t1))))

	b.WriteString(`<g font-size="12" fill="#333333">` + "\n")
	for v := int64(0); v <= yMax; v += yStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3" stroke-width="1"/>`+"\n", chartLeft, y(v), chartRight, y(v))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1"/>`+"\n", chartLeft-5, y(v), chartLeft, y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%d</text>`+"\n", chartLeft-8, y(v)+4, v)
	}
	for t := (t0 + xStep - 1) / xStep * xStep; t <= t1; t += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3" stroke-width="1"/>`+"\n", x(t), chartTop, x(t), chartBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333" stroke-width="1"/>`+"\n", x(t), chartBottom, x(t), chartBottom+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(t), chartBottom+19,
			strconv.FormatFloat(float64(t)/float64(second), 'f', -1, 64))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="#333333" stroke-width="1.2"/>`+"\n", chartLeft, chartTop, chartBottom, chartRight)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle" fill="#222222">time (s)</text>`+"\n", (chartLeft+chartRight)/2, chartBottom+44)
	fmt.Fprintf(&b, `<text transform="translate(%.1f %.1f) rotate(-90)" font-size="13" text-anchor="middle" fill="#222222">%s</text>`+"\n",
		chartLeft-48, (chartTop+chartBottom)/2, html.EscapeString("admitted per "+per))

	// One stepped line per series, in order, so later ones are on top.
	for i, s := range series {
		st := lineStyles[i%len(lineStyles)]
		var path bytes.Buffer
		for p, v := range s.Points {
			from, to := s.Start+int64(p)*s.Step, s.Start+int64(p+1)*s.Step
			if p == 0 {
				fmt.Fprintf(&path, "M%.1f %.1f", x(from), y(v))
			} else {
				fmt.Fprintf(&path, "V%.1f", y(v))
			}
			fmt.Fprintf(&path, "H%.1f", x(to))
		}
		fmt.Fprintf(&b, `<g><title>%s</title>`+"\n", html.EscapeString(printable(s.Name)))
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"%s/>`+"\n", path.String(), st.color, dashAttr(st.dash))
		b.WriteString("</g>\n")
	}

	ly := chartTop + 6
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" font-weight="bold" fill="#222222">limiter</text>`+"\n", chartLegendX, ly)
	for i, s := range series {
		st := lineStyles[i%len(lineStyles)]
		ly += 24
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", chartLegendX, ly-4, chartLegendX+34, ly-4, st.color, dashAttr(st.dash))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" fill="#222222">%s</text>`+"\n", chartLegendX+44, ly, html.EscapeString(shorten(printable(s.Name), legendNameRunes)))
	}
	ly += 30
	notes := []string{"Each step is one window."}
	for _, s := range series {
		if s.Step != s.Window {
			notes = []string{"A step that covers several", "windows shows the busiest", "of them."}
		}
	}
	for _, note := range notes {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11.5" fill="#555555">%s</text>`+"\n", chartLegendX, ly, note)
		ly += 16
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

// niceStep is the smallest of 1, 2 and 5 times a power of ten that divides
// span (> 0) into at most ticks steps: integer steps, so that the ticks of
// counts and of µs fall on round numbers without floating-point drift.
func niceStep(span, ticks int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p*ticks >= span || p > math.MaxInt64/100 {
				return m * p
			}
		}
	}
}

// shorten cuts s to at most n characters, ending it with … when it cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
