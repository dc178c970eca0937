package overshoot_test

// The set-up and the measures of TestFindingQueueingGCRAAddsLatencyOnBursts
// (findings_test.go): bursty traffic, and each limiter's admits counted at
// two instants, when they were decided and when they were let through.

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"testing"
	"text/tabwriter"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/capacity"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/metrics"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// burstyTenants is the finding's traffic: four tenants, 60 s, 200 requests a
// second in all for the first 2.5 s of every 10 s and 2 a second between
// (the reference simulator's bursty profile: hard bursts at about four
// times the mean of 50 a second, near idle between them).
func burstyTenants(t *testing.T) traffic.Trace {
	t.Helper()
	return generate(t, traffic.TraceSpec{
		Profile:  traffic.Bursty{Rate: 2, Factor: 100, Duty: 0.25, Period: 10 * algos.Second},
		Duration: 60 * algos.Second,
		Keys:     traffic.Uniform(4).Named("tenant-1", "tenant-2", "tenant-3", "tenant-4"),
		Seed:     7,
	})
}

// Instants at which an admit is counted.
const (
	whenDecided    = iota // the request's arrival, when the limiter decided it
	whenLetThrough        // arrival + Delay, when it reached the backend
)

// twoCounts is one run's admits counted when decided and when let through:
// the busiest key's most in a rolling second (measured by metrics), and how
// many keys break a promise.
type twoCounts struct {
	busiest  [2]int64
	breaking [2]int
}

// countTwice counts r's admits of tr at both instants against promise.
func countTwice(t *testing.T, tr traffic.Trace, r capacity.TraceResult, promise algos.Promise) twoCounts {
	t.Helper()
	var times [2][][]int64 // [instant][key]: sorted times
	for w := range times {
		times[w] = make([][]int64, len(tr.Keys))
	}
	for i, req := range tr.Requests {
		if !r.Allowed[i] {
			continue
		}
		out := req.Sent
		if r.Delay != nil {
			out += r.Delay[i]
		}
		times[whenDecided][req.Key] = append(times[whenDecided][req.Key], req.Sent)
		times[whenLetThrough][req.Key] = append(times[whenLetThrough][req.Key], out)
	}
	var c twoCounts
	for w := range times {
		var admits []record.Record // each admit as if decided at the instant counted
		for k, ts := range times[w] {
			slices.Sort(ts)
			if promise.CheckAdmits(ts) != nil {
				c.breaking[w]++
			}
			for _, at := range ts {
				a := record.Record{Key: tr.Keys[k], Sent: at, Decided: at, Answered: at, Seen: record.SeenDecided}
				a.Allowed = true
				admits = append(admits, a)
			}
		}
		slices.SortStableFunc(admits, func(a, b record.Record) int { return cmp.Compare(a.Decided, b.Decided) })
		run, err := metrics.Measure(slices.Values(admits), metrics.Options{Keys: tr.Keys, Window: algos.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range run.Keys {
			c.busiest[w] = max(c.busiest[w], k.MaxAccepted1s)
		}
	}
	return c
}

// writeTwoCounts adds the counts of each limiter to a report.
func writeTwoCounts(b *bytes.Buffer, promise algos.Promise, algs []algos.Algorithm, counts []twoCounts) error {
	fmt.Fprintf(b, "\neach admit counted when decided, and when let through (decided + wait), per key. any 1s: the busiest\nkey's most in a rolling second; breaking: the keys over the GCRA's promise,\n  %s\n", promise.Text)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "limiter\tdecided: any 1s\tbreaking\tlet through: any 1s\tbreaking\t")
	for i, a := range algs {
		c := counts[i]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", a.Name, c.busiest[whenDecided], c.breaking[whenDecided], c.busiest[whenLetThrough], c.breaking[whenLetThrough])
	}
	return tw.Flush()
}

// gcraWithBurst runs tr through the plain GCRA at l's rate with another burst.
func gcraWithBurst(t *testing.T, tr traffic.Trace, l algos.Limit, burst int64) capacity.TraceResult {
	t.Helper()
	r, err := capacity.Run(tr, limiter.FromAlgorithm(algos.GCRA), algos.MustLimit(l.Rate, l.Window, burst))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fmtWait and fmtShare print a wait and a share as the reports do.
var (
	fmtWait  = metrics.FormatDuration
	fmtShare = metrics.FormatPercent
)
