package traffic

import (
	"cmp"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// The two clients of the simulated clock faults (package scenarios'
// RunClockFaults), each on its own key.
const (
	ClockFaultFlood  = 0 // Poisson at 5× the limit: what a fault hands out
	ClockFaultHonest = 1 // evenly spaced at half the limit: what a fault locks out
)

// ClockFaultRequests is the simulated clock faults' requests over [0,
// duration) for one seed: the flood (key ClockFaultFlood), a Poisson
// stream at 5·L per W, and the honest client (key ClockFaultHonest), one
// request every 2W/L from W/L on;
// when active > 0, only those in the last active µs of every 10 minutes.
// They are in time order, the flood's first among equals, and depend on
// seed, limit, duration and active only.
func ClockFaultRequests(seed uint64, l algos.Limit, duration, active int64) []record.Request {
	const every = 600 * algos.Second
	on := func(t int64) bool { return active == 0 || t%every >= every-active }
	p := newRand(seed, purposeClockFaults)
	var reqs []record.Request
	mean := float64(l.Window) / float64(5*l.Rate)
	for t := expGap(p, mean); t < duration; t += expGap(p, mean) {
		if on(t) {
			reqs = append(reqs, record.Request{Key: ClockFaultFlood, Sent: t})
		}
	}
	gap := 2 * l.Window / l.Rate
	for t := gap / 2; t < duration; t += gap {
		if on(t) {
			reqs = append(reqs, record.Request{Key: ClockFaultHonest, Sent: t})
		}
	}
	slices.SortStableFunc(reqs, func(a, b record.Request) int { return cmp.Compare(a.Sent, b.Sent) })
	return reqs
}
