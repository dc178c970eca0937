package record_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// A run's records are JSON Lines under a line naming their schema, one per
// record in order; an error record has its error and no answer.
func TestRecordsAreJSONLines(t *testing.T) {
	recs := []record.Record{
		{Key: "a", Node: 1, Sent: 10, Answered: 25, Status: 429, Answer: record.Answer{Decision: algos.Decision{RetryAfter: 500}, Known: record.FieldRetryAfter | record.FieldRemaining,
			Delta: record.FieldRetryAfter | record.FieldReset}},
		{Key: "b", Sent: 30, Answered: 90, Err: errors.New("timeout")},
	}
	var b bytes.Buffer
	if err := record.WriteJSONL(&b, recs); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&b)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || lines[0]["schema"] != record.Schema {
		t.Fatalf("lines %v, want the schema's and two records", lines)
	}
	a, e := lines[1], lines[2]
	if a["key"] != "a" || a["node"] != 1.0 || a["answered_us"] != 25.0 || a["allowed"] != false || a["retry_after_us"] != 500.0 ||
		a["remaining"] != 0.0 || a["reset_us"] != nil || a["limit"] != nil || a["status"] != 429.0 {
		t.Errorf("record %v", a)
	}
	// Its Retry-After was stated as a delay; its Reset, not stated, is
	// marked nothing, whatever Delta says of it.
	if _, said := a["reset_is_delay"]; a["retry_after_is_delay"] != true || said {
		t.Errorf("record %v: want retry_after_is_delay true and no reset_is_delay", a)
	}
	if e["error"] != "timeout" || e["allowed"] != nil || e["sent_us"] != 30.0 {
		t.Errorf("error record %v", e)
	}
}

// What WriteJSONL writes, ReadJSONL reads back as it was: the answer's
// stated fields and only those, the times the producer saw and only
// those, the cost, the status, which waits were stated as delays and the
// error's text.
func TestRecordsReadBackAsWritten(t *testing.T) {
	recs := []record.Record{
		{Key: "user:7", Node: 2, Cost: 3, Sent: 100, Decided: 140, Told: 60_000_140, Answered: 180, Order: 7, Seen: record.SeenDecided | record.SeenTold | record.SeenOrder,
			Answer: record.Answer{Decision: algos.Decision{Allowed: true, Remaining: 4, Reset: 900}, Limit: 10, Known: record.FieldLimit | record.FieldRemaining | record.FieldReset, Delta: record.FieldReset}},
		{Key: "ключ", Sent: 200, Answered: 200, Status: 429, Answer: record.Answer{Decision: algos.Decision{RetryAfter: 1_000_000}, Known: record.FieldRetryAfter, Malformed: `X-RateLimit-Reset: "soon" is not a number`}},
		{Key: "both", Sent: 250, Answered: 260, Status: 429, Answer: record.Answer{Decision: algos.Decision{Reset: 2_000_000, RetryAfter: 1_000_000}, Known: record.FieldsDecision, Delta: record.FieldReset | record.FieldRetryAfter}},
		{Key: "b", Node: 1, Sent: 300, Answered: 9_000, Err: errors.New("context deadline exceeded")},
	}
	readBack(t, "JSON lines", recs, record.WriteJSONL, record.ReadJSONL)
}

// readBack writes recs in a form (write) and reads them back (read),
// failing t for every record that does not come back as written: its
// fields equal, its error the same text.
func readBack(t *testing.T, form string, recs []record.Record, write func(io.Writer, []record.Record) error, read func(io.Reader) ([]record.Record, error)) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b, recs); err != nil {
		t.Fatal(err)
	}
	got, err := read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("read %d records from %s, wrote %d", len(got), form, len(recs))
	}
	for i := range recs {
		want, have := recs[i], got[i]
		if (want.Err == nil) != (have.Err == nil) || want.Err != nil && want.Err.Error() != have.Err.Error() {
			t.Errorf("record %d: error %v read back from %s, wrote %v", i, have.Err, form, want.Err)
		}
		want.Err, have.Err = nil, nil
		if !reflect.DeepEqual(want, have) {
			t.Errorf("record %d read back from %s as\n %+v\nwrote\n %+v", i, form, have, want)
		}
	}
}

// A record's decision lies in [Decided, Decided] when its producer saw it,
// and anywhere in [Sent, Answered] when not.
func TestSpanIsTheDecisionWhenSeen(t *testing.T) {
	r := record.Record{Sent: 10, Decided: 15, Answered: 40}
	if from, to := r.Span(); from != 10 || to != 40 {
		t.Errorf("unseen decision: span [%d, %d], want [10, 40]", from, to)
	}
	r.Seen = record.SeenDecided
	if from, to := r.Span(); from != 15 || to != 15 {
		t.Errorf("seen decision: span [%d, %d], want [15, 15]", from, to)
	}
}

