package traffic

import (
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// EdgeProbes is the edge-probing client's requests (key Edge) over
// [0, duration): it lands requests on the last and the first µs around
// every instant where a limiter's answer changes, so that an answer one µs
// early shows.
//
//   - Every refill instant the limit implies, the j-th token of a bucket
//     drained at 0 (⌈j·W/L⌉ µs): one request the µs before, one on it.
//   - Every window edge k·W: L+1 requests on the last µs of the window
//     before, on the first µs of the window after, or on both, in turn
//     (from a seeded phase). A burst on both µs spends the next window
//     before it starts; a burst on the first µs only, followed at the next
//     edge by one on the last µs, fills one aligned window from each end:
//     a window one µs off its edge admits 2L there.
//
// It depends on seed, limit and duration only, and is sorted.
func EdgeProbes(seed uint64, limit algos.Limit, duration int64) ([]record.Request, error) {
	parts, err := edgeParts(seed, limit, duration, nil, nil)
	if err != nil {
		return nil, err
	}
	return mergeBySentThenKey(nil, parts...), nil
}

// edgeParts are EdgeProbes' requests in two parts, the refill instants'
// and the window edges', each in time order (for any limit a hunt runs):
// merged by time, ties in part order, they are EdgeProbes'. They are
// appended to refills[:0] and edges[:0], or to new slices when those are
// nil.
func edgeParts(seed uint64, limit algos.Limit, duration int64, refills, edges []record.Request) ([][]record.Request, error) {
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("traffic: invalid limit: %w", err)
	}
	if duration <= 0 || duration > MaxDuration {
		return nil, fmt.Errorf("traffic: duration of %d µs is outside (0, one day]", duration)
	}
	w, l := limit.Window, limit.Rate
	// Room for each part at once (2 a refill instant, up to 2(L+1) an
	// edge), within reason: a longer part grows as appends do.
	windows := duration/w + 1
	out := slices.Grow(refills[:0], roomFor(windows, 2*l))
	at := func(t, n int64) {
		if t >= 0 && t < duration {
			for range n {
				out = append(out, record.Request{Key: int(Edge), Sent: t})
			}
		}
	}
	for j := int64(1); ; j++ {
		t, ok := ceilMulDiv(j, w, l)
		if !ok || t >= duration {
			break
		}
		at(t-1, 1)
		at(t, 1)
	}
	refills = out
	out = slices.Grow(edges[:0], roomFor(windows, 2*(l+1)))
	phase := int64(newRand(seed, purposeEdge).Below(3))
	for k := int64(0); k*w < duration; k++ {
		edge := k * w
		switch (k + phase) % 3 {
		case 0:
			at(edge-1, l+1)
		case 1:
			at(edge, l+1)
		default:
			at(edge-1, l+1)
			at(edge, l+1)
		}
	}
	return [][]record.Request{refills, out}, nil
}

// roomFor is a·b for a part's capacity, at most 2^20 (a larger part grows
// as appends do), for a, b ≥ 0.
func roomFor(a, b int64) int {
	const most = 1 << 20
	if b > 0 && a > most/b {
		return most
	}
	return int(a * b)
}

// ceilMulDiv is ⌈a·b/c⌉ for positive a, b, c, and false when a·b overflows.
func ceilMulDiv(a, b, c int64) (int64, bool) {
	if a > (1<<62)/b {
		return 0, false
	}
	p := a * b
	return (p + c - 1) / c, true
}
