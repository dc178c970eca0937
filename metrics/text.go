package metrics

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of TextOptions.
const (
	DefaultTop   = 20
	DefaultWidth = 60
)

// TextOptions shape the text reports. The zero value takes the defaults.
type TextOptions struct {
	// Top is how many keys WriteRun lists, the busiest first; the others
	// are summed up in one line. 0 means DefaultTop, a negative number all.
	Top int
	// Width is the most characters the timeline takes; windows are
	// bucketed to fit. 0 (or less) means DefaultWidth.
	Width int
}

func (o TextOptions) top(n int) int {
	switch {
	case o.Top < 0:
		return n
	case o.Top == 0:
		return min(n, DefaultTop)
	}
	return min(n, o.Top)
}

func (o TextOptions) width() int {
	if o.Width <= 0 {
		return DefaultWidth
	}
	return o.Width
}

// sparks are the timeline's levels: a space for a window that admitted
// nothing, then eight heights up to the busiest window.
var sparks = []rune(" ▁▂▃▄▅▆▇█")

// WriteRun renders r as text: the totals, a timeline of accepted per window,
// then one row per key, the keys with the most requests first (ties by key
// index), cut to o.Top rows with the rest summed up in one line. The bytes
// depend on r and o alone. It returns w's error, if any.
func WriteRun(w io.Writer, r Run, o TextOptions) error {
	var b bytes.Buffer
	win := fmtDur(r.Window)
	fmt.Fprintf(&b, "overshoot metrics: %d requests from %d keys over %s (%s to %s, %d windows of %s)\n\n",
		r.Requests, len(r.Keys), fmtDur(r.End-r.Start), fmtDur(r.Start), fmtDur(r.End), r.PerWindow.Windows, win)
	line := func(label, format string, args ...any) {
		b.WriteString(wrap(fmt.Sprintf("%-12s %s", label, fmt.Sprintf(format, args...)), lineWidth, 13))
	}
	line("requests", "accepted %d, rejected %d, errors %d (limiter failures: neither admitted nor rejected)", r.Accepted, r.Rejected, r.Errors)
	line("accepted", "%s of decided requests, %s per second over the span", fmtPct(r.AcceptRatio), fmtRate(r.AcceptedPerSecond))
	line("most", "%d in any 1s, %d in any 10s (rolling), %d in one aligned %s window", r.MaxAccepted1s, r.MaxAccepted10s, r.PerWindow.Max, win)
	if r.TimeToFirstRejection < 0 {
		line("rejection", "none")
	} else {
		line("rejection", "the first %s after the first request", fmtDur(r.TimeToFirstRejection))
	}
	if p := r.RetryAfter; p.N == 0 {
		line("Retry-After", "none (no rejections)")
	} else {
		line("Retry-After", "p50 %s, p90 %s, p99 %s, max %s (nearest rank, %d rejections)", fmtDur(p.P50), fmtDur(p.P90), fmtDur(p.P99), fmtDur(p.Max), p.N)
	}
	if p := r.Wait; p.N > 0 { // only a queueing limiter holds requests
		line("wait", "p50 %s, p90 %s, p99 %s, max %s (held before being let through; nearest rank over %d admits, %d held)", fmtDur(p.P50), fmtDur(p.P90), fmtDur(p.P99), fmtDur(p.Max), p.N, r.Held)
	}
	if r.Worst < 0 || r.Worst >= len(r.Keys) {
		line("fairness", "no key had a request decided")
	} else {
		line("fairness", "Jain %.3f, Gini %.3f over the accept ratios of %d keys; worst-starved: %s at %s",
			r.Jain, r.Gini, r.KeysDecided, cell(r.Keys[r.Worst].Name), fmtPct(r.Keys[r.Worst].AcceptRatio))
	}
	if s := r.State; s.Samples == 0 {
		line("state", "not sampled")
	} else {
		line("state", "peak %d cells at %s (%d samples)", s.Cells, fmtDur(s.At), s.Samples)
	}
	line("windows", "%s", fmtHistogram(r.PerWindow))

	if s := r.Series("", o.width()); len(s.Points) > 0 {
		each := "one window"
		if per := s.Step / s.Window; per > 1 {
			each = fmt.Sprintf("the busiest of %d windows", per)
		}
		fmt.Fprintf(&b, "\ntimeline, accepted per %s window; each character is %s, %c = %d:\n",
			win, each, sparks[len(sparks)-1], r.PerWindow.Max)
		fmt.Fprintf(&b, "%s |%s| %s\n", fmtDur(r.Start), sparkline(s.Points, r.PerWindow.Max), fmtDur(r.End))
	}

	order := make([]int, len(r.Keys))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := -cmp.Compare(r.Keys[i].Requests, r.Keys[j].Requests); c != 0 {
			return c
		}
		return i - j
	})
	shown := o.top(len(order))
	if len(r.Keys) > 0 {
		b.WriteString("\nper key, the most requests first. any 1s, any 10s: most accepted in a rolling interval;\n")
		fmt.Fprintf(&b, "1 window: most in one aligned %s window; 1st reject: from the key's first request; RA: Retry-After.\n\n", win)
	}
	heads := []string{"key", "requests", "accepted", "rejected", "errors", "accept", "per s", "any 1s", "any 10s", "1 window", "1st reject", "RA p50", "RA p99"}
	rows := make([][]string, 0, shown)
	for _, k := range order[:shown] {
		ks := r.Keys[k]
		first, p50, p99 := "-", "-", "-"
		if ks.TimeToFirstRejection >= 0 {
			first = fmtDur(ks.TimeToFirstRejection)
		}
		if ks.RetryAfter.N > 0 {
			p50, p99 = fmtDur(ks.RetryAfter.P50), fmtDur(ks.RetryAfter.P99)
		}
		rows = append(rows, []string{
			cell(ks.Name), itoa(ks.Requests), itoa(ks.Accepted), itoa(ks.Rejected), itoa(ks.Errors),
			fmtPct(ks.AcceptRatio), fmtRate(ks.AcceptedPerSecond), itoa(ks.MaxAccepted1s), itoa(ks.MaxAccepted10s),
			itoa(ks.PerWindow.Max), first, p50, p99,
		})
	}
	if len(rows) > 0 {
		table(&b, heads, rows)
	}
	if rest := order[shown:]; len(rest) > 0 {
		var req, acc, rej, errs int64
		for _, k := range rest {
			ks := r.Keys[k]
			req, acc, rej, errs = req+ks.Requests, acc+ks.Accepted, rej+ks.Rejected, errs+ks.Errors
		}
		fmt.Fprintf(&b, "and %d more key%s: %d requests, %d accepted, %d rejected, %d errors\n", len(rest), plural(int64(len(rest))), req, acc, rej, errs)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Named is one run of a comparison, under the name of its limiter.
type Named struct {
	Name string
	Run  Run
}

// WriteComparison renders several runs side by side, one row per run in the
// order given: what each let through, how evenly, and how long it told the
// rejected to wait; and, when any run held a request (a queueing limiter),
// the p99 of how long each held what it admitted. The bytes depend on runs
// alone. It returns an error for
// no runs, or w's error.
func WriteComparison(w io.Writer, runs []Named) error {
	if len(runs) == 0 {
		return errors.New("metrics: no runs to compare")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "overshoot comparison: %d runs\n\n", len(runs))
	b.WriteString("accept: accepted of decided requests (errors are neither); any 1s, any 10s: most accepted in a\n")
	b.WriteString("rolling interval; Jain (1 = fair) and Gini (0 = fair) over the keys' accept ratios; worst: the\n")
	waits := slices.ContainsFunc(runs, func(n Named) bool { return n.Run.Wait.N > 0 })
	if waits {
		b.WriteString("worst-starved key and its accept ratio; RA p99: Retry-After, nearest rank; wait p99: how long an\n")
		b.WriteString("admitted request was held before being let through, nearest rank over the admits.\n\n")
	} else {
		b.WriteString("worst-starved key and its accept ratio; RA p99: Retry-After, nearest rank.\n\n")
	}
	heads := []string{"limiter", "accepted", "rejected", "errors", "accept", "any 1s", "any 10s", "Jain", "Gini", "worst", "its ratio", "RA p99"}
	if waits {
		heads = append(heads, "wait p99")
	}
	var rows [][]string
	for _, n := range runs {
		r := n.Run
		worst, worstRatio, p99 := "-", "-", "-"
		if r.Worst >= 0 && r.Worst < len(r.Keys) {
			worst, worstRatio = cell(r.Keys[r.Worst].Name), fmtPct(r.Keys[r.Worst].AcceptRatio)
		}
		if r.RetryAfter.N > 0 {
			p99 = fmtDur(r.RetryAfter.P99)
		}
		row := []string{
			cell(n.Name), itoa(r.Accepted), itoa(r.Rejected), itoa(r.Errors), fmtPct(r.AcceptRatio),
			itoa(r.MaxAccepted1s), itoa(r.MaxAccepted10s), fmt.Sprintf("%.3f", r.Jain), fmt.Sprintf("%.3f", r.Gini),
			worst, worstRatio, p99,
		}
		if waits {
			row = append(row, fmtDur(r.Wait.P99)) // 0s for a run that held nothing
		}
		rows = append(rows, row)
	}
	table(&b, heads, rows)
	_, err := w.Write(b.Bytes())
	return err
}

// lineWidth is where WriteRun wraps its summary lines.
const lineWidth = 110

// wrap breaks s at spaces into lines of at most width characters (a word
// longer than that stays whole), indenting every line after the first, and
// ends each with a newline. A no-break space (U+00A0) holds words together
// and is written as a space.
func wrap(s string, width, indent int) string {
	var out strings.Builder
	n := 0
	for i, word := range strings.Split(s, " ") {
		w := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case n+1+w > width:
			out.WriteString("\n" + strings.Repeat(" ", indent))
			n = indent
		default:
			out.WriteByte(' ')
			n++
		}
		out.WriteString(word)
		n += w
	}
	out.WriteByte('\n')
	return strings.ReplaceAll(out.String(), "\u00a0", " ")
}

