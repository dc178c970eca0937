package httpcheck_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/overshoot-go/overshoot/httpcheck"
)

// jsonSaysWhatTheReportSays holds a report's JSON to the report: its
// verdict, its broken rules, each breach's rule and exchanges by number,
// and every exchange's status and headers.
func jsonSaysWhatTheReportSays(t *testing.T, r *httpcheck.Report) {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema           string
		Burst            int
		Admitted, Denied int
		OK               bool
		Broken           []httpcheck.Rule
		Breaches         []struct {
			Rule     httpcheck.Rule
			Why      string
			Exchange int
			Previous *int
		}
		Exchanges []struct {
			N          int
			Status     int
			Remaining  string
			RetryAfter string `json:"retry_after"`
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != httpcheck.Schema || doc.OK != r.OK() || !slices.Equal(doc.Broken, r.Broken()) || doc.Burst != r.Burst ||
		doc.Admitted != r.Admitted || doc.Denied != r.Denied || len(doc.Breaches) != len(r.Breaches) || len(doc.Exchanges) != len(r.Exchanges) {
		t.Fatalf("the JSON says\n%s\nof a report that broke %v with %d breaches over %d exchanges", b.String(), r.Broken(), len(r.Breaches), len(r.Exchanges))
	}
	for i, br := range r.Breaches {
		got := doc.Breaches[i]
		if got.Rule != br.Rule || got.Why != br.Why || got.Exchange != br.Exchange.N || (got.Previous == nil) != (br.Previous == nil) ||
			got.Previous != nil && *got.Previous != br.Previous.N {
			t.Errorf("breach %d: JSON %+v, report %+v", i, got, br)
		}
	}
	for i, e := range r.Exchanges {
		if got := doc.Exchanges[i]; got.N != e.N || got.Status != e.Status || got.Remaining != e.Remaining || got.RetryAfter != e.RetryAfter {
			t.Errorf("exchange %d: JSON %+v, report %+v", i, got, e)
		}
	}
}
