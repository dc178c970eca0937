package replay

import (
	"strconv"

	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// Records is the played case as the one record every judge of answered
// requests reads (package record), one per Played in the same order: key
// (its number in decimal, as the model's records name it), node, when it
// was sent and the time it was told, and what was decided. A Played keeps
// no answer but the verdict and no time the answer came back, so the
// answer states no count, and Answered is the decision, seen (Ran, or for
// GetSet when the node decided). The times are on the recording's
// timeline; a send measured on this machine's clock can read a few µs
// after the decision Redis timed (the offset between them is measured,
// not exact), and the record then starts at the decision.
//
// Each is ranked (record.SeenOrder) by when Redis ran its script, in
// Redis's order within one µs; not under GetSet, whose nodes decide on
// their copies in an order no command shows.
func (rec *Recording) Records() []record.Record {
	out := make([]record.Record, len(rec.Played))
	for i, p := range rec.Played {
		out[i] = seenRecord(p.Plan.Key, p.Plan.Node, p.Sent, p.Decided, p.Decided, p.Told)
		out[i].Allowed = p.Admitted
	}
	if rec.Case.Deployment != model.GetSet {
		rank(out, func(i int) (int64, int64) { return rec.Played[i].Ran, rec.Played[i].Seq })
	}
	return out
}

// rank gives every decided record of out whose seq (from at(i)) is above
// 0 its rank among them (record.Ranks): by its decision's time at, those
// of one µs by seq, the store's order.
func rank(out []record.Record, at func(i int) (ran, seq int64)) {
	ranks := record.Ranks(len(out), func(i int) (int64, int64, bool) {
		ran, seq := at(i)
		return ran, seq, seq > 0 && out[i].Seen.Has(record.SeenDecided)
	})
	for i, r := range ranks {
		if r > 0 {
			out[i].Order, out[i].Seen = r, out[i].Seen|record.SeenOrder
		}
	}
}

// Records is the live run as the one record every judge of answered
// requests reads (package record), one per Call in the same order: key (its
// number in decimal, as the model's records name it), node, when the node
// called its limiter and when the call returned, the time the limiter was
// told (the node's clock), and the limiter's whole Decision
// (record.FieldsDecision), or its error. When MONITOR ordered the run
// (Order is "MONITOR") a call that reached the store has its decision
// seen: Ran, the store's clock when its last command ran; otherwise the
// decision is somewhere in [Sent, Returned]. A measured clock offset can
// put Ran a few µs outside the call; the record's span then widens to hold
// it. Those MONITOR ordered are ranked (record.SeenOrder) by Ran, in the
// store's order within one µs.
func (rec *LiveRecording) Records() []record.Record {
	out := make([]record.Record, len(rec.Calls))
	for i, c := range rec.Calls {
		r := record.Record{Key: strconv.Itoa(c.Plan.Key), Node: c.Plan.Node, Cost: 1, Sent: c.Sent, Answered: c.Returned, Told: c.Told, Seen: record.SeenTold}
		if c.Seq > 0 {
			r = seenRecord(c.Plan.Key, c.Plan.Node, c.Sent, c.Ran, c.Returned, c.Told)
		}
		if c.Err != nil {
			r.Err = c.Err
		} else {
			r.Answer = record.Answer{Decision: c.Decision, Known: record.FieldsDecision}
		}
		out[i] = r
	}
	rank(out, func(i int) (int64, int64) { return rec.Calls[i].Ran, rec.Calls[i].Seq })
	return out
}

// seenRecord is a record whose decision was seen at decided, its span
// widened to hold it: [min(sent, decided), max(answered, decided)].
func seenRecord(key, node int, sent, decided, answered, told int64) record.Record {
	return record.Record{Key: strconv.Itoa(key), Node: node, Cost: 1, Sent: min(sent, decided), Decided: decided,
		Answered: max(answered, decided), Told: told, Seen: record.SeenDecided | record.SeenTold}
}
