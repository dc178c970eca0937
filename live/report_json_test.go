package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
)

// A verdict's JSON is its row's numbers and each breach with its first
// record; a record's counts the target did not state are null, not 0.
func TestVerdictJSONIsItsRow(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	recs, _ := run(1, algos.TokenBucket, l, 3, 10*ms, 3*algos.Second, 5*ms, 5*ms)
	v := Judge(recs, algos.BucketPromise(l), l)
	var b bytes.Buffer
	if err := v.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema                            string
		Offered, Admitted, Denied, Failed int
		Most, Allowed                     int64
		Clean                             bool
		Breaches                          []struct {
			Kind  string
			Count int64
			First map[string]any
		}
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != Schema || got.Offered != v.Offered || got.Admitted != v.Admitted || got.Denied != v.Denied ||
		got.Most != v.Most || got.Allowed != v.Allowed || got.Clean || len(got.Breaches) != len(v.Breaches) {
		t.Fatalf("JSON %+v of the verdict\n%s", got, v)
	}
	br, _ := v.Caught(OverAdmission)
	first := got.Breaches[0].First
	if got.Breaches[0].Kind != "over-admission" || got.Breaches[0].Count != br.Count ||
		first["sent_us"] != float64(br.First.Sent) || first["allowed"] != true || first["limit"] != nil {
		t.Errorf("breach %+v, the verdict's %+v (the record states no limit: null)", got.Breaches[0], br)
	}
}

// A run's records are JSON Lines under a line naming their schema, one per
// record in order; an error record has its error and no answer.
func TestRecordsAreJSONLines(t *testing.T) {
	recs := []Record{
		{Key: "a", Node: 1, Sent: 10, Answered: 25, Status: 429, Answer: Answer{Decision: algos.Decision{RetryAfter: 500}, Known: FieldRetryAfter | FieldRemaining}},
		{Key: "b", Sent: 30, Answered: 90, Err: errors.New("timeout")},
	}
	var b bytes.Buffer
	if err := WriteRecords(&b, recs); err != nil {
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
	if len(lines) != 3 || lines[0]["schema"] != RecordSchema {
		t.Fatalf("lines %v, want the schema's and two records", lines)
	}
	a, e := lines[1], lines[2]
	if a["key"] != "a" || a["node"] != 1.0 || a["answered_us"] != 25.0 || a["allowed"] != false || a["retry_after_us"] != 500.0 ||
		a["remaining"] != 0.0 || a["reset_us"] != nil || a["limit"] != nil || a["status"] != 429.0 {
		t.Errorf("record %v", a)
	}
	if e["error"] != "timeout" || e["allowed"] != nil || e["sent_us"] != 30.0 {
		t.Errorf("error record %v", e)
	}
}
