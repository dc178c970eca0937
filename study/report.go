package study

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
)

// The study's rendering: every table the report and the tests print. Each
// Write function writes its whole table to w in one Write, or nothing when
// a model fails, and returns w's error.

// WriteModelReport writes the deterministic half of the report
// (golden/concurrency.txt): the configuration, the lockstep model, and what
// the Go algorithms admit on the edge and caller-clock plans with no
// network. The live half is printed by the study's tests beside it. The
// bytes depend on the study's configuration alone.
func WriteModelReport(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("overshoot study: concurrency, retries and clocks against one Redis key\n")
	b.WriteString("(deterministic half: the models; `make study` prints the live half beside them)\n\n")

	b.WriteString("== configuration\n\n")
	fmt.Fprintf(&b, "strategies:  check-then-act (racy); incr-then-check (atomic); watch-multi-3, watch-multi-10 (optimistic,\n")
	fmt.Fprintf(&b, "             retries after the first attempt); lua-%s (atomic, Redis TIME)\n", strings.Join(LuaAlgorithms, ", lua-"))
	fmt.Fprintf(&b, "workers:     %v, each on its own connection (a client with a pool of one)\n", WorkerCounts)
	fmt.Fprintf(&b, "paths:       loopback; in-process toxiproxy with latency toxics (up+down ms) %s\n", legsText())
	fmt.Fprintf(&b, "limit:       %s; %d requests offered a trial (ceil(%d/c) per worker)\n", ConcurrencyLimit, ConcurrencyOffered, ConcurrencyOffered)
	fmt.Fprintf(&b, "arrivals:    adversarial (one barrier, back to back); random (seeded offsets in [0, max(1ms, 2·RTT·share)))\n")
	fmt.Fprintf(&b, "within:      refused while fewer than L were admitted: watch-multi: budget exhausted with the last read\n")
	fmt.Fprintf(&b, "             below L; scripts and incr-then-check: fewer than L admits before it in Redis's order;\n")
	fmt.Fprintf(&b, "             check-then-act: never (it refuses only on reading L, and its count is its admits)\n\n")

	b.WriteString("== lockstep model\n\n")
	if err := WriteLockstepTable(&b, WorkerCounts, []int{10, 50, 100, 101, 1000}); err != nil {
		return err
	}
	b.WriteString("\n")

	b.WriteString("== around a window edge (Go algorithms, one node, no network)\n\n")
	fmt.Fprintf(&b, "limit %s; one request every %s from the lead before an aligned edge to one window after it;\n", EdgeLimit, algos.FormatMicros(EdgeGap))
	b.WriteString("most admits in any window of W, as a multiple of L\n\n")
	fmt.Fprintf(&b, "%-16s", "algorithm")
	for _, lead := range EdgeLeads {
		fmt.Fprintf(&b, " %14s", "lead "+algos.FormatMicros(lead))
	}
	b.WriteString("\n")
	for _, name := range LuaAlgorithms {
		a, err := algos.ByName(name)
		if err != nil {
			return fmt.Errorf("study: %w", err)
		}
		fmt.Fprintf(&b, "%-16s", name)
		for _, lead := range EdgeLeads {
			most, err := EdgeModel(a, EdgePlanFor(lead))
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %8d %4.2fx", most, float64(most)/float64(EdgeLimit.Rate))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	b.WriteString("== caller clocks (Go token buckets, one store, no network)\n\n")
	p := SkewPlanFor(0)
	fmt.Fprintf(&b, "limit %s; %d workers offering %.1fx the rate for %s, phases seeded; allowed = B + L·T/W = %d\n",
		SkewLimit, p.Workers, p.Load, algos.FormatMicros(p.Duration), skewAllowed(p))
	fmt.Fprintf(&b, "clamped:   %s (shipped), tokens += max(0, now-last)·rate: a caller behind adds nothing\n", algos.TokenBucket.Name)
	fmt.Fprintf(&b, "unclamped: %s, tokens += (now-last)·rate: a caller behind drains it\n", planted.TokenBucketNegativeRefill.Name)
	b.WriteString("each cell: admitted, and its share of allowed\n\n")
	head := fmt.Sprintf("%8s %6s", "", "")
	for _, a := range SkewBuckets {
		head += fmt.Sprintf("   %-28s", SkewLabel(a.Name))
	}
	b.WriteString(strings.TrimRight(head, " ") + "\n")
	// The skew column prints each worker's offset at most, ±Skew/2.
	fmt.Fprintf(&b, "%8s %6s", "skew", "sent")
	for range SkewBuckets {
		fmt.Fprintf(&b, "   %13s %14s", "redis clock", "caller clock")
	}
	b.WriteString("\n")
	for _, skew := range SkewSkews {
		p := SkewPlanFor(skew)
		sent, _, err := SkewModel(SkewBuckets[0], p, false)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%8s %6d", "±"+algos.FormatMicros(skew/2), sent)
		for _, a := range SkewBuckets {
			_, redisAdm, err := SkewModel(a, p, false)
			if err != nil {
				return err
			}
			_, callerAdm, err := SkewModel(a, p, true)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "   %6d %5.0f%% %6d %6.0f%%", redisAdm, 100*float64(redisAdm)/float64(skewAllowed(p)),
				callerAdm, 100*float64(callerAdm)/float64(skewAllowed(p)))
		}
		b.WriteString("\n")
	}
	_, err := b.WriteTo(w)
	return err
}

// WriteLockstepTable writes the lockstep model for every c and l given, one
// row an l: the predicted over-admission (LockstepOver) and its share of l.
func WriteLockstepTable(w io.Writer, workers, limits []int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "check-then-act, lockstep model: over = c·ceil(L/c) - L (admitted = c·ceil(L/c))\n\n")
	fmt.Fprintf(&b, "%6s", "L \\ c")
	for _, c := range workers {
		fmt.Fprintf(&b, " %11d", c)
	}
	b.WriteString("\n")
	for _, l := range limits {
		fmt.Fprintf(&b, "%6d", l)
		for _, c := range workers {
			over := LockstepOver(c, l)
			fmt.Fprintf(&b, " %4d (%3.0f%%)", over, 100*float64(over)/float64(l))
		}
		b.WriteString("\n")
	}
	_, err := b.WriteTo(w)
	return err
}

