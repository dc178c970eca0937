package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"pgregory.net/rapid"
)

// PromiseHolds claims that the algorithm keeps its own promise on one node
// with a true clock: whatever the arrivals, the admits it makes pass
// algo.Promise(l).CheckAdmits.
func PromiseHolds(algo algos.Algorithm, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		var admits []int64
		_, calls := replay(algo, l, times, func(i int, _ *algos.State, d algos.Decision) {
			if d.Allowed {
				admits = append(admits, times[i])
			}
		})
		p := algo.Promise(l)
		if v := p.CheckAdmits(admits); v != nil {
			// Show the calls up to the last admit of the violation.
			end := 0
			for end < len(calls) && calls[end].t <= v.To {
				end++
			}
			t.Fatalf("%s under %v broke its promise %q: %s%s", algo.Name, l, p.Text, v.Reason, trace(calls[:end]))
		}
	}
}
