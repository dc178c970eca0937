package study

import (
	"fmt"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// The study's fixed configuration, shared by the findings, the sweep and
// the report.
var (
	// WorkerCounts are the concurrency levels of the sweep.
	WorkerCounts = []int{1, 2, 4, 8, 16, 32, 64}
	// DelayLegs are the latency toxics of the delayed paths, in whole ms
	// (up, down), beside the plain loopback path: nominal round trips of
	// 1, 3 and 6 ms; what the report shows is each path's measured RTT.
	DelayLegs = [][2]int{{1, 0}, {2, 1}, {3, 3}}
	// ConcurrencyLimit is L = 100 in a window of one hour. Every concurrency
	// trial lasts a few seconds at most, so it falls inside one window (Run
	// checks with Redis TIME and reruns one that straddles an aligned edge),
	// and the token bucket, which refills one token every 36 s, admits
	// exactly its burst of 100: for every strategy "within the limit" means
	// "fewer than 100 admitted so far".
	ConcurrencyLimit = algos.MustLimit(100, 3600*algos.Second, 100)
	// ConcurrencyOffered is how many requests a concurrency trial offers:
	// twice the limit, split evenly (rounded up) among the workers.
	ConcurrencyOffered = 200
	// LockstepLimits are the limits of the lockstep comparison: 100, which
	// every c up to 4 divides (the model predicts no over-admission there),
	// and 101, which no c > 1 of the sweep divides.
	LockstepLimits = []int{100, 101}
	// EdgeLimit is L = 20 per W = 1 s with burst 20, for the trials around a
	// window edge: a token every 50 ms, so the bucket's last refill in a
	// window is a 50 ms target that a busy machine's pauses do not miss.
	EdgeLimit = algos.MustLimit(20, algos.Second, 20)
	// EdgeGap is the flood's spacing around an edge, all workers together:
	// 200 requests a second, 10 for every token the bucket refills, slow
	// enough that a busy 2-core machine still sends them on time.
	EdgeGap int64 = 5000
	// EdgeWorkers is how many connections send each script's flood.
	EdgeWorkers = 4
	// EdgeLeads are how long before the edge the flood starts: 300, 400, 500
	// and 700 ms, each long enough for L requests to arrive before the edge
	// with 200 ms or more to spare. The sliding counter's excess depends on it (the
	// window that holds the burst before the edge also holds W - lead after
	// it); the default run uses 400 ms.
	EdgeLeads = []int64{300 * algos.Second / 1000, 400 * algos.Second / 1000, 500 * algos.Second / 1000, 700 * algos.Second / 1000}
	// SkewLimit is 100 per second with a burst of 10, small, so that a
	// bucket offered a little more than its rate runs near empty and its
	// admits follow its refill.
	SkewLimit = algos.MustLimit(100, algos.Second, 10)
	// SkewSkews are the clock skews of the caller-clock trials: worker
	// offsets spread evenly over ±skew.
	SkewSkews = []int64{0, 10 * algos.Second / 1000, 100 * algos.Second / 1000, algos.Second}
	// SkewBuckets are the token buckets of the caller-clock trials, side by
	// side: the shipped one, whose refill max(0, now-last) is clamped at
	// zero, so a caller behind can only add tokens; and the planted one
	// (algos.PlantedTokenBucketNegativeRefill), whose refill now-last goes
	// negative for a caller behind, so the bucket drains and owes tokens.
	SkewBuckets = []algos.Algorithm{algos.TokenBucket, algos.PlantedTokenBucketNegativeRefill}
)

// SkewLabel is the short name the reports give a caller-clock bucket:
// "clamped" for the shipped token bucket, "unclamped" for the planted one,
// else the algorithm's name.
func SkewLabel(name string) string {
	switch name {
	case algos.TokenBucket.Name:
		return "clamped"
	case algos.PlantedTokenBucketNegativeRefill.Name:
		return "unclamped"
	}
	return name
}

// ConcurrencyLimitFor is ConcurrencyLimit with another rate (and the same
// burst): rate requests in the same one-hour window.
func ConcurrencyLimitFor(rate int) (algos.Limit, error) {
	return algos.NewLimit(int64(rate), ConcurrencyLimit.Window, int64(rate))
}

// SkewPlanFor is the study's caller-clock plan at a skew: 8 workers
// offering 1.2 times the rate for 3 s.
func SkewPlanFor(skew int64) SkewPlan {
	return SkewPlan{Limit: SkewLimit, Workers: 8, Skew: skew, Load: 1.2, Duration: 3 * algos.Second, Seed: 1}
}

// EdgePlanFor is the study's edge plan for a lead.
func EdgePlanFor(lead int64) EdgePlan {
	return EdgePlan{Limit: EdgeLimit, Lead: lead, Gap: EdgeGap}
}

// ModelReport is the deterministic half of the report (golden/concurrency.txt):
// the configuration, the lockstep model, and what the Go algorithms admit on
// the edge and caller-clock plans with no network. The live half is printed
// by the study's tests beside it.
func ModelReport() string {
	var b strings.Builder
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
	b.WriteString(LockstepTable(WorkerCounts, []int{10, 50, 100, 101, 1000}))
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
		a, _ := algos.ByName(name)
		fmt.Fprintf(&b, "%-16s", name)
		for _, lead := range EdgeLeads {
			most := EdgeModel(a, EdgePlanFor(lead))
			fmt.Fprintf(&b, " %8d %4.2fx", most, float64(most)/float64(EdgeLimit.Rate))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	b.WriteString("== caller clocks (Go token buckets, one store, no network)\n\n")
	p := SkewPlanFor(0)
	fmt.Fprintf(&b, "limit %s; %d workers offering %.1fx the rate for %s, phases seeded; allowed = B + L·T/W = %d\n",
		SkewLimit, p.Workers, p.Load, algos.FormatMicros(p.Duration), p.Allowed())
	fmt.Fprintf(&b, "clamped:   %s (shipped), tokens += max(0, now-last)·rate: a caller behind adds nothing\n", algos.TokenBucket.Name)
	fmt.Fprintf(&b, "unclamped: %s, tokens += (now-last)·rate: a caller behind drains it\n", algos.PlantedTokenBucketNegativeRefill.Name)
	b.WriteString("each cell: admitted, and its share of allowed\n\n")
	head := fmt.Sprintf("%8s %6s", "", "")
	for _, a := range SkewBuckets {
		head += fmt.Sprintf("   %-28s", SkewLabel(a.Name))
	}
	b.WriteString(strings.TrimRight(head, " ") + "\n")
	fmt.Fprintf(&b, "%8s %6s", "skew", "sent")
	for range SkewBuckets {
		fmt.Fprintf(&b, "   %13s %14s", "redis clock", "caller clock")
	}
	b.WriteString("\n")
	for _, skew := range SkewSkews {
		p := SkewPlanFor(skew)
		sent, _ := SkewModel(SkewBuckets[0], p, false)
		fmt.Fprintf(&b, "%8s %6d", "±"+algos.FormatMicros(skew), sent)
		for _, a := range SkewBuckets {
			_, redisAdm := SkewModel(a, p, false)
			_, callerAdm := SkewModel(a, p, true)
			fmt.Fprintf(&b, "   %6d %5.0f%% %6d %6.0f%%", redisAdm, 100*float64(redisAdm)/float64(p.Allowed()),
				callerAdm, 100*float64(callerAdm)/float64(p.Allowed()))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func legsText() string {
	var parts []string
	for _, l := range DelayLegs {
		parts = append(parts, fmt.Sprintf("%d+%d", l[0], l[1]))
	}
	return strings.Join(parts, ", ")
}

// EdgeTable renders live edge results beside the model.
func EdgeTable(lead int64, rs []EdgeResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "edge trial, flood from %s before the edge to one window after (%s):\n", algos.FormatMicros(lead), EdgeLimit)
	fmt.Fprintf(&b, "%-16s %6s %8s %14s %14s\n", "algorithm", "sent", "admitted", "most in W", "model")
	for _, r := range rs {
		fmt.Fprintf(&b, "%-16s %6d %8d %8d %4.2fx %8d %4.2fx\n", r.Algorithm, r.Sent, r.Admitted,
			r.Most, float64(r.Most)/float64(EdgeLimit.Rate), r.Model, float64(r.Model)/float64(EdgeLimit.Rate))
	}
	return b.String()
}

// SkewTable renders live caller-clock results beside the model.
func SkewTable(rs []SkewResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8s %-10s %-7s %6s %8s %8s %7s %6s %7s\n", "skew", "bucket", "clock", "sent", "allowed", "admitted", "share", "model", "share")
	for _, r := range rs {
		fmt.Fprintf(&b, "%8s %-10s %-7s %6d %8d %8d %6.0f%% %6d %6.0f%%\n", "±"+fmtSkew(r.Skew), SkewLabel(r.Bucket), r.Clock, r.Sent, r.Allowed,
			r.Admitted, 100*r.Share(), r.Model, 100*float64(r.Model)/float64(r.Allowed))
	}
	return b.String()
}

func fmtSkew(d time.Duration) string { return algos.FormatMicros(d.Microseconds()) }
