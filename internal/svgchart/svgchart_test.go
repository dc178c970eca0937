package svgchart

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestNiceStepDividesASpanIntoAtMostTenRoundSteps(t *testing.T) {
	for _, c := range []struct{ span, want float64 }{
		{0, 1}, // nothing to divide: a step of 1
		{1, 0.1},
		{2, 0.2},
		{10, 1},
		{11, 2},
		{21, 5}, // 2.1 a step: the next round one, never 2.5
		{60, 10},
		{250, 50},
		{1.04, 0.2},
		{31_000_000, 5_000_000}, // 31 s in µs
		{1e18, 1e17},
	} {
		got := NiceStep(c.span)
		if got != c.want {
			t.Errorf("NiceStep(%v) = %v, want %v", c.span, got, c.want)
		}
		if c.span > 0 && c.span/got > 10+1e-9 {
			t.Errorf("NiceStep(%v) = %v gives %v steps, over ten", c.span, got, c.span/got)
		}
	}
}

func TestTicksAreTheMultiplesOfTheStepWithinTheRange(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Axis
		want []string
	}{
		{"counts", Axis{Max: 60, Step: 10}, []string{"0", "10", "20", "30", "40", "50", "60"}},
		{"tenths without drift", Axis{Max: 2, Step: 0.2}, []string{"0", "0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4", "1.6", "1.8", "2"}},
		{"below zero, with a unit", Axis{Min: -5, Max: 35, Step: 5, Unit: "%"}, []string{"-5%", "0%", "5%", "10%", "15%", "20%", "25%", "30%", "35%"}},
		{"halves of the limit", Axis{Max: 3, Step: 0.5, Unit: "×"}, []string{"0×", "0.5×", "1×", "1.5×", "2×", "2.5×", "3×"}},
		{"µs in seconds, from the first multiple", Axis{Min: 3_000_000, Max: 31_000_000, Step: 5_000_000, Scale: 1e6}, []string{"5", "10", "15", "20", "25", "30"}},
		{"half seconds", Axis{Max: 1_500_000, Step: 500_000, Scale: 1e6}, []string{"0", "0.5", "1", "1.5"}},
		{"a step finer than a thousandth", Axis{Max: 0.001, Step: 0.0005}, []string{"0", "0.0005", "0.001"}},
		{"no tick inside", Axis{Min: 1, Max: 4, Step: 5}, nil},
	} {
		var got []string
		for _, v := range c.a.ticks() {
			got = append(got, c.a.label(v))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: ticks %q, want %q", c.name, got, c.want)
		}
	}
}

// chart is a small valid chart with the given series.
func chart(series ...Series) Chart {
	return Chart{
		Title: "t", Height: 480, Top: 78, Bottom: 408,
		X: Axis{Label: "x", Max: 10, Step: 1}, Y: Axis{Label: "y", Max: 10, Step: 1},
		Legend: "series", Series: series,
	}
}

