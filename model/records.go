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
// client cannot, so every record has its Decided, Told and Order seen:
//
//   - Key is the key's number in decimal, Cost 1, Sent the true send time;
//   - Decided is Outcome.Decided, and Answered is Decided too: the model
//     does not draw the way back of an open-loop request, and nothing a
//     judge reads depends on it;
//   - Told is Outcome.Told, the time the limiter was told or read, as the
//     run carried it (Outcome says which clock each deployment reads);
//   - Order ranks the run's decisions by Decided, those of one µs in the
//     order the run made them (Result.Order);
//   - the answer states Remaining, Reset and Retry-After
//     (record.FieldsDecision), and an error is ErrAnswered or ErrPanicked.
//
// It returns the error of a Config that does not validate.
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
// name every key of the run. Each record's Told is its Outcome's, as the
// run carried it.
func (r *Result) AllRecords(cfg Config, names []string) (iter.Seq2[int, record.Record], error) {
	if _, err := cfg.validate(); err != nil {
		return nil, err
	}
	static := len(cfg.Requests)
	if n := static + len(r.LoopRequests); n != len(r.Outcomes) {
		return nil, errors.New("model: Records: the Config has " + strconv.Itoa(n) + " requests, the run " + strconv.Itoa(len(r.Outcomes)))
	}
	if names != nil && len(names) < len(r.Keys) {
		return nil, errors.New("model: Records: " + strconv.Itoa(len(names)) + " names for the run's " + strconv.Itoa(len(r.Keys)) + " keys")
	}
	ranks := r.decisionRanks()
	return func(yield func(int, record.Record) bool) {
		for i := range r.Outcomes {
			key, send := 0, int64(0)
			if i < static {
				key, send = cfg.Requests[i].Key, cfg.Requests[i].Sent
			} else {
				key, send = r.LoopRequests[i-static].Key, r.LoopRequests[i-static].Sent
			}
			rec := recordOf(&r.Outcomes[i], key, send, names)
			if ranks[i] > 0 { // every request is decided; a rank is never guessed
				rec.Order, rec.Seen = ranks[i], rec.Seen|record.SeenOrder
			}
			if !yield(i, rec) {
				return
			}
		}
	}, nil
}

// decisionRanks is, per Outcome, its rank among the run's decisions
// (record.Ranks): by Decided, those of one µs in Result.Order's order
// (which is by Decided already in every deployment but GetSet).
func (r *Result) decisionRanks() []int64 {
	place := make([]int64, len(r.Outcomes)) // from 1 in Result.Order; 0 for none
	for k, i := range r.Order {
		place[i] = int64(k + 1)
	}
	return record.Ranks(len(r.Outcomes), func(i int) (int64, int64, bool) { return r.Outcomes[i].Decided, place[i], place[i] > 0 })
}

// recordOf is the record of outcome o of the request for key sent at send.
func recordOf(o *Outcome, key int, send int64, names []string) record.Record {
	name := ""
	if names != nil {
		name = names[key]
	} else {
		name = strconv.Itoa(key)
	}
	rec := record.Record{Key: name, Node: int(o.Node), Cost: 1, Sent: send, Told: o.Told,
		Decided: o.Decided, Answered: o.Decided, Seen: record.SeenDecided | record.SeenTold}
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
