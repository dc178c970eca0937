package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// DefaultSkews are the sweep's skews: 0 to 200 ms every 10 ms, in µs.
func DefaultSkews() []int64 {
	skews := make([]int64, 0, 21)
	for ms := int64(0); ms <= 200; ms += 10 {
		skews = append(skews, ms*1000)
	}
	return skews
}

// SweepPoint is one algorithm at one skew: the worst peak over the seeds
// and the four clients, and where it happened.
type SweepPoint struct {
	// Peak is the most admits in any window of W; PeakX the same as a
	// multiple of the limit.
	Peak   int
	PeakX  float64
	Seed   uint64
	Client Client
	// Violations counts the (seed, client) runs that broke the promise.
	Violations int
}

// Sweep is the peak of every algorithm against the skew between node
// clocks, in the node-clock deployment.
type Sweep struct {
	Options    Options
	Algorithms []string
	Skews      []int64
	// Points[a][k] is algorithm a at Skews[k].
	Points [][]SweepPoint
}

// RunSweep runs algs in the node-clock deployment at every skew (µs, sorted,
// non-negative) on every seed of o; o.Skew is not used. Like Table, its
// result depends on its arguments alone, not on the number of workers.
func RunSweep(algs []algos.Algorithm, o Options, skews []int64) (Sweep, error) {
	if err := o.Validate(); err != nil {
		return Sweep{}, err
	}
	names, err := checkAlgorithms(algs)
	if err != nil {
		return Sweep{}, err
	}
	switch {
	case len(skews) == 0:
		return Sweep{}, errors.New("scenarios: no skews to sweep")
	case skews[0] < 0:
		return Sweep{}, fmt.Errorf("scenarios: negative skew %d µs", skews[0])
	case !slices.IsSorted(skews):
		return Sweep{}, errors.New("scenarios: the skews must be sorted")
	}
	traffic, err := o.traffic()
	if err != nil {
		return Sweep{}, err
	}
	nk, ns := len(skews), len(o.Seeds)
	runs := make([][NumClients]ClientRun, len(algs)*nk*ns)
	err = o.parallel(len(runs), func(i int) error {
		a, k, s := i/(nk*ns), i/ns%nk, i%ns
		col := Column{Deployment: model.NodeClock, Skew: skews[k]}
		out, err := measure(o.config(algs[a], col, o.Seeds[s], traffic[s]), o.WipeAt)
		if err != nil {
			return fmt.Errorf("scenarios: %s at skew %s, seed %d: %w", names[a], algos.FormatMicros(skews[k]), o.Seeds[s], err)
		}
		runs[i] = out
		return nil
	})
	if err != nil {
		return Sweep{}, err
	}
	r := Sweep{Options: o, Algorithms: names, Skews: slices.Clone(skews), Points: make([][]SweepPoint, len(algs))}
	for a := range algs {
		r.Points[a] = make([]SweepPoint, nk)
		for k := range nk {
			p := SweepPoint{Peak: -1}
			for s := range ns {
				for _, c := range Clients() {
					cr := runs[(a*nk+k)*ns+s][c]
					if cr.Peak > p.Peak {
						p.Peak, p.Seed, p.Client = cr.Peak, o.Seeds[s], c
					}
					if cr.Violation != nil {
						p.Violations++
					}
				}
			}
			p.PeakX = float64(p.Peak) / float64(o.Limit.Rate)
			r.Points[a][k] = p
		}
	}
	return r, nil
}

// fmtMillis prints µs as milliseconds, with decimals only when needed.
func fmtMillis(us int64) string {
	if us%1000 == 0 {
		return fmt.Sprintf("%dms", us/1000)
	}
	return fmt.Sprintf("%.3fms", float64(us)/1000)
}

// At returns the point of algorithm algo at skew (µs), if the sweep has it.
func (r Sweep) At(algo string, skew int64) (SweepPoint, bool) {
	k := slices.Index(r.Skews, skew)
	a := slices.Index(r.Algorithms, algo)
	if k < 0 || a < 0 {
		return SweepPoint{}, false
	}
	return r.Points[a][k], true
}

// WriteTo renders the sweep as a text table, one row per skew and one
// column per algorithm. The bytes depend on the report alone.
func (r Sweep) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	o := r.Options
	win := algos.FormatMicros(o.Limit.Window)
	fmt.Fprintf(&b, "overshoot skew sweep\n\n")
	fmt.Fprintf(&b, "Peak: most admitted in any %s (by true decision time), as a multiple of the limit, the worst of\n", win)
	fmt.Fprintf(&b, "seeds %s and of the four clients (flood, boundary bursts, on-off flood, honest), each client on\n", seedList(o.Seeds))
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
	n, err := w.Write(b.Bytes())
	return int64(n), err
}
