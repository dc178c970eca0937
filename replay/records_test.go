package replay_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/replay"
)

// A live run's calls become records as they were made: the node's told
// time, the whole decision or the error, the decision seen at the store's
// Ran where MONITOR found the call (the span widened to hold a Ran a few
// µs outside the call) and unseen where it did not; those MONITOR ordered
// ranked from 1 by when they ran, whatever other commands came between.
func TestLiveRecordingsAreRecords(t *testing.T) {
	boom := errors.New("store down")
	rec := &replay.LiveRecording{Order: "MONITOR", Calls: []replay.Call{
		{Plan: model.Planned{Key: 3, Node: 1}, Sent: 100, Returned: 900, Told: 60_100, Seq: 5, Ran: 400,
			Decision: algos.Decision{Allowed: true, Remaining: 7, Reset: 80_000}},
		{Plan: model.Planned{Key: 3, Node: 0}, Sent: 1_000, Returned: 1_500, Told: 1_000, Seq: 9, Ran: 997,
			Decision: algos.Decision{RetryAfter: 9_000, Reset: 9_000}},
		{Plan: model.Planned{Key: 4, Node: 2}, Sent: 2_000, Returned: 2_600, Told: 2_000, Err: boom},
	}}
	got := rec.Records()
	want := []record.Record{
		{Key: "3", Node: 1, Cost: 1, Sent: 100, Decided: 400, Answered: 900, Told: 60_100, Order: 1, Seen: record.SeenDecided | record.SeenTold | record.SeenOrder,
			Answer: record.Answer{Decision: algos.Decision{Allowed: true, Remaining: 7, Reset: 80_000}, Known: record.FieldsDecision}},
		{Key: "3", Node: 0, Cost: 1, Sent: 997, Decided: 997, Answered: 1_500, Told: 1_000, Order: 2, Seen: record.SeenDecided | record.SeenTold | record.SeenOrder,
			Answer: record.Answer{Decision: algos.Decision{RetryAfter: 9_000, Reset: 9_000}, Known: record.FieldsDecision}},
		{Key: "4", Node: 2, Cost: 1, Sent: 2_000, Answered: 2_600, Told: 2_000, Seen: record.SeenTold, Err: boom},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records for %d calls", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d's record\n %+v\nwant\n %+v", i, got[i], want[i])
		}
	}
}

// A played case's requests become records decided when Redis (GetSet: the
// node) decided, told what the algorithm was told, with the verdict only,
// ranked by when Redis ran their scripts (its order within one µs); under
// GetSet, whose nodes decide on copies, unranked.
func TestPlayedCasesAreRecords(t *testing.T) {
	rec := &replay.Recording{Played: []replay.Played{
		{Plan: model.Planned{Key: 0, Node: 1}, Sent: 50, Told: 1_000_050, Ran: 80, Seq: 7, Decided: 80, Admitted: true},
		{Plan: model.Planned{Key: 1, Node: 0}, Sent: 60, Told: 60, Ran: 59, Seq: 3, Decided: 59},
		{Plan: model.Planned{Key: 1, Node: 2}, Sent: 61, Told: 61, Ran: 59, Seq: 2, Decided: 59},
	}}
	seen := record.SeenDecided | record.SeenTold | record.SeenOrder
	want := []record.Record{
		{Key: "0", Node: 1, Cost: 1, Sent: 50, Decided: 80, Answered: 80, Told: 1_000_050, Order: 3, Seen: seen, Answer: record.Answer{Decision: algos.Decision{Allowed: true}}},
		{Key: "1", Cost: 1, Sent: 59, Decided: 59, Answered: 59, Told: 60, Order: 2, Seen: seen},
		{Key: "1", Node: 2, Cost: 1, Sent: 59, Decided: 59, Answered: 59, Told: 61, Order: 1, Seen: seen},
	}
	if got := rec.Records(); !slices.Equal(got, want) {
		t.Errorf("records\n %+v\nwant\n %+v", got, want)
	}
	rec.Case.Deployment = model.GetSet
	for i := range want {
		want[i].Order, want[i].Seen = 0, record.SeenDecided|record.SeenTold
	}
	if got := rec.Records(); !slices.Equal(got, want) {
		t.Errorf("GetSet: records\n %+v\nwant\n %+v", got, want)
	}
}
