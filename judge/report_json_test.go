package judge

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
)

// A verdict's JSON is its row's numbers and each breach with its first
// record; a record's counts the target did not state are null, not 0.
func TestVerdictJSONIsItsRow(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	recs, _ := run(1, algos.TokenBucket, l, 3, 10*ms, 3*algos.Second, 5*ms, 5*ms)
	v := Records(recs, algos.BucketPromise(l), l)
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
	br, _ := v.Caught(breach.OverAdmission)
	first := got.Breaches[0].First
	if got.Breaches[0].Kind != "over-admission" || got.Breaches[0].Count != br.Count ||
		first["sent_us"] != float64(br.First.Sent) || first["allowed"] != true || first["limit"] != nil {
		t.Errorf("breach %+v, the verdict's %+v (the record states no limit: null)", got.Breaches[0], br)
	}
}
