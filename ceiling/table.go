package ceiling

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// Row is one deployment at one node count, driven once.
type Row struct {
	Setup  Setup
	Nodes  int
	Result DriveTally
}

// Excess is how far the row's rate beyond its burst is from l's rate, as
// a fraction of it (+0.02 is 2% over). l's burst is not read: the row's
// Setup.Quota is the burst left out.
func (r Row) Excess(l algos.Limit) float64 { return r.Times(l) - 1 }

// Times is the row's rate beyond its burst as a multiple of l's rate.
func (r Row) Times(l algos.Limit) float64 {
	return r.Result.BeyondBurstPerSecond(r.Setup.Quota) / perSecondOf(l)
}

// perSecondOf is l's rate in requests per second.
func perSecondOf(l algos.Limit) float64 {
	return float64(l.Rate) * float64(algos.Second) / float64(l.Window)
}

// WriteTable writes one line per row: the deployment, the nodes, the load
// offered and sent, what was accepted per second over the run and beyond
// the first burst, that against l's rate, and the latency.
func WriteTable(w io.Writer, l algos.Limit, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "deployment\tnodes\toffered/s\tsent\taccepted\taccepted/s\tbeyond burst/s\tvs limit\tfailed\tp50\tp99\t\n")
	for _, r := range rows {
		res := r.Result
		offered := 0.0
		if res.Span > 0 {
			offered = float64(res.Sent) / res.Span.Seconds()
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%d\t%.1f\t%.1f\t%s\t%d\t%s\t%s\t\n",
			r.Setup.Name, r.Nodes, offered, res.Sent, res.Accepted,
			res.AcceptedPerSecond(), res.BeyondBurstPerSecond(r.Setup.Quota),
			vsLimit(r.Times(l)), res.Failed, ms(res.P50), ms(res.P99))
	}
	return tw.Flush()
}

// vsLimit is a multiple of the limit as a signed error when it is near 1,
// and as "N.NNx" when it is not.
func vsLimit(times float64) string {
	if times > 1.5 {
		return fmt.Sprintf("%.2fx", times)
	}
	return fmt.Sprintf("%+.1f%%", 100*(times-1))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }
