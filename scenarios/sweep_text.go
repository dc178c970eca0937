package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/traffic"
)

// WriteTo renders the sweep as a text table, one row per skew and one
// column per algorithm. The bytes depend on the sweep alone.
func (r Sweep) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	o := r.Options
	win := algos.FormatMicros(o.Limit.Window)
	fmt.Fprintf(&b, "overshoot skew sweep\n\n")
	fmt.Fprintf(&b, "Peak: most admitted in any %s (by true decision time), as a multiple of the limit, the worst of\n", win)
	fmt.Fprintf(&b, "seeds %s and of the %d clients (%s), each client on\n", seedList(o.Seeds), len(o.Clients()), clientNamesOf(o))
	fmt.Fprintf(&b, "its own key with a limit of %v. Node clock: each node tells the store its own time;\n", o.Limit)
	fmt.Fprintf(&b, "%d node clocks spread evenly so that the two extreme ones are the skew apart. The store is %s away,\n", o.Nodes, algos.FormatMicros(o.RTT))
	fmt.Fprintf(&b, "round trip, each leg ±%d%%. %s per run.\n\n", o.Jitter, algos.FormatMicros(o.Duration))
	heads := append([]string{"skew"}, r.Algorithms...)
	rows := make([][]string, len(r.Skews))
	for k, skew := range r.Skews {
		row := []string{fmtMillis(skew)}
		for a := range r.Algorithms {
			row = append(row, fmtPeak(r.Points[a][k].PeakX))
		}
		rows[k] = row
	}
	renderGrid(&b, nil, heads, rows)
	for a, name := range r.Algorithms {
		for k, p := range r.Points[a] {
			if p.Errors > 0 {
				fmt.Fprintf(&b, "%s at %s: %d requests answered with an error, neither admitted nor denied; the first: %v\n",
					name, fmtMillis(r.Skews[k]), p.Errors, p.FirstError)
			}
		}
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// clientNamesOf lists the clients of a run under o by name.
func clientNamesOf(o Options) string {
	names := make([]string, 0, traffic.NumClients)
	for _, c := range o.Clients() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}
