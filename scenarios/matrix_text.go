package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// WriteTo renders the matrix as overshoot's table: a header with the
// conditions, the main table, the deployment bugs, and the promise
// violations. The bytes depend on the matrix alone.
func (r Matrix) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	r.writeConditions(&b)
	r.writeCells(&b, []model.Deployment{model.Ideal, model.NodeClock, model.StoreClock, model.StoreWiped, model.LocalSplit})

	fmt.Fprintf(&b, "\nDeployment bugs, clocks in agreement and nothing restarting, so that only the bug shows:\n")
	fmt.Fprintf(&b, "GET, decide, SET: the node reads the state, decides on its copy when the reply arrives, and writes it back.\n")
	fmt.Fprintf(&b, "Local, full limit: no store, and every node enforces the whole %v.\n\n", r.Options.Limit)
	r.writeCells(&b, []model.Deployment{model.GetSet, model.LocalFull})

	fmt.Fprintf(&b, "\nPromise violations: runs (seed × client, %d per cell) whose admits broke the algorithm's own promise\n", len(r.Options.Seeds)*len(r.Options.Clients()))
	fmt.Fprintf(&b, "at their true decision times.\n\n")
	r.writeViolations(&b)
	r.writeNotApplicable(&b)
	r.writeErrors(&b)

	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// writeConditions writes the table's title and the conditions of its runs,
// then what each number means.
func (r Matrix) writeConditions(b *bytes.Buffer) {
	o := r.Options
	l := o.Limit
	win := algos.FormatMicros(l.Window)
	local := fmt.Sprintf("%d per %s (burst %d)", l.Rate/int64(o.Nodes), win, l.Burst/int64(o.Nodes))
	fmt.Fprintf(b, "overshoot table\n\n")
	fmt.Fprintf(b, "Each run: five clients, each on its own key with a limit of %v: a flood at 5x the limit,\n", l)
	fmt.Fprintf(b, "boundary bursts (%d just before and %d just after a window edge), the flood on %s and off %s,\n",
		l.Rate, l.Rate, algos.FormatMicros(2*l.Window), algos.FormatMicros(3*l.Window))
	fmt.Fprintf(b, "an honest client at 90%% of its limit, and first-hit bursts (one request on an idle key, then %d just\n", l.Rate-1)
	fmt.Fprintf(b, "before and %d just after %s later, where a window started by that request ends). %s per run,\n",
		l.Rate, algos.FormatMicros(l.Window), algos.FormatMicros(o.Duration))
	fmt.Fprintf(b, "seeds %s, the same requests in every column.\n", seedList(o.Seeds))
	if o.Loop {
		fmt.Fprintf(b, "Three closed-loop clients beside them, each sending only once its last answer arrived: one retrying at\n")
		fmt.Fprintf(b, "every Retry-After, one draining its key and idling 1/8 to 8/8 of the named reset, one bursting %s\n", algos.FormatMicros(max(1, l.Window/100)))
		fmt.Fprintf(b, "either side of the reset its key reports.\n")
	}
	fmt.Fprintf(b, "%d nodes behind a random load balancer; the store is %s away, round trip, each leg ±%d%%.\n",
		o.Nodes, algos.FormatMicros(o.RTT), o.Jitter)
	fmt.Fprintf(b, "Node clock: each node tells the store its own time, clocks %s apart. Store clock: the script reads the\n", algos.FormatMicros(o.Skew))
	fmt.Fprintf(b, "store's time. Store wiped: store clock, every key lost at %s. Local split: no store, each node enforces\n", fmtSeconds(o.WipeAt))
	fmt.Fprintf(b, "%s on its own clock (%s apart) and restarts every %s on average, losing its state.\n",
		local, algos.FormatMicros(o.Skew), algos.FormatMicros(o.RestartEvery))
	fmt.Fprintf(b, "\n")
	fmt.Fprintf(b, "peak:   most admitted in any %s (by true decision time), as a multiple of the limit.\n", win)
	fmt.Fprintf(b, "over:   admitted beyond the same algorithm's ideal run (one node, true clock, no latency) on the same\n")
	fmt.Fprintf(b, "        requests, in %% of the ideal's admits; attack clients only.\n")
	var named []string
	for a, ref := range r.References {
		if ref != "" {
			named = append(named, fmt.Sprintf("%s for %s", ref, r.Algorithms[a]))
		}
	}
	if len(named) > 0 {
		fmt.Fprintf(b, "        (ref: the same against the ideal run of the algorithm the limiter names as its reference,\n")
		fmt.Fprintf(b, "        which shows a defect the limiter's own ideal run carries: %s.)\n", strings.Join(named, ", "))
	}
	fmt.Fprintf(b, "honest: share of the honest client's requests turned away.\n")
	fmt.Fprintf(b, "Every cell is the worst seed and the worst client.\n\n")
}