// table writes a fixed-width table: the first column (a name) aligned left,
// the others (numbers) right, two spaces apart, a rule under the heads.
func table(b *bytes.Buffer, heads []string, rows [][]string) {
	widths := make([]int, len(heads))
	for _, row := range append([][]string{heads}, rows...) {
		for c, s := range row {
			widths[c] = max(widths[c], utf8.RuneCountInString(s))
		}
	}
	write := func(row []string) {
		var l strings.Builder
		for c, s := range row {
			pad := strings.Repeat(" ", widths[c]-utf8.RuneCountInString(s))
			if c == 0 {
				l.WriteString(s + pad)
			} else {
				l.WriteString("  " + pad + s)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	write(heads)
	rule := make([]string, len(heads))
	for c := range rule {
		rule[c] = strings.Repeat("-", widths[c])
	}
	write(rule)
	for _, row := range rows {
		write(row)
	}
}

// sparkline maps each point to a level: a space for 0, else ⌈8·v/top⌉, so
// that a window that admitted anything at all shows.
func sparkline(points []int64, top int64) string {
	var s strings.Builder
	steps := int64(len(sparks) - 1)
	for _, v := range points {
		level := int64(0)
		if v > 0 && top > 0 {
			level = min(steps, (v*steps+top-1)/top)
		}
		s.WriteRune(sparks[level])
	}
	return s.String()
}

// fmtHistogram prints the windows by how many they admitted, in ranges of
// counts when there are too many distinct ones for a line.
func fmtHistogram(h Histogram) string {
	if h.Windows == 0 {
		return "none"
	}
	const most = 12
	parts := []string{fmt.Sprintf("of %d window%s:", h.Windows, plural(h.Windows))}
	add := func(n int64, admitted string) {
		parts = append(parts, fmt.Sprintf("%d\u00a0admitted\u00a0%s,", n, admitted)) // one unit for wrap
	}
	if len(h.Bins) <= most {
		for _, bin := range h.Bins {
			add(bin.Windows, itoa(bin.Accepted))
		}
	} else {
		span := (h.Max + 10) / 10 // ten ranges of counts cover 0..Max
		lo, n := int64(0), int64(0)
		for _, bin := range h.Bins {
			if start := bin.Accepted / span * span; start != lo {
				if n > 0 {
					add(n, fmt.Sprintf("%d-%d", lo, lo+span-1))
				}
				lo, n = start, 0
			}
			n += bin.Windows
		}
		add(n, fmt.Sprintf("%d-%d", lo, lo+span-1))
	}
	return strings.TrimSuffix(strings.Join(parts, " "), ",")
}

// fmtDur prints µs in the largest unit that keeps it short and exact: 0s,
// 2s, 1.5s, 250ms, 1.5ms, 80µs.
func fmtDur(us int64) string {
	switch {
	case us == 0:
		return "0s"
	case us%second == 0:
		return fmt.Sprintf("%ds", us/second)
	case us >= second:
		return strconv.FormatFloat(float64(us)/float64(second), 'f', -1, 64) + "s"
	case us%1000 == 0:
		return fmt.Sprintf("%dms", us/1000)
	case us >= 1000:
		return strconv.FormatFloat(float64(us)/1000, 'f', -1, 64) + "ms"
	}
	return fmt.Sprintf("%dµs", us)
}

// fmtPct prints a ratio as a percentage, "-" for NaN (nothing decided).
func fmtPct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func fmtRate(x float64) string { return fmt.Sprintf("%.1f", x) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// cell makes a name safe for one cell of a table: printable, quoted when
// empty, and cut to 24 characters.
func cell(name string) string {
	if name == "" {
		return `""`
	}
	return shorten(printable(name), 24)
}

// printable quotes s, Go-style, when it holds a character that is not
// printable or not UTF-8: one that would break a line, the alignment or, in
// SVG, the XML.
func printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) {
		return strconv.Quote(s)
	}
	return s
}

// shorten cuts s to at most n characters, ending it with … when it cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
