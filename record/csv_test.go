package record_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// The CSV form holds the same records as the JSON lines: what WriteCSV
// writes, ReadCSV reads back as it was, as ReadJSONL reads back the JSON.
func TestCSVReadsBackAsWritten(t *testing.T) {
	recs := []record.Record{
		{Key: "user, 7", Node: 2, Cost: 3, Sent: 100, Decided: 140, Told: 60_000_140, Answered: 180, Order: 7, Seen: record.SeenDecided | record.SeenTold | record.SeenOrder,
			Answer: record.Answer{Decision: algos.Decision{Allowed: true, Remaining: 4, Reset: 900}, Limit: 10, Known: record.FieldLimit | record.FieldRemaining | record.FieldReset, Delta: record.FieldReset}},
		{Key: "ключ \"q\"", Sent: 200, Answered: 200, Status: 429, Answer: record.Answer{Decision: algos.Decision{RetryAfter: 1_000_000}, Known: record.FieldRetryAfter, Malformed: "X-RateLimit-Reset: \"soon\""}},
		{Key: "both", Sent: 250, Answered: 260, Status: 429, Answer: record.Answer{Decision: algos.Decision{Reset: 2_000_000, RetryAfter: 1_000_000}, Known: record.FieldsDecision, Delta: record.FieldReset | record.FieldRetryAfter}},
		{Key: "b", Node: 1, Sent: 300, Answered: 9_000, Err: errors.New("context deadline exceeded")},
	}
	readBack(t, "CSV", recs, record.WriteCSV, record.ReadCSV)
	readBack(t, "JSON lines", recs, record.WriteJSONL, record.ReadJSONL)
}

// A CSV of one's own names its columns in any order, may leave out the
// optional ones, and is refused at its first bad row with the row's line.
func TestCSVOfYourOwn(t *testing.T) {
	recs, err := record.ReadCSV(strings.NewReader("\ufeffanswered_us,key,sent_us,allowed,remaining\n30,a,10,true,4\n55,a,50,false,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Key != "a" || recs[0].Answered != 30 || !recs[0].Allowed || recs[0].Remaining != 4 || recs[0].Known != record.FieldRemaining ||
		recs[1].Allowed || recs[1].Known != 0 || recs[1].Seen != 0 {
		t.Errorf("records %+v", recs)
	}
	// The delay columns are optional too: left out, empty or false, no
	// wait is known to be a delay.
	recs, err = record.ReadCSV(strings.NewReader("key,sent_us,answered_us,allowed,reset_us,retry_after_us,reset_is_delay,retry_after_is_delay\n" +
		"a,1,2,false,2000000,1000000,true,\na,3,4,false,2000000,1000000,false,TRUE\n"))
	if err != nil || len(recs) != 2 || recs[0].Delta != record.FieldReset || recs[1].Delta != record.FieldRetryAfter {
		t.Errorf("records %+v, %v: want the Reset a delay, then the Retry-After", recs, err)
	}
	for _, c := range []struct{ file, want string }{
		{"", "line 1: empty"},
		{"key,sent_us,answered_us,remainig\n", `line 1: column "remainig" is not one of`},
		{"key,key,sent_us,answered_us\n", `line 1: column "key" twice`},
		{"key,sent_us\n", "line 1: no answered_us column"},
		{"key,sent_us,answered_us,allowed\na,1,2,true\na,x,2,true\n", `line 3: sent_us "x" is not an integer`},
		{"key,sent_us,answered_us,allowed\na,1,2,yes\n", `line 2: allowed "yes" is neither true nor false`},
		{"key,sent_us,answered_us,allowed\na,5,2,true\n", "line 2: answered_us 2 is before sent_us 5"},
		{"key,sent_us,answered_us,allowed\n,1,2,true\n", "line 2: no key"},
		{"key,sent_us,answered_us\na,1,2\n", "line 2: neither allowed nor error"},
		{"key,sent_us,answered_us,allowed\na,1,2,true,extra\n", "line 2"},
		{"key,sent_us,answered_us,allowed,reset_us,reset_is_delay\na,1,2,true,5,yes\n", `line 2: reset_is_delay "yes" is neither true nor false`},
		{"key,sent_us,answered_us,allowed,retry_after_is_delay\na,1,2,false,true\n", "line 2: retry_after_is_delay is true but retry_after_us is not stated"},
		{"key,sent_us,answered_us,allowed,order\na,1,2,false,4\n", "line 2: order is given but decided_us is not"},
	} {
		recs, err := record.ReadCSV(strings.NewReader(c.file))
		var pe *record.ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "record: "+c.want) {
			t.Errorf("%q: error %v, want a *ParseError saying \"record: %s\"", c.file, err, c.want)
		}
		if recs != nil {
			t.Errorf("%q: %d records returned with the error", c.file, len(recs))
		}
	}
}
