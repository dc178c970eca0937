package judge

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// Over is the table's "over" for a run's records: how many more the run
// admitted than the reference algorithm a admits of the same requests on
// one node with a true clock and no latency (each key's requests decided
// in order at their Sent, or at their Decided where the record saw it),
// in % of the reference's admits; and the reference's admits. Requests
// that failed are left out of both, so that an outage is not counted as
// restraint. An invalid limit is an error.
func Over(records []record.Record, a algos.Algorithm, l algos.Limit) (pct float64, ideal int, err error) {
	if err := l.Validate(); err != nil {
		return 0, 0, fmt.Errorf("judge: %w", err)
	}
	if a.Decide == nil {
		return 0, 0, fmt.Errorf("judge: the reference %q has no decision", a.Name)
	}
	type req struct {
		at  int64
		key string
		i   int
	}
	var reqs []req
	admitted := 0
	for i, r := range records {
		if r.Err != nil {
			continue
		}
		if r.Allowed {
			admitted++
		}
		at, _ := r.Span()
		reqs = append(reqs, req{at, r.Key, i})
	}
	slices.SortStableFunc(reqs, func(x, y req) int { return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.i, y.i)) })
	states := map[string]*algos.State{}
	for _, q := range reqs {
		st := states[q.key]
		if st == nil {
			st = &algos.State{}
			states[q.key] = st
		}
		if a.Decide(st, q.at, l).Allowed {
			ideal++
		}
	}
	if ideal == 0 {
		return 0, 0, nil
	}
	return 100 * float64(admitted-ideal) / float64(ideal), ideal, nil
}
