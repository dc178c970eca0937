package httpcheck_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/httpcheck"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/record"
)

// jsonSaysWhatTheReportSays holds a report's JSON to the report: its
// verdict, its broken rules, each breach's rule and exchanges by number,
// every exchange's status and headers, and the live judge's verdict, each
// of its breaches' first record a line that record.ReadJSONL reads back
// as the record the judge named.
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
		Live struct {
			Promise       string
			Most, Allowed int64
			Clean         bool
			Unjudged      *string
			Breaches      []struct {
				Kind  string
				Count int64
				Why   string
				First json.RawMessage
			}
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
	lv, v := doc.Live, r.Live
	if lv.Promise != v.Promise || lv.Most != v.Most || lv.Allowed != v.Allowed || lv.Clean != v.Clean() ||
		(lv.Unjudged == nil) != (v.Unjudged == "") || lv.Unjudged != nil && *lv.Unjudged != v.Unjudged || len(lv.Breaches) != len(v.Breaches) {
		t.Fatalf("the JSON's live verdict %+v, the report's\n%s", lv, v)
	}
	for i, br := range v.Breaches {
		got := lv.Breaches[i]
		if got.Kind != br.Kind.String() || got.Count != br.Count || got.Why != br.Why {
			t.Errorf("live breach %d: JSON %s %d %q, report %s %d %q", i, got.Kind, got.Count, got.Why, br.Kind, br.Count, br.Why)
		}
		var line bytes.Buffer // a line of the record file is compact JSON
		if err := json.Compact(&line, got.First); err != nil {
			t.Fatal(err)
		}
		recs, err := record.ReadJSONL(strings.NewReader(`{"schema":"` + record.Schema + `"}` + "\n" + line.String() + "\n"))
		if err != nil || len(recs) != 1 {
			t.Errorf("live breach %d: its first record %s does not read as a record line: %v", i, got.First, err)
			continue
		}
		want := br.First
		if want.Err != nil {
			if recs[0].Err == nil || recs[0].Err.Error() != want.Err.Error() {
				t.Errorf("live breach %d: first record's error %v, report's %v", i, recs[0].Err, want.Err)
			}
			recs[0].Err, want.Err = nil, nil
		}
		if !reflect.DeepEqual(recs[0], want) {
			t.Errorf("live breach %d: first record reads back as\n %+v\nthe report's\n %+v", i, recs[0], want)
		}
	}
}

// A check whose contract is kept but whose live judge catches a breach
// says so in its JSON: ok false, no rule broken, and the live breach with
// its first record as a record line. The planted Reset is whole seconds, a
// second past the longest that Limit per Window as aligned windows takes
// to idle (2 Windows), which the live judge convicts only because it was
// stated as a delay: the JSON's first record says reset_is_delay, so a
// judge of it alone convicts it too, and would not without.
func TestTheJSONCarriesTheLiveVerdict(t *testing.T) {
	t.Parallel() // its own servers; overlaps the other checks' waiting
	l := algos.MustLimit(10, 2*algos.Second, 10)
	h, _ := reference(t, algos.TokenBucket, l)
	late := rewrite(h, func(_, _ int, h http.Header) { h.Set(httpcheck.HeaderReset, "5") })
	r := finished(t, started(t, late, httpcheck.Options{Window: 2 * time.Second}))
	b, caught := r.Live.Caught(breach.ResetPastIdle)
	if !caught || len(r.Breaches) != 0 || r.OK() {
		t.Fatalf("want the contract kept and the live judge to catch a Reset past idle:\n%s", written(t, r))
	}
	jsonSaysWhatTheReportSays(t, r)
	var out bytes.Buffer
	if err := r.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OK     bool
		Broken []string
		Live   struct {
			Breaches []struct {
				Kind  string
				First map[string]any
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(doc.Live.Breaches, func(x struct {
		Kind  string
		First map[string]any
	}) bool {
		return x.Kind == breach.ResetPastIdle.String()
	})
	if doc.OK || len(doc.Broken) != 0 || i < 0 {
		t.Fatalf("the JSON says ok %v, broken %v, live breaches %+v", doc.OK, doc.Broken, doc.Live.Breaches)
	}
	first := doc.Live.Breaches[i].First
	if first["reset_us"] != float64(5*algos.Second) || first["reset_is_delay"] != true || first["sent_us"] != float64(b.First.Sent) {
		t.Errorf("the Reset past idle's first record %v, the report's %v", first, b.First)
	}
	line, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := record.ReadJSONL(strings.NewReader(`{"schema":"` + record.Schema + `"}` + "\n" + string(line) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	promise := algos.AlignedWindowPromise(l)
	if _, ok := judge.Records(recs, promise, l).Caught(breach.ResetPastIdle); !ok {
		t.Errorf("the first record, read from the JSON and judged alone, is not caught: %v", recs[0])
	}
	recs[0].Delta = 0 // as a record that does not say how its Reset was stated
	if v := judge.Records(recs, promise, l); !v.Clean() {
		t.Errorf("without its delay the Reset 5 s was still caught, so the test shows nothing of the delay:\n%s", v)
	}
	t.Logf("the live verdict in the JSON:\n%s", out.String()[strings.Index(out.String(), `"live"`):])
}
