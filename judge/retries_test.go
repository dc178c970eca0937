package judge

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
		{"an error between them may have been decided", []record.Record{denied(20, 30, 100), {Key: "k", Sent: 40, Answered: 50, Err: errNotSent}, denied(130, 140, 100)}, 0},
		{"seen decisions: read at their instants", []record.Record{seen(denied(0, 200, 100), 10), seen(denied(105, 300, 100), 110)}, 1},
	} {
		if got, _ := judgeRetries(c.recs); got.count != c.want {
			t.Errorf("%s: %d denied retries, want %d (%s)", c.name, got.count, c.want, got.why)
		}
	}
}

// An early retry told to wait longer than its denial said is a breach only
// when certain past the rounding of both waits: decided before the
// earliest the first deadline can be, told a deadline later than the
// latest the first can be, nothing else of the key between them.
func TestRetryExtendedOnlyWhenCertain(t *testing.T) {
	denied := func(sent, answered, retry int64, delta bool) record.Record {
		r := record.Record{Key: "k", Sent: sent, Answered: answered,
			Answer: record.Answer{Decision: algos.Decision{RetryAfter: retry}, Known: record.FieldsDecision}}
		if delta {
			r.Delta = record.FieldRetryAfter
		}
		return r
	}
	admitted := func(sent, answered int64) record.Record {
		return record.Record{Key: "k", Sent: sent, Answered: answered, Answer: record.Answer{Decision: algos.Decision{Allowed: true}, Known: record.FieldsDecision}}
	}
	const ms = algos.Second / 1000
	for _, c := range []struct {
		name string
		recs []record.Record
		want int64
	}{
		// Denied by 30 ms until 153 ms at the latest (123 ms, rounded up to
		// the ms); the retry, decided by 60 ms, is told to wait until 206 ms
		// at the earliest.
		{"an early retry told a later deadline", []record.Record{denied(20*ms, 30*ms, 123*ms, true), denied(50*ms, 60*ms, 157*ms, true)}, 1},
		{"an early retry told the same deadline", []record.Record{denied(20*ms, 30*ms, 123*ms, true), denied(50*ms, 60*ms, 93*ms, true)}, 0},
		{"later only by the rounding of the waits", []record.Record{denied(20*ms, 30*ms, 1000*ms, true), denied(500*ms, 510*ms, 1000*ms, true)}, 0},
		// A whole-second instant may read 2 s early and a flight late: 5 s
		// is a deadline in (3 s, 5.01 s].
		{"an instant read from whole seconds may be 2 s off", []record.Record{denied(0, 10*ms, 5*algos.Second, false), denied(100*ms, 110*ms, 6*algos.Second, false)}, 0},
		{"and past that it is certain", []record.Record{denied(0, 10*ms, 5*algos.Second, false), denied(100*ms, 110*ms, 7*algos.Second, false)}, 1},
		{"a retry after the wait is breach.RetryDenied's", []record.Record{denied(20*ms, 30*ms, 100*ms, true), denied(130*ms, 140*ms, 500*ms, true)}, 0},
		{"the retry on another node, which may keep a state of its own", []record.Record{denied(20*ms, 30*ms, 123*ms, true), func() record.Record {
			r := denied(50*ms, 60*ms, 157*ms, true)
			r.Node = 1
			return r
		}()}, 0},
		{"another request in flight between them", []record.Record{denied(20*ms, 30*ms, 100*ms, true), admitted(55*ms, 58*ms), denied(50*ms, 60*ms, 150*ms, true)}, 0},
		{"the retry's wait not stated", []record.Record{denied(20*ms, 30*ms, 100*ms, true), {Key: "k", Sent: 50 * ms, Answered: 60 * ms, Answer: record.Answer{Known: record.FieldRemaining}}}, 0},
	} {
		if _, got := judgeRetries(c.recs); got.count != c.want {
			t.Errorf("%s: %d extended retries, want %d (%s)", c.name, got.count, c.want, got.why)
		}
	}
}
