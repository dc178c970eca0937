// Package svgchart is the module's one SVG line-chart writer: the charts of
// metrics (admitted per window over time, drawn as steps) and of scenarios
// (a sweep's or a curve's numbers against its parameter, lines with
// markers and a reference line) are both a Chart written by WriteTo.
//
// A Chart is declarative: a title and lines of conditions under it, two
// axes (their range, tick step, unit and label), the series as (x, y)
// points each with a Style (colour, dash, marker), an optional reference
// line, a legend heading and notes under the legend. NiceStep is the one
// rule for a round tick step, and LineStyle and MarkedStyle the two
// palettes (lines alone, and lines with markers). The bytes depend on the
// Chart alone; every text is escaped, and quoted Go-style when it holds a
// character that is not printable.
//
// # What it owns, and what it must not import
//
// The layout, the ticks, the palettes and the writing of the SVG text. What
// a chart shows (which numbers, which range, which words) stays with the
// package whose results it draws. It imports nothing of this module, so
// that metrics (which may import only record) and scenarios can both use it.
package svgchart