func TestWriteTo(t *testing.T) {
	one := Series{Name: "one", Points: []Point{{X: 5, Y: 5}}, Style: MarkedStyle(0)}
	for _, c := range []struct {
		name    string
		chart   Chart
		has     []string // in the SVG
		hasNot  []string
		wantErr string // "" for none
	}{
		{
			name: "a title with <&> is escaped",
			chart: func() Chart {
				c := chart(one)
				c.Title, c.Sub = `<10/s> & "a burst"`, []string{"a < b"}
				c.Series[0].Name = "my <bucket>"
				return c
			}(),
			has:    []string{"&lt;10/s&gt; &amp; &#34;a burst&#34;", "a &lt; b", "<title>my &lt;bucket&gt;</title>"},
			hasNot: []string{"<10/s>", "my <bucket>"},
		},
		{
			name: "a text that is not printable is quoted",
			chart: func() Chart {
				c := chart(one)
				c.Series[0].Name = "bell\a"
				return c
			}(),
			has:    []string{`<title>&#34;bell\a&#34;</title>`},
			hasNot: []string{"\a"},
		},
		{
			name: "a long name is cut in the legend only",
			chart: func() Chart {
				c := chart(one)
				c.Series[0].Name = "cached-counter(5 nodes, sync 200ms)"
				return c
			}(),
			has: []string{"<title>cached-counter(5 nodes, sync 200ms)</title>", ">cached-counter(5 node…</text>"},
		},
		{
			name: "a condition wider than the chart wraps at its spaces and moves the plot down",
			chart: func() Chart {
				c := chart(one)
				c.Sub = []string{strings.Repeat("ninechars ", 15) + "end", "short"}
				return c
			}(),
			has: []string{
				`y="52" font-size="13" fill="#444444">` + strings.TrimSpace(strings.Repeat("ninechars ", 9)) + `</text>`,
				`y="70" font-size="13" fill="#444444">` + strings.Repeat("ninechars ", 6) + `end</text>`,
				`y="88" font-size="13" fill="#444444">short</text>`,
				`<path d="M78.0 96.0V426.0H590.0"`, `height="498"`,
			},
		},
		{
			name:  "a series with one point is a point and its marker",
			chart: chart(one),
			has:   []string{`<path d="M334.0 243.0" fill="none" stroke="#d55e00" stroke-width="2"/>`, `<circle cx="334.0" cy="243.0" r="4.0"`},
		},
		{
			name:  "a stepped series with one point is one step",
			chart: chart(Series{Name: "s", Points: []Point{{X: 0, Y: 10}}, Style: LineStyle(2), Steps: true, End: 10}),
			has:   []string{`<path d="M78.0 78.0H590.0" fill="none" stroke="#009e73" stroke-width="2" stroke-linejoin="round" stroke-dasharray="7 4"/>`},
		},
		{
			name: "the reference line and its legend entry",
			chart: func() Chart {
				c := chart(one)
				c.Ref = &Ref{Y: 1, Label: "limit", Legend: "the limit (1×)"}
				return c
			}(),
			has: []string{`stroke="#b00020" stroke-width="1.5" stroke-dasharray="5 4"/>`, ">limit</text>", ">the limit (1×)</text>"},
		},
		{
			name: "a long legend makes the chart taller",
			chart: func() Chart {
				c := chart()
				for i := range 20 {
					c.Series = append(c.Series, Series{Name: "s", Points: []Point{{X: 1, Y: float64(i % 10)}}, Style: LineStyle(i)})
				}
				return c
			}(),
			has: []string{`height="624"`}, // 78 + 6 + 24·20 rows + 30 + 30 below the last
		},
		{name: "no series", chart: chart(), wantErr: "at least one series"},
		{name: "a series with no points", chart: chart(Series{Name: "empty"}), wantErr: `"empty" has no points`},
		{name: "a point not a number", chart: chart(Series{Name: "nan", Points: []Point{{X: 1, Y: math.NaN()}}}), wantErr: `"nan" has a point`},
		{name: "a step ending before its point", chart: chart(Series{Name: "back", Points: []Point{{X: 5}}, Steps: true, End: 4}), wantErr: `"back" steps to 4`},
		{
			name:    "an axis with no range",
			chart:   func() Chart { c := chart(one); c.X.Max = 0; return c }(),
			wantErr: "the x axis runs from 0 to 0",
		},
		{
			name:    "a step too fine for the range",
			chart:   func() Chart { c := chart(one); c.Y.Step = 1e-6; return c }(),
			wantErr: "too fine",
		},
	} {
		var b bytes.Buffer
		n, err := c.chart.WriteTo(&b)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || b.Len() != 0 {
				t.Errorf("%s: error %v after %d bytes, want one saying %q and nothing written", c.name, err, b.Len(), c.wantErr)
			}
			continue
		}
		if err != nil || n != int64(b.Len()) {
			t.Errorf("%s: %d bytes counted, %d written, error %v", c.name, n, b.Len(), err)
			continue
		}
		svg := b.String()
		if !strings.HasPrefix(svg, "<svg ") || !strings.HasSuffix(svg, "</svg>\n") {
			t.Errorf("%s: not one SVG element:\n%s", c.name, svg)
		}
		for _, s := range c.has {
			if !strings.Contains(svg, s) {
				t.Errorf("%s: the SVG has no %s:\n%s", c.name, s, svg)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(svg, s) {
				t.Errorf("%s: the SVG has %q", c.name, s)
			}
		}
	}
}

// The bytes depend on the chart alone.
func TestWriteToIsDeterministic(t *testing.T) {
	c := chart(Series{Name: "a", Points: []Point{{X: 0, Y: 1}, {X: 5, Y: 9}, {X: 10, Y: 3}}, Style: MarkedStyle(5)})
	c.Notes = []string{"a note"}
	var once, again bytes.Buffer
	if _, err := c.WriteTo(&once); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(once.Bytes(), again.Bytes()) {
		t.Error("two writings of one chart differ")
	}
}
