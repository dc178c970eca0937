package properties

import (
	"strings"

	"github.com/overshoot-go/overshoot/differential"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"pgregory.net/rapid"
)

// AgreesWith claims that mine stays within b of ref on one node with a true
// clock (model.Ideal): it draws a limit (SmallLimits, or WithLimits) and the
// arrivals of one key (Arrivals, moved back by whole windows so that the
// first falls in the first window), runs both limiters on them with
// differential.Run, and fails with Report.Check's words and the table of
// the windows that differ when a window is past b. It is how a limiter that
// keeps its promise but is not the algorithm it claims to be (a sliding
// counter's wrong estimate) is caught; rapid prints the shrunk
// counterexample and -rapid.seed replays it. A limiter that cannot take a
// drawn limit fails the property too, naming it.
func AgreesWith(mine, ref limiter.Spec, b differential.Bound, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		times := Arrivals(l).Draw(t, "arrivals")
		if len(times) == 0 {
			return
		}
		shift := times[0] / l.Window * l.Window
		reqs := make([]record.Request, len(times))
		for i, at := range times {
			reqs[i] = record.Request{Key: 0, Sent: at - shift}
		}
		rep, err := differential.Run(mine, ref, model.Config{Limit: l, Deployment: model.Ideal, Nodes: 1, Requests: reqs})
		if err != nil {
			t.Fatalf("%v", err)
		}
		if err := rep.Check(b); err != nil {
			var table strings.Builder
			_ = rep.Write(&table) // a strings.Builder never fails
			t.Fatalf("%v\n%s", err, table.String())
		}
	}
}
