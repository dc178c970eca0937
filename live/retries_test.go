package live

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// A denied retry is a breach only when it is certain: the retry was
// decided after the wait its denial named, and nothing else of the key
// could have been decided between the two.
func TestRetryDeniedOnlyWhenCertain(t *testing.T) {
	denied := func(sent, answered, retry int64) record.Record {
		return record.Record{Key: "k", Sent: sent, Answered: answered,
			Answer: record.Answer{Decision: algos.Decision{RetryAfter: retry}, Known: record.FieldsDecision}}
	}
	admitted := func(sent, answered int64) record.Record {
		return record.Record{Key: "k", Sent: sent, Answered: answered, Answer: record.Answer{Decision: algos.Decision{Allowed: true}, Known: record.FieldsDecision}}
	}
	seen := func(r record.Record, at int64) record.Record {
		r.Decided, r.Seen = at, record.SeenDecided
		return r
	}
	for _, c := range []struct {
		name string
		recs []record.Record
		want int64
	}{
		{"a retry after the wait, denied", []record.Record{admitted(0, 10), denied(20, 30, 100), denied(130, 140, 100)}, 1},
		{"every retry after its wait, denied", []record.Record{denied(20, 30, 100), denied(130, 140, 100), denied(240, 250, 100)}, 2},
		{"a retry after the wait, admitted", []record.Record{denied(20, 30, 100), admitted(130, 140)}, 0},
		{"a retry sent before the wait was over", []record.Record{denied(20, 30, 100), denied(129, 140, 100)}, 0},
		{"another request in flight over the denial", []record.Record{admitted(15, 25), denied(20, 30, 100), denied(130, 140, 100)}, 0},
		{"another request in flight over the retry", []record.Record{denied(20, 30, 100), denied(130, 140, 100), admitted(135, 150)}, 0},
		{"no Retry-After stated", []record.Record{{Key: "k", Sent: 20, Answered: 30, Answer: record.Answer{Known: record.FieldRemaining}}, denied(130, 140, 100)}, 0},
		{"an error between them may have been decided", []record.Record{denied(20, 30, 100), {Key: "k", Sent: 40, Answered: 50, Err: ErrInFlight}, denied(130, 140, 100)}, 0},
		{"seen decisions: read at their instants", []record.Record{seen(denied(0, 200, 100), 10), seen(denied(105, 300, 100), 110)}, 1},
	} {
		if got := judgeRetries(c.recs); got.count != c.want {
			t.Errorf("%s: %d denied retries, want %d (%s)", c.name, got.count, c.want, got.why)
		}
	}
}