// A metric is one number of a cell as the table prints it, under its head.
type metric struct {
	head  string
	print func(Cell) string
}

var (
	peakMetric = metric{"peak", func(c Cell) string { return fmtPeak(c.PeakX) }}
	overMetric = metric{"over", func(c Cell) string {
		if math.IsNaN(c.OverReference) {
			return fmtOver(c.Over)
		}
		return fmtOver(c.Over) + " (ref " + fmtOver(c.OverReference) + ")"
	}}
	honestMetric = metric{"honest", func(c Cell) string { return fmtShare(c.HonestRejected) }}
)

// metrics are the numbers the table prints for deployment d: the peak
// everywhere, over everywhere but in the ideal reference it is measured
// against, and the honest client's share for the local split and the two
// deployment bugs.
func metrics(d model.Deployment) []metric {
	switch d {
	case model.Ideal:
		return []metric{peakMetric}
	case model.LocalSplit, model.GetSet, model.LocalFull:
		return []metric{peakMetric, overMetric, honestMetric}
	}
	return []metric{peakMetric, overMetric}
}

// writeCells writes one grid of the table: a row per algorithm, and a group
// of columns, its metrics, for each deployment of deps that the matrix has.
func (r Matrix) writeCells(b *bytes.Buffer, deps []model.Deployment) {
	var groups []group
	heads := []string{"algorithm"}
	for _, d := range deps {
		c := r.column(d)
		if c < 0 {
			continue
		}
		ms := metrics(d)
		groups = append(groups, group{title: r.Columns[c].Name, cols: len(ms)})
		for _, m := range ms {
			heads = append(heads, m.head)
		}
	}
	rows := make([][]string, 0, len(r.Algorithms))
	for _, name := range r.Algorithms {
		row := []string{name}
		for _, d := range deps {
			cell, ok := r.Cell(name, d)
			if !ok {
				continue
			}
			for _, m := range metrics(d) {
				if cell.NotApplicable != "" {
					row = append(row, "n/a")
				} else {
					row = append(row, m.print(cell))
				}
			}
		}
		rows = append(rows, row)
	}
	renderGrid(b, groups, heads, rows)
}

// writeViolations writes the grid of promise violations: a row per
// algorithm, a column per deployment.
func (r Matrix) writeViolations(b *bytes.Buffer) {
	heads := []string{"algorithm"}
	for _, c := range r.Columns {
		heads = append(heads, c.Name)
	}
	rows := make([][]string, 0, len(r.Algorithms))
	for _, name := range r.Algorithms {
		row := []string{name}
		for _, c := range r.Columns {
			cell, _ := r.Cell(name, c.Deployment)
			if cell.NotApplicable != "" {
				row = append(row, "n/a")
			} else {
				row = append(row, fmt.Sprint(cell.Violations))
			}
		}
		rows = append(rows, row)
	}
	renderGrid(b, nil, heads, rows)
}

// writeNotApplicable says, under the grids, why each "n/a" is one; it
// writes nothing when every column applies to every limiter.
func (r Matrix) writeNotApplicable(b *bytes.Buffer) {
	first := true
	for _, name := range r.Algorithms {
		for _, c := range r.Columns {
			cell, _ := r.Cell(name, c.Deployment)
			if cell.NotApplicable == "" {
				continue
			}
			if first {
				fmt.Fprintf(b, "\nn/a: the deployment cannot hold the limiter, so it was not run.\n")
				first = false
			}
			fmt.Fprintf(b, "  %s, %s: %s.\n", name, c.Name, cell.NotApplicable)
		}
	}
}

// writeErrors lists the cells where the limiter answered requests with an
// error instead of a decision, with the first error; nothing when none did.
func (r Matrix) writeErrors(b *bytes.Buffer) {
	first := true
	for _, name := range r.Algorithms {
		for _, c := range r.Columns {
			cell, _ := r.Cell(name, c.Deployment)
			if cell.Errors == 0 {
				continue
			}
			if first {
				fmt.Fprintf(b, "\nLimiter errors: requests answered with an error, neither admitted nor denied (all seeds and clients).\n")
				first = false
			}
			fmt.Fprintf(b, "  %s, %s: %d errors; the first: %v\n", name, c.Name, cell.Errors, cell.FirstError)
		}
	}
}
