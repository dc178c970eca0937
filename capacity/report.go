package capacity

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/metrics"
	"github.com/overshoot-go/overshoot/traffic"
)

// TimelineWidth is how many characters a timeline in a report takes at most.
const TimelineWidth = 60

// WriteTrace describes a trace in a few lines: how many requests over what
// span, the offered rate, the cost, and each key's share (the five largest,
// then the rest summed up).
func WriteTrace(w io.Writer, tr traffic.Trace) error {
	var b bytes.Buffer
	n := int64(len(tr.Requests))
	var cost int64
	counts := make([]int64, len(tr.Keys))
	for _, r := range tr.Requests {
		cost += r.Cost
		counts[r.Key]++
	}
	span := tr.Span()
	fmt.Fprintf(&b, "trace: %d requests from %d %s over %s", n, len(tr.Keys), plural(len(tr.Keys), "key", "keys"), metrics.FormatDuration(span))
	if span > 0 {
		fmt.Fprintf(&b, ", offered %.2f per second", float64(n-1)*float64(algos.Second)/float64(span))
	}
	fmt.Fprintf(&b, "; %d units of cost\n", cost)
	if len(tr.Keys) > 0 {
		b.WriteString("keys:")
		for _, k := range byCountDesc(counts, 5) {
			fmt.Fprintf(&b, " %s %s,", tr.Keys[k], metrics.FormatPercent(float64(counts[k])/float64(n)))
		}
		b.Truncate(b.Len() - 1)
		if rest := len(tr.Keys) - 5; rest > 0 {
			fmt.Fprintf(&b, " and %d more", rest)
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// byCountDesc is the indices of the top n counts, the largest first, ties
// by index.
func byCountDesc(counts []int64, n int) []int {
	idx := make([]int, len(counts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(counts[b], counts[a]) })
	return idx[:min(n, len(idx))]
}

// WriteComparison reports several limiters' results on the same trace: the
// trace, one row per limiter (what it admitted, the most it let through in
// any rolling second and ten seconds and in one of its own windows, when it
// first refused, how fairly it treated the keys, how long it told the
// refused to wait, its peak state); when any limiter held a request before
// letting it through (a queueing limiter), a second table of how long each
// held what it admitted; and a timeline of accepted per window for each,
// all drawn to one scale. The bytes depend on the arguments alone.
func WriteComparison(w io.Writer, tr traffic.Trace, results []TraceResult) error {
	if len(results) == 0 {
		return fmt.Errorf("capacity: no results to compare")
	}
	var b bytes.Buffer
	if err := WriteTrace(&b, tr); err != nil {
		return err
	}
	fmt.Fprintf(&b, "limit: %s\n\n", results[0].Limit)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "limiter\taccepted\trejected\terrors\taccept\tper s\tany 1s\tany 10s\t1 window\t1st reject\tJain\tGini\tworst\tRA p99\tcells\t")
	for _, r := range results {
		m := r.Run
		worst := "-"
		if m.Worst >= 0 {
			worst = fmt.Sprintf("%s %s", m.Keys[m.Worst].Name, metrics.FormatPercent(m.Keys[m.Worst].AcceptRatio))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%.2f\t%d\t%d\t%d\t%s\t%.4f\t%.4f\t%s\t%s\t%s\t\n",
			r.Limiter, m.Accepted, m.Rejected, m.Errors, metrics.FormatPercent(m.AcceptRatio), m.AcceptedPerSecond,
			m.MaxAccepted1s, m.MaxAccepted10s, m.PerWindow.Max, firstRejection(m.TimeToFirstRejection),
			m.Jain, m.Gini, worst, retryP99(m.RetryAfter), cells(m.State))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeWaits(&b, results); err != nil {
		return err
	}
	writeTimelines(&b, results)
	_, err := w.Write(b.Bytes())
	return err
}

// writeWaits writes the wait table when any result held a request, and
// nothing otherwise (so that a comparison of limiters that hold nothing
// reads as it always has).
func writeWaits(b *bytes.Buffer, results []TraceResult) error {
	if !slices.ContainsFunc(results, func(r TraceResult) bool { return r.Run.Wait.N > 0 }) {
		return nil
	}
	b.WriteString("\nwait: how long an admitted request was held before being let through, nearest rank over the admits\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "limiter\tadmitted\theld\theld share\twait p50\twait p90\twait p99\twait max\t")
	for _, r := range results {
		m := r.Run
		w := m.Wait // all 0 for a limiter that held nothing: every admit waited 0
		share := float64(0)
		if m.Accepted > 0 {
			share = float64(m.Held) / float64(m.Accepted)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Limiter, m.Accepted, m.Held, pct(share),
			metrics.FormatDuration(w.P50), metrics.FormatDuration(w.P90), metrics.FormatDuration(w.P99), metrics.FormatDuration(w.Max))
	}
	return tw.Flush()
}

// writeTimelines draws each result's accepted per window on one shared
// scale, so that a taller character is more admitted in every row.
func writeTimelines(b *bytes.Buffer, results []TraceResult) {
	var top int64
	series := make([]metrics.AcceptedSeries, len(results))
	for i, r := range results {
		series[i] = r.Run.Series(r.Limiter, TimelineWidth)
		for _, p := range series[i].Points {
			top = max(top, p)
		}
	}
	s0 := series[0]
	if len(s0.Points) == 0 {
		return
	}
	fmt.Fprintf(b, "\naccepted per %s window", metrics.FormatDuration(s0.Window))
	if s0.Step != s0.Window {
		fmt.Fprintf(b, " (the busiest of each %s)", metrics.FormatDuration(s0.Step))
	}
	fmt.Fprintf(b, ", █ = %d, from %s:\n", top, metrics.FormatDuration(s0.Start))
	width := 0
	for _, r := range results {
		width = max(width, len([]rune(r.Limiter)))
	}
	for i, s := range series {
		fmt.Fprintf(b, "%-*s |%s|\n", width, results[i].Limiter, metrics.Sparkline(s.Points, top))
	}
}

func firstRejection(us int64) string {
	if us < 0 {
		return "-"
	}
	return metrics.FormatDuration(us)
}

func retryP99(p metrics.Percentiles) string {
	if p.N == 0 {
		return "-"
	}
	return metrics.FormatDuration(p.P99)
}

func cells(s metrics.StatePeak) string {
	if s.Samples == 0 {
		return "-"
	}
	return fmt.Sprint(s.Cells)
}

func pct(x float64) string { return metrics.FormatPercent(x) }

// Write renders the sweep's table: one row per value, whether it meets the
// budget, and the verdict (the tightest value that does, or that none in
// the range does).
func (r SweepResult) Write(w io.Writer) error {
	s := r.Sweep
	var b bytes.Buffer
	if err := WriteTrace(&b, s.Trace); err != nil {
		return err
	}
	fmt.Fprintf(&b, "sweep of the %s; budget: at most %s of requests rejected\n\n", s.parameter(), pct(s.Budget))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tlimiter\tlimit\taccepted\trejected\terrors\trejected share\tper s\t1 window\tJain\tmeets\t\n", s.parameter())
	for _, row := range r.Rows {
		m := row.Result.Run
		meets := "no"
		if row.Meets {
			meets = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%.2f\t%d\t%.4f\t%s\t\n",
			s.format(row.Value), row.Result.Limiter, row.Result.Limit,
			m.Accepted, m.Rejected, m.Errors, pct(row.Result.RejectShare()), m.AcceptedPerSecond, m.PerWindow.Max, m.Jain, meets)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if row, ok := r.Tightest(); ok {
		fmt.Fprintf(&b, "\ntightest %s that fits: %s, rejecting %s of requests (budget %s) and admitting %.2f per second\n",
			s.parameter(), s.format(row.Value), pct(row.Result.RejectShare()), pct(s.Budget), row.Result.Run.AcceptedPerSecond)
	} else {
		fmt.Fprintf(&b, "\nno %s from %s to %s keeps rejects within %s\n",
			s.parameter(), s.format(s.Values[0]), s.format(s.Values[len(s.Values)-1]), pct(s.Budget))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
