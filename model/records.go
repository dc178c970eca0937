package model

import (
	"errors"
	"strconv"

	"github.com/overshoot-go/overshoot/record"
)

// ErrAnswered is the Err of the record of a request the limiter answered
// with an error (Result.FirstError holds the first error itself), and
// ErrPanicked of one it panicked on.
var (
	ErrAnswered = errors.New("model: the limiter answered an error")
	ErrPanicked = errors.New("model: the limiter panicked")
)

// Records is the run as the one record every judge of answered requests
// reads (package record), one per Outcome in the same order: cfg must be
// the Config the run was made from. The simulator sees everything a
// client cannot, so every record has its Decided and Told seen:
//
//   - Key is the key's number in decimal, Cost 1, Sent the true send time;
//   - Decided is Outcome.Decided, and Answered is Decided too: the model
//     does not draw the way back of an open-loop request, and nothing a
//     judge reads depends on it;
//   - Told is the time the limiter was told or read: the sending node's
//     clock when it sent (NodeClock, LocalSplit, LocalFull; Ideal's node
//     has a true clock), the store's clock when it decided (StoreClock,
//     StoreWiped), and the node's clock when the GET's reply reached it
//     (GetSet);
//   - the answer states Remaining, Reset and Retry-After
//     (record.FieldsDecision), and an error is ErrAnswered or ErrPanicked.
//
// It returns Plan's error for a Config that does not validate.
func (r *Result) Records(cfg Config) ([]record.Record, error) {
	plan, err := Plan(cfg)
	if err != nil {
		return nil, err
	}
	if n := len(plan) + len(r.LoopRequests); n != len(r.Outcomes) {
		return nil, errors.New("model: Records: the Config has " + strconv.Itoa(n) + " requests, the run " + strconv.Itoa(len(r.Outcomes)))
	}
	out := make([]record.Record, len(r.Outcomes))
	for i := range r.Outcomes {
		o := &r.Outcomes[i]
		var p *Planned
		if i < len(plan) {
			p = &plan[i]
		} else {
			p = &r.LoopRequests[i-len(plan)]
		}
		rec := record.Record{Key: strconv.Itoa(p.Key), Node: int(o.Node), Cost: 1, Sent: p.Send,
			Decided: o.Decided, Answered: o.Decided, Seen: record.SeenDecided | record.SeenTold}
		switch cfg.Deployment {
		case StoreClock, StoreWiped:
			rec.Told = cfg.StoreClockAt(o.Decided)
		case GetSet:
			rec.Told = cfg.ClockAt(int(o.Node), o.Decided)
		default:
			rec.Told = p.Clock
		}
		switch {
		case o.Panicked:
			rec.Err = ErrPanicked
		case o.Failed:
			rec.Err = ErrAnswered
		default:
			rec.Answer = record.Answer{Decision: o.Decision(), Known: record.FieldsDecision}
		}
		out[i] = rec
	}
	return out, nil
}