// A record file that breaks a rule is refused at its first bad line, with
// the line's number and the rule, and nothing read is returned.
func TestMalformedRecordFilesAreRefusedByLine(t *testing.T) {
	const head = `{"schema":"overshoot.record/v1"}` + "\n"
	ok := `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true}` + "\n"
	for _, c := range []struct{ file, want string }{
		{"", "line 1: empty"},
		{ok, "line 1: the first line must name the schema"},
		{`{"schema":"overshoot.record/v2"}` + "\n" + ok, `line 1: schema "overshoot.record/v2"`},
		{head + ok + "{not json\n", "line 3: invalid character"},
		{head + `{"node":0,"sent_us":1,"answered_us":2,"allowed":true}`, "line 2: no key"},
		{head + `{"key":"a","sent_us":1,"answered_us":2,"allowed":true}`, "line 2: no node"},
		{head + `{"key":"a","node":-1,"sent_us":1,"answered_us":2,"allowed":true}`, "line 2: no node, or a negative one"},
		{head + `{"key":"a","node":0,"answered_us":2,"allowed":true}`, "line 2: sent_us and answered_us are both needed"},
		{head + `{"key":"a","node":0,"sent_us":5,"answered_us":2,"allowed":true}`, "line 2: answered_us 2 is before sent_us 5"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2}`, "line 2: neither allowed nor error"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":false,"error":"x"}`, "line 2: both allowed and error"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"decided_us":3}`, "line 2: decided_us 3 is outside [sent_us 1, answered_us 2]"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"cost":0}`, "line 2: cost 0"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"decided_us":2,"order":0}`, "line 2: order 0: decisions are numbered from 1"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"order":3}`, "line 2: order is given but decided_us is not"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"reset_is_delay":true}`, "line 2: reset_is_delay is true but reset_us is not stated"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"reset_us":5,"retry_after_is_delay":true}`, "line 2: retry_after_is_delay is true but retry_after_us is not stated"},
		{head + `{"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":true,"reset_us":5,"reset_is_delay":"yes"}`, "line 2: json: cannot unmarshal string"},
		{head + "\n" + ok + strings.Repeat(" ", 1<<20+1), "line 4: a line longer than"},
	} {
		recs, err := record.ReadJSONL(strings.NewReader(c.file))
		var pe *record.ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "record: "+c.want) {
			t.Errorf("%.60q: error %v, want a *ParseError saying \"record: %s\"", c.file, err, c.want)
		}
		if recs != nil {
			t.Errorf("%.60q: %d records returned with the error", c.file, len(recs))
		}
	}
	if recs, err := record.ReadJSONL(strings.NewReader(head + "\n" + ok + ok)); err != nil || len(recs) != 2 {
		t.Errorf("a good file: %d records, %v; want 2, nil", len(recs), err)
	}
}

// A record prints on one line, with its decision time only when it was
// seen and is not the answer's.
func TestRecordStringSaysWhatWasSeen(t *testing.T) {
	r := record.Record{Key: "k", Node: 1, Sent: 1_000, Answered: 3_000, Answer: record.Answer{Decision: algos.Decision{Allowed: true, Remaining: 2}, Known: record.FieldRemaining}}
	if got, want := r.String(), "key k, node 1, sent +0.001000s, answered +0.003000s: admitted, Remaining 2"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.Decided, r.Seen = 2_000, record.SeenDecided
	if got := r.String(); !strings.Contains(got, "decided +0.002000s") {
		t.Errorf("%s: no decision time", got)
	}
}

// A file that does not say a wait was a delay (an older one, a tool's that
// does not know the field, or one that says null or false) reads with no
// wait marked a delay: the looser reading, which every judge allows for.
// Only true marks one.
func TestAWaitIsADelayOnlyWhereTheFileSaysSo(t *testing.T) {
	const head = `{"schema":"overshoot.record/v1"}` + "\n"
	const answer = `"key":"a","node":0,"sent_us":1,"answered_us":2,"allowed":false,"reset_us":2000000,"retry_after_us":1000000`
	for _, c := range []struct {
		name, line string
		want       record.Fields
	}{
		{"an older line", answer, 0},
		{"null", answer + `,"reset_is_delay":null,"retry_after_is_delay":null`, 0},
		{"false", answer + `,"reset_is_delay":false,"retry_after_is_delay":false`, 0},
		{"the Reset a delay", answer + `,"reset_is_delay":true`, record.FieldReset},
		{"both delays", answer + `,"reset_is_delay":true,"retry_after_is_delay":true`, record.FieldReset | record.FieldRetryAfter},
	} {
		recs, err := record.ReadJSONL(strings.NewReader(head + "{" + c.line + "}\n"))
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %d records, %v", c.name, len(recs), err)
		}
		if recs[0].Delta != c.want || recs[0].Known != record.FieldReset|record.FieldRetryAfter {
			t.Errorf("%s: Delta %b, Known %b; want Delta %b", c.name, recs[0].Delta, recs[0].Known, c.want)
		}
	}
}
