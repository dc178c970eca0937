package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/overshoot-go/overshoot/internal/svgchart"
)

// AcceptedSeries is one line of a chart of accepted over time (drawn as an
// svgchart.Series by WriteSVG): Points[i] is the most requests admitted in
// one Window-long aligned window within
// [Start + i·Step, Start + (i+1)·Step). With Step = Window a point is one
// window; a longer Step buckets several windows into one point and keeps
// the busiest, so that a burst is not averaged away.
type AcceptedSeries struct {
	Name   string
	Start  int64 // µs
	Step   int64 // µs each point covers
	Window int64 // µs of the windows counted
	Points []int64
}

// Series returns r's timeline as an AcceptedSeries of at most points points (at
// least one), bucketing whole windows when the span holds more windows than
// that. An empty run gives a series with no points.
func (r Run) Series(name string, points int) AcceptedSeries {
	s := AcceptedSeries{Name: name, Start: r.Start, Step: r.Window, Window: r.Window}
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

// WriteSVG draws series as an SVG line chart of accepted per window against
// time in seconds: one stepped line per series (each point flat across the
// time it covers), axes with ticks and labels, and a legend, as every
// chart of the module is drawn (internal/svgchart). The bytes depend on
// title and series alone, and every text is escaped. It returns an error
// for no series, a series with no points, a non-positive Step or Window, a
// negative point, or a series reaching past MaxTime; or w's error.
func WriteSVG(w io.Writer, title string, series []AcceptedSeries) error {
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

	// Counts and µs are whole numbers: steps of at least 1, and a step of
	// headroom above the highest point.
	yStep := max(int64(svgchart.NiceStep(float64(max(top, 1)))), 1)
	per := "window"
	if window > 0 {
		per = fmtDur(window) + " window"
	}
	c := svgchart.Chart{
		Title:  title,
		Sub:    []string{fmt.Sprintf("requests admitted per %s, %s to %s", per, fmtDur(t0), fmtDur(t1))},
		Height: 480,
		Top:    78, Bottom: 408,
		X: svgchart.Axis{Label: "time (s)", Min: float64(t0), Max: float64(t1),
			Step: max(svgchart.NiceStep(float64(t1-t0)), 1), Scale: float64(second)},
		Y:      svgchart.Axis{Label: "admitted per " + per, Max: float64((top/yStep + 1) * yStep), Step: float64(yStep)},
		Legend: "limiter",
		Notes:  []string{"Each step is one window."},
	}
	for i, s := range series {
		cs := svgchart.Series{Name: s.Name, Style: svgchart.LineStyle(i), Steps: true, End: float64(s.Start + int64(len(s.Points))*s.Step)}
		for p, v := range s.Points {
			cs.Points = append(cs.Points, svgchart.Point{X: float64(s.Start + int64(p)*s.Step), Y: float64(v)})
		}
		c.Series = append(c.Series, cs)
		if s.Step != s.Window {
			c.Notes = []string{"A step that covers several", "windows shows the busiest", "of them."}
		}
	}
	_, err := c.WriteTo(w)
	return err
}
