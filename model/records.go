package model

import (
	"errors"
	"iter"
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
	all, err := r.AllRecords(cfg, nil)
	if err != nil {
		return nil, err
	}
	out := make([]record.Record, len(r.Outcomes))
	for i, rec := range all {
		out[i] = rec
	}
	return out, nil
}

// AllRecords is Records one record at a time, each made as it is asked
// for: the index of its Outcome and its record, in Outcome order, so that
// a run too large to hold as records (package capacity's traces) can be
// measured from them. names, when not nil, names the keys (names[k] is the
// Key of key k's records) instead of their numbers in decimal; it must
// name every key of the run. An ideal run's records are made without
// planning it again.
func (r *Result) AllRecords(cfg Config, names []string) (iter.Seq2[int, record.Record], error) {
	if _, err := cfg.validate(); err != nil {
		return nil, err
	}
	var plan []Planned // nil for Ideal, whose plan is its requests
	if cfg.Deployment != Ideal {
		plan = make([]Planned, len(cfg.Requests))
		cfg.plan(plan)
	}
	static := len(cfg.Requests)
	if n := static + len(r.LoopRequests); n != len(r.Outcomes) {
		return nil, errors.New("model: Records: the Config has " + strconv.Itoa(n) + " requests, the run " + strconv.Itoa(len(r.Outcomes)))
	}
	if names != nil && len(names) < len(r.Keys) {
		return nil, errors.New("model: Records: " + strconv.Itoa(len(names)) + " names for the run's " + strconv.Itoa(len(r.Keys)) + " keys")
	}
	return func(yield func(int, record.Record) bool) {
		for i := range r.Outcomes {
			var p Planned
			switch {
			case i >= static:
				p = r.LoopRequests[i-static]
			case plan == nil:
				q := cfg.Requests[i]
				p = Planned{Key: q.Key, Send: q.Send, Clock: q.Send}
			default:
				p = plan[i]
			}
			if !yield(i, recordOf(&cfg, &r.Outcomes[i], &p, names)) {
				return
			}
		}
	}, nil
}

// recordOf is the record of outcome o of request p.
func recordOf(cfg *Config, o *Outcome, p *Planned, names []string) record.Record {
	key := ""
	if names != nil {
		key = names[p.Key]
	} else {
		key = strconv.Itoa(p.Key)
	}
	rec := record.Record{Key: key, Node: int(o.Node), Cost: 1, Sent: p.Send,
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
	return rec
}
