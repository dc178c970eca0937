package algos_test

import (
	"bytes"
	"fmt"
	"testing"
	"text/tabwriter"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
)

// TestGoldenAlgos writes golden/algos.txt: what each algorithm promises and
// stores at 100 per second, and the busiest second it admits on one node
// with a true clock, computed by driving it rather than typed in.
func TestGoldenAlgos(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 100)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "The six at %v, one node, true clock.\n", l)
	fmt.Fprintf(&buf, "peak: most admits in any 1 s window, as a multiple of the rate, over %s from mid-window.\n", algos.FormatMicros(driveFor))
	fmt.Fprintf(&buf, "greedy: call again at once when admitted, wait exactly retry-after when denied. flood: 5x the rate, evenly.\n\n")
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "algorithm\tpromise\tstores\tstate\tpeak greedy\tpeak flood")
	for _, a := range algos.All() {
		greedy := peak(greedyAdmits(t, a, l), l)
		flood := peak(floodAdmits(a, l, 5), l)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Promise(l).Text, a.StateDoc, stateSize(a, l), greedy, flood)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "algos.txt", buf.Bytes())
}

const (
	driveFrom = algos.Second / 2 // mid-window
	driveFor  = 5 * algos.Second
)

// greedyAdmits is the client that takes everything it is offered: a retry
// at the same µs after each admit, a sleep of exactly retry-after after each
// denial.
func greedyAdmits(t *testing.T, a algos.Algorithm, l algos.Limit) []int64 {
	var s algos.State
	var admits []int64
	for now, calls := driveFrom, 0; now < driveFrom+driveFor; calls++ {
		if calls > 1_000_000 {
			t.Fatalf("%s: greedy client stuck at %d µs", a.Name, now)
		}
		d := a.Decide(&s, now, l)
		if d.Allowed {
			admits = append(admits, now)
		} else {
			now += d.RetryAfter
		}
	}
	return admits
}

// floodAdmits sends x times the rate, evenly spaced.
func floodAdmits(a algos.Algorithm, l algos.Limit, x int64) []int64 {
	var s algos.State
	var admits []int64
	every := l.Window / (l.Rate * x)
	for now := driveFrom; now < driveFrom+driveFor; now += every {
		if a.Decide(&s, now, l).Allowed {
			admits = append(admits, now)
		}
	}
	return admits
}

func peak(admits []int64, l algos.Limit) string {
	return fmt.Sprintf("%.2fx", float64(algos.MostInAnyWindow(admits, algos.Second))/float64(l.Rate))
}

// stateSize is what one key stores, in bytes; "up to" when it grows with
// the limit (the sliding log keeps one time per admit).
func stateSize(a algos.Algorithm, l algos.Limit) string {
	n := a.StateInts(l) * 8
	if a.StateInts(algos.MustLimit(1, algos.Second, 1)) != a.StateInts(l) {
		return fmt.Sprintf("up to %d B", n)
	}
	return fmt.Sprintf("%d B", n)
}
