package scenarios

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// Write prints the report as one block per fault: a line per deployment,
// a column per limiter, each cell the burst handed out (admits beyond the
// run without the fault) and the honest client's longest lockout.
func (r *ClockFaultReport) Write(w io.Writer) error {
	o := r.Options
	fmt.Fprintf(w, "clock faults: %d nodes, %s round trip (±%d%%), limit %v; a flood at 5x the limit and an honest client at half of it, each on its own key, seed %d.\n",
		o.Nodes, fmtMillis(o.RTT), model.DefaultJitter, o.Limit, o.Seed)
	fmt.Fprintf(w, "Each cell: admits beyond the same run without the fault (the burst the fault hands out; negative: admits it costs),\n")
	fmt.Fprintf(w, "then h and the honest client's requests refused beyond that run, lock and its longest run of refusals when the\n")
	fmt.Fprintf(w, "fault made it longer, and ! when the fault made admits break the promise (judged in true time) on a key that kept it.\n")
	fmt.Fprintf(w, "The six keep their keys here (no TTL), so a store step reaches a node-clock fleet only through expiry, which this model\n")
	fmt.Fprintf(w, "leaves out: on Redis a forward step also expires every key whose TTL it passes.\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for f, fault := range o.Faults {
		fmt.Fprintf(tw, "\n%s\t", fault.Name)
		for _, s := range o.Limiters {
			fmt.Fprintf(tw, "%s\t", s.Name)
		}
		fmt.Fprintln(tw)
		for dep, deployment := range o.Deployments {
			fmt.Fprintf(tw, "  %s\t", deployment)
			for s := range o.Limiters {
				fmt.Fprintf(tw, "%s\t", r.Cells[f][dep][s].text())
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

func (c ClockFaultCell) text() string {
	if c.NotApplicable != nil {
		return "n/a"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%+d", c.Extra)
	if c.Refused != 0 {
		fmt.Fprintf(&b, " h%+d", c.Refused)
	}
	if c.Lockout > c.Clean {
		fmt.Fprintf(&b, " lock %s", fmtLockout(c.Lockout))
	}
	if c.Violations > c.CleanViolations {
		b.WriteString(" !")
	}
	return b.String()
}

// fmtLockout is a lockout to the ms, in seconds past 1 s.
func fmtLockout(us int64) string {
	if us >= algos.Second {
		return fmt.Sprintf("%.1fs", float64(us)/float64(algos.Second))
	}
	return fmt.Sprintf("%dms", (us+500)/1000)
}
