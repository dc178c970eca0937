package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// PromiseHolds claims that the limiter keeps its own promise on one node
// with a true clock: whatever the arrivals, the admits one key of a fresh
// limiter makes pass spec.Promise(l).CheckAdmits.
func PromiseHolds(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		r, times := c.draw(t, spec)
		l := r.l
		var admits []int64
		calls := r.replay(r.open(), 0, times, func(i int, d algos.Decision) {
			if d.Allowed {
				admits = append(admits, times[i])
			}
		})
		p := spec.Promise(l)
		if v := p.CheckAdmits(admits); v != nil {
			// Show the calls up to the last admit of the violation.
			end := 0
			for end < len(calls) && calls[end].t <= v.To {
				end++
			}
			t.Fatalf("%s under %v broke its promise %q: %s%s", spec.Name, l, p.Text, v.Reason, trace(calls[:end]))
		}
	}
}
