package study

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/traffic"
)

// The study's fixed configuration, shared by the findings, the sweep and
// the report.
var (
	// LuaAlgorithms are the four algorithms the study runs as scripts, by
	// their names in package algos, in the report's order.
	LuaAlgorithms = []string{algos.FixedWindow.Name, algos.TokenBucket.Name, algos.SlidingLog.Name, algos.SlidingCounter.Name}
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
	// and 700 ms, each long enough for L requests to be sent before the edge
	// with 200 ms or more to spare. The sliding counter's excess depends on
	// it (the window that holds the burst before the edge also holds
	// W - lead after it); the default run uses 400 ms.
	EdgeLeads = []int64{300 * algos.Second / 1000, 400 * algos.Second / 1000, 500 * algos.Second / 1000, 700 * algos.Second / 1000}
	// SkewLimit is 100 per second with a burst of 10, small, so that a
	// bucket offered a little more than its rate runs near empty and its
	// admits follow its refill.
	SkewLimit = algos.MustLimit(100, algos.Second, 10)
	// SkewSkews are the clock skews of the caller-clock trials, each the
	// distance between the first and the last worker's clock
	// (traffic.SkewPlan.Skew): 0, 20 ms, 200 ms and 2 s, which the reports
	// print as the worker offsets' range ±Skew/2 (±0µs, ±10ms, ±100ms, ±1s).
	SkewSkews = []int64{0, 20 * algos.Second / 1000, 200 * algos.Second / 1000, 2 * algos.Second}
	// SkewBuckets are the token buckets of the caller-clock trials, side by
	// side: the shipped one, whose refill max(0, now-last) is clamped at
	// zero, so a caller behind can only add tokens; and the planted one
	// (planted.TokenBucketNegativeRefill), whose refill now-last goes
	// negative for a caller behind, so the bucket drains and owes tokens.
	SkewBuckets = []algos.Algorithm{algos.TokenBucket, planted.TokenBucketNegativeRefill}
)

// ConcurrencyLimitFor is ConcurrencyLimit with another rate (and a burst
// equal to it): rate requests in the same one-hour window. It fails for a
// rate below 1.
func ConcurrencyLimitFor(rate int) (algos.Limit, error) {
	return algos.NewLimit(int64(rate), ConcurrencyLimit.Window, int64(rate))
}

// SkewPlanFor is the study's caller-clock plan at a skew (µs between the
// first and the last worker's clock): 8 workers offering 1.2 times
// SkewLimit's rate for 3 s, phases seeded by 1.
func SkewPlanFor(skew int64) traffic.SkewPlan {
	return traffic.SkewPlan{Limit: SkewLimit, Workers: 8, Skew: skew, Load: 1.2, Duration: 3 * algos.Second, Seed: 1}
}

// EdgePlanFor is the study's edge plan for a lead (µs before the edge):
// EdgeLimit, one request every EdgeGap.
func EdgePlanFor(lead int64) traffic.EdgePlan {
	return traffic.EdgePlan{Limit: EdgeLimit, Lead: lead, Gap: EdgeGap}
}
