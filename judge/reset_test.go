package judge

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// A denial at a Reset is a breach only when it is certain: every request
// was sent from the instant the Reset named, nothing else of the key could
// be decided between, and more were denied than an idle key may deny.
func TestResetDeniedOnlyWhenCertain(t *testing.T) {
	answer := func(sent, answered int64, allowed bool, reset int64) record.Record {
		r := record.Record{Key: "k", Sent: sent, Answered: answered, Answer: record.Answer{Decision: algos.Decision{Allowed: allowed, Reset: reset}, Known: record.FieldsDecision}}
		if !allowed {
			r.RetryAfter = reset
		}
		return r
	}
	admit := func(sent, answered int64) record.Record { return answer(sent, answered, true, 50) }
	deny := func(sent, answered int64) record.Record { return answer(sent, answered, false, 50) }
	at := func(r record.Record, t int64) record.Record {
		r.Decided, r.Seen = t, record.SeenDecided
		return r
	}
	noReset := admit(5, 30)
	noReset.Known = record.FieldRemaining
	failed := deny(110, 120)
	failed.Err = errNotSent
	costly := deny(110, 120)
	costly.Cost = 2
	for _, c := range []struct {
		name   string
		recs   []record.Record
		n      int64
		spread int64
		want   int64
	}{
		{"a denial at the Reset", []record.Record{answer(0, 10, true, 100), deny(110, 120)}, 1, 0, 1},
		{"a denial sent before the Reset", []record.Record{answer(0, 10, true, 100), deny(109, 120)}, 1, 0, 0},
		{"a burst of three, the fourth denied", []record.Record{answer(0, 10, true, 100), admit(110, 115), admit(116, 118), admit(119, 120), deny(121, 125)}, 3, 0, 0},
		{"a burst of three, the third denied", []record.Record{answer(0, 10, true, 100), admit(110, 115), admit(116, 118), deny(119, 120), deny(121, 125)}, 3, 0, 1},
		{"three in flight at once, one denied", []record.Record{answer(0, 10, true, 100), admit(110, 130), deny(111, 131), admit(112, 129)}, 3, 0, 1},
		{"three in flight at once, one denied, an idle key grants two", []record.Record{answer(0, 10, true, 100), admit(110, 130), deny(111, 131), admit(112, 129)}, 2, 0, 0},
		{"another request in flight over the Reset", []record.Record{answer(0, 10, true, 100), admit(5, 200), deny(210, 220)}, 1, 0, 0},
		{"the answer naming a later Reset may have been decided last", []record.Record{answer(0, 20, true, 50), answer(5, 30, true, 200), deny(100, 110)}, 1, 0, 0},
		{"the latest decided named the Reset", []record.Record{answer(0, 20, true, 50), answer(25, 30, true, 20), deny(60, 70)}, 1, 0, 1},
		{"a request that may have been decided last named none", []record.Record{answer(0, 20, true, 50), noReset, deny(100, 110)}, 1, 0, 0},
		{"an error at the Reset is no denial", []record.Record{answer(0, 10, true, 100), failed}, 1, 0, 0},
		{"a request of cost 2 is not counted", []record.Record{answer(0, 10, true, 100), costly}, 1, 0, 0},
		{"decisions at one instant, any of them the last", []record.Record{at(answer(0, 0, true, 100), 0), at(answer(0, 0, true, 300), 0), at(deny(250, 250), 250)}, 1, 0, 0},
		{"decisions at one instant, denied after the latest Reset", []record.Record{at(answer(0, 0, true, 100), 0), at(answer(0, 0, true, 300), 0), at(deny(300, 300), 300)}, 1, 0, 1},
		{"clocks apart: the first request only", []record.Record{answer(0, 10, true, 100), admit(110, 115), deny(116, 120)}, 3, 1, 0},
		{"clocks apart: a first request denied", []record.Record{answer(0, 10, true, 100), deny(111, 115)}, 3, 1, 1},
		{"clocks apart: the Reset moves by the spread", []record.Record{answer(0, 10, true, 100), deny(110, 115)}, 3, 1, 0},
		{"every Reset disproved is counted", []record.Record{answer(0, 10, true, 100), deny(110, 120), deny(170, 180)}, 1, 0, 2},
	} {
		got := judgeResetDenied(c.recs, c.n, c.spread)
		if got.count != c.want {
			t.Errorf("%s: %d Resets disproved, want %d (%s)", c.name, got.count, c.want, got.why)
		}
		if got.count > 0 && (got.first.Allowed || !strings.Contains(got.why, "idle again by")) {
			t.Errorf("%s: first %v, why %q", c.name, got.first, got.why)
		}
	}
}