// WriteEdgeTable writes live edge results beside the model, one row a
// script: sent, admitted, and the most admits in any window of W, live and
// modelled, each also as a multiple of EdgeLimit's L.
func WriteEdgeTable(w io.Writer, lead int64, rs []EdgeResult) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "edge trial, flood from %s before the edge to one window after (%s):\n", algos.FormatMicros(lead), EdgeLimit)
	fmt.Fprintf(&b, "%-16s %6s %8s %14s %14s\n", "algorithm", "sent", "admitted", "most in W", "model")
	for _, r := range rs {
		fmt.Fprintf(&b, "%-16s %6d %8d %8d %4.2fx %8d %4.2fx\n", r.Algorithm, r.Sent, r.Admitted,
			r.Most, float64(r.Most)/float64(EdgeLimit.Rate), r.Model, float64(r.Model)/float64(EdgeLimit.Rate))
	}
	_, err := b.WriteTo(w)
	return err
}

// WriteSkewTable writes live caller-clock results beside the model, one row
// a result. Its skew column prints each worker's offset at most, ±Skew/2.
func WriteSkewTable(w io.Writer, rs []SkewResult) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%8s %-10s %-7s %6s %8s %8s %7s %6s %7s\n", "skew", "bucket", "clock", "sent", "allowed", "admitted", "share", "model", "share")
	for _, r := range rs {
		fmt.Fprintf(&b, "%8s %-10s %-7s %6d %8d %8d %6.0f%% %6d %6.0f%%\n", "±"+fmtSkew(r.Skew/2), SkewLabel(r.Bucket), r.Clock, r.Sent, r.Allowed,
			r.Admitted, 100*r.Share(), r.Model, 100*float64(r.Model)/float64(r.Allowed))
	}
	_, err := b.WriteTo(w)
	return err
}

