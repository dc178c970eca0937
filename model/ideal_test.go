package model_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// epoch is 2023-11-14, 22:13:20 UTC in µs: a recorded trace's times.
const epoch = 1_700_000_000 * algos.Second

// An ideal run adds nothing to a send time, so it takes requests up to
// algos.MaxTime (a trace at its Unix-epoch times, as capacity plays it)
// and decides them as it decides the same requests moved back by whole
// windows; every other deployment keeps its room for skews and legs and
// refuses them, even right after an ideal run on the same requests (whose
// check the model remembers).
func TestAnIdealRunTakesEpochTimes(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	var early, late []record.Request
	for i := range 300 {
		send := int64(i) * 37_000
		early = append(early, record.Request{Key: i % 3, Sent: send})
		late = append(late, record.Request{Key: i % 3, Sent: epoch + send})
	}
	for _, a := range algos.All() {
		spec := limiter.FromAlgorithm(a)
		at := func(reqs []record.Request, d model.Deployment) (model.Result, error) {
			return model.Run(model.Config{Limiter: spec, Limit: l, Deployment: d, Nodes: 1, RTT: 1000, Requests: reqs})
		}
		want, err := at(early, model.Ideal)
		if err != nil {
			t.Fatal(err)
		}
		got, err := at(late, model.Ideal)
		if err != nil {
			t.Fatalf("%s: an ideal run at epoch times: %v", a.Name, err)
		}
		for i := range got.Outcomes {
			g, w := got.Outcomes[i], want.Outcomes[i]
			if g.Decision() != w.Decision() || g.Decided != w.Decided+epoch {
				t.Fatalf("%s: request %d at epoch times %+v, moved back %+v", a.Name, i, g, w)
			}
		}
		if _, err := at(late, model.StoreClock); err == nil || !strings.Contains(err.Error(), "too late") {
			t.Errorf("%s: store clock at epoch times after an ideal run: %v, want too late", a.Name, err)
		}
	}
	// Past algos.MaxTime is too late for an ideal run too, and so are
	// epoch times with a closed-loop client, whose waits add to them.
	past := model.Config{Limiter: limiter.FromAlgorithm(algos.GCRA), Limit: l, Deployment: model.Ideal, Nodes: 1,
		Requests: []record.Request{{Sent: algos.MaxTime + 1}}}
	looped := past
	looped.Requests = late
	looped.Loop = []record.LoopClient{{Key: 9, New: func() record.Client { return once{} }}}
	for _, c := range []struct {
		name string
		cfg  model.Config
	}{{"past MaxTime", past}, {"with a closed-loop client", looped}} {
		if _, err := model.Run(c.cfg); err == nil || !strings.Contains(err.Error(), "too late") {
			t.Errorf("an ideal run %s: %v, want too late", c.name, err)
		}
	}
}

// AllRecords makes, one at a time, the records Records returns, with the
// keys named as asked.
func TestAllRecordsAreTheRecordsOneAtATime(t *testing.T) {
	l := algos.MustLimit(5, algos.Second, 5)
	var reqs []record.Request
	for i := range 400 {
		reqs = append(reqs, record.Request{Key: i % 4, Sent: int64(i) * 9_000})
	}
	names := []string{"alice", "bob", "carol", "dave"}
	for _, d := range []model.Deployment{model.Ideal, model.NodeClock, model.GetSet} {
		cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.GCRA), Limit: l, Deployment: d, Nodes: 3, Skew: 20_000, RTT: 2_000, Jitter: 25, Seed: 3, Requests: reqs}
		res, err := model.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := res.Records(cfg)
		if err != nil {
			t.Fatal(err)
		}
		all, err := res.AllRecords(cfg, names)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, r := range all {
			want := recs[i]
			want.Key = names[reqs[i].Key]
			if i != n || r != want {
				t.Fatalf("%s: record %d (the %dth made) is %s, Records has %s", d, i, n, r, recs[i])
			}
			n++
		}
		if n != len(recs) || !slices.ContainsFunc(recs, func(r record.Record) bool { return !r.Allowed }) {
			t.Errorf("%s: %d records made, %d in Records, or none denied", d, n, len(recs))
		}
		if _, err := res.AllRecords(cfg, names[:2]); err == nil {
			t.Errorf("%s: two names for four keys made records", d)
		}
	}
}

// once is a closed-loop client that sends one request, at 0.
type once struct{}

func (once) Next(last *record.Record) (int64, bool) { return 0, last == nil }