// WriteGrid writes points as the study's main table: one row a grid point,
// with its trials' PointStats (GridPoint.Summarize).
func WriteGrid(w io.Writer, points []GridPoint) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-20s %-10s %3s %-8s %8s %-11s %6s %4s %9s %14s %6s %13s %5s %9s %9s %9s\n",
		"strategy", "kind", "c", "path", "rtt", "arrival", "trials", "sent", "admitted", "over mean/max", "model", "within mean/max", "share", "p50", "p99", "req/s")
	for _, pt := range points {
		s := pt.Summarize()
		model := "-"
		if s.Model >= 0 {
			model = fmt.Sprintf("%+d", s.Model)
		}
		admitted := fmt.Sprintf("%d", s.AdmittedMin)
		if s.AdmittedMax != s.AdmittedMin {
			admitted = fmt.Sprintf("%d-%d", s.AdmittedMin, s.AdmittedMax)
		}
		fmt.Fprintf(&b, "%-20s %-10s %3d %-8s %8s %-11s %6d %4d %9s %14s %6s %13s %4.0f%% %9s %9s %9.0f\n",
			pt.Strategy, pt.Atomicity, pt.Workers, pt.Path, fmtDur(pt.RTT), pt.Release, s.Trials, s.Sent, admitted,
			fmt.Sprintf("%+.1f/%+d", s.OverMean, s.OverMax), model,
			fmt.Sprintf("%.1f/%d", s.WithinMean, s.WithinMax), 100*s.WithinShare,
			fmtDur(s.P50), fmtDur(s.P99), s.Throughput)
	}
	_, err := b.WriteTo(w)
	return err
}

// WriteLockstepComparison writes check-then-act's grid points (the others
// are skipped) beside the lockstep model: predicted and measured
// over-admission for each c, and how many trials came within one of the
// model.
func WriteLockstepComparison(w io.Writer, points []GridPoint) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-8s %8s %5s %3s %-11s %6s %6s %16s %s\n", "path", "rtt", "L", "c", "arrival", "model", "mean", "min..max", "|measured-model| <= 1")
	for _, pt := range points {
		if pt.Strategy != (CheckThenAct{}).Name() {
			continue
		}
		s := pt.Summarize()
		within := 0
		for _, r := range pt.Results {
			if d := r.Over - s.Model; d >= -1 && d <= 1 {
				within++
			}
		}
		fmt.Fprintf(&b, "%-8s %8s %5d %3d %-11s %+6d %+6.1f %16s %d of %d trials\n",
			pt.Path, fmtDur(pt.RTT), pt.Limit, pt.Workers, pt.Release, s.Model, s.OverMean,
			fmt.Sprintf("%+d..%+d", s.OverMin, s.OverMax), within, s.Trials)
	}
	_, err := b.WriteTo(w)
	return err
}

// SkewLabel is the short name the reports give a caller-clock bucket:
// "clamped" for the shipped token bucket, "unclamped" for the planted one,
// else the algorithm's name.
func SkewLabel(name string) string {
	switch name {
	case algos.TokenBucket.Name:
		return "clamped"
	case planted.TokenBucketNegativeRefill.Name:
		return "unclamped"
	}
	return name
}

// legsText lists DelayLegs as the report prints them: "1+0, 2+1, 3+3".
func legsText() string {
	var parts []string
	for _, l := range DelayLegs {
		parts = append(parts, fmt.Sprintf("%d+%d", l[0], l[1]))
	}
	return strings.Join(parts, ", ")
}

// fmtSkew prints a duration as algos.FormatMicros prints its µs.
func fmtSkew(d time.Duration) string { return algos.FormatMicros(d.Microseconds()) }

// fmtDur prints a duration with three significant digits in ms or µs.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}
