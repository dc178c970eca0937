package capacity_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/capacity"
	"github.com/overshoot-go/overshoot/limiter"
)

// capacityDoc reads back the parts of the capacity schema these tests hold.
type capacityDoc struct {
	Schema string `json:"schema"`
	Trace  struct {
		Requests    int   `json:"requests"`
		OfferedCost int64 `json:"offered_cost"`
	} `json:"trace"`
	Results []resultDoc `json:"results"`
	Sweep   *struct {
		BudgetPct float64 `json:"budget_pct"`
		Rows      []struct {
			Value       int64     `json:"value"`
			RejectedPct float64   `json:"rejected_pct"`
			Meets       bool      `json:"meets"`
			Result      resultDoc `json:"result"`
		} `json:"rows"`
		Tightest *int64 `json:"tightest"`
	} `json:"sweep"`
}

type resultDoc struct {
	Limiter          string   `json:"limiter"`
	Accepted         int64    `json:"accepted"`
	Rejected         int64    `json:"rejected"`
	AcceptPct        *float64 `json:"accept_pct"`
	MostIn1s         int64    `json:"max_accepted_1s"`
	FirstRejectionUS *int64   `json:"first_rejection_us"`
	Jain             float64  `json:"jain"`
	RetryAfter       *struct {
		P99US int64 `json:"p99_us"`
	} `json:"retry_after"`
	Wait *struct {
		N     int64 `json:"n"`
		MaxUS int64 `json:"max_us"`
	} `json:"wait"`
	Keys []struct {
		Accepted int64 `json:"accepted"`
	} `json:"keys"`
}

func decode(t *testing.T, b *bytes.Buffer) capacityDoc {
	t.Helper()
	var d capacityDoc
	if err := json.Unmarshal(b.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Schema != capacity.Schema {
		t.Errorf("schema %q, want %q", d.Schema, capacity.Schema)
	}
	return d
}

// A comparison's JSON carries each limiter's measures as its run has them,
// a queueing limiter's wait among them, and nulls where nothing was
// measured.
func TestComparisonJSONIsTheRunsMeasures(t *testing.T) {
	tr := poisson(t, 40, 3, 20, 1)
	l := algos.MustLimit(10, algos.Second, 1)
	queue, err := algos.QueueingGCRA(algos.Second / 5)
	if err != nil {
		t.Fatal(err)
	}
	results, err := capacity.Compare(tr, limiter.FromAlgorithms(algos.GCRA, queue), l)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := capacity.WriteComparisonJSON(&b, tr, results); err != nil {
		t.Fatal(err)
	}
	d := decode(t, &b)
	if d.Trace.Requests != len(tr.Requests) || len(d.Results) != 2 {
		t.Fatalf("trace of %d requests, %d results", d.Trace.Requests, len(d.Results))
	}
	for i, got := range d.Results {
		m := results[i].Run
		if got.Limiter != results[i].Limiter || got.Accepted != m.Accepted || got.Rejected != m.Rejected ||
			got.AcceptPct == nil || *got.AcceptPct != 100*m.AcceptRatio || got.MostIn1s != m.MaxAccepted1s ||
			got.Jain != m.Jain || got.FirstRejectionUS == nil || *got.FirstRejectionUS != m.TimeToFirstRejection ||
			got.RetryAfter == nil || got.RetryAfter.P99US != m.RetryAfter.P99 || len(got.Keys) != len(m.Keys) {
			t.Errorf("result %d: %+v, the run's %+v", i, got, m)
		}
	}
	if d.Results[0].Wait != nil {
		t.Errorf("the GCRA held nothing, but its wait is %+v, not null", *d.Results[0].Wait)
	}
	if w := d.Results[1].Wait; w == nil || w.N != results[1].Run.Wait.N || w.MaxUS > algos.Second/5 || w.MaxUS == 0 {
		t.Errorf("the queue's wait %+v, its run's %+v (at most 200ms)", w, results[1].Run.Wait)
	}
}

// A sweep's JSON has a row per value and names the tightest that meets the
// budget, as its table does; none meeting it is null.
func TestSweepJSONNamesTheTightest(t *testing.T) {
	tr := poisson(t, 20, 2, 10, 3)
	for _, budget := range []float64{0.05, 0} {
		s := capacity.Sweep{Trace: tr, Setting: capacity.Limits(limiter.FromAlgorithm(algos.GCRA), algos.Second),
			Values: []int64{2, 5, 10, 20}, Budget: budget}
		r, err := s.Run()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		d := decode(t, &b)
		if d.Sweep == nil || len(d.Sweep.Rows) != len(s.Values) || d.Sweep.BudgetPct != 100*budget {
			t.Fatalf("budget %v: sweep %+v", budget, d.Sweep)
		}
		for i, row := range d.Sweep.Rows {
			want := r.Rows[i]
			if row.Value != want.Value || row.Meets != want.Meets || row.RejectedPct != 100*want.Result.RejectShare() ||
				row.Result.Accepted != want.Result.Run.Accepted {
				t.Errorf("budget %v, row %d: %+v, the table's %+v", budget, i, row, want)
			}
		}
		best, ok := r.Tightest()
		if ok != (d.Sweep.Tightest != nil) || ok && *d.Sweep.Tightest != best.Value {
			t.Errorf("budget %v: tightest %v, the table's %v (%v)", budget, d.Sweep.Tightest, best.Value, ok)
		}
	}
	if f := capacity.SchemaFields(); !slices.Contains(f, "sweep.rows[].result.wait.p99_us") {
		t.Errorf("the schema's fields miss the sweep rows' wait: %v", f)
	}
}

// The CSV is the JSON's results flattened: a header, then a row per limiter
// (a sweep's per value, led by its share refused and verdict), each as
// wide as the header.
func TestCSVHasARowPerResult(t *testing.T) {
	tr := poisson(t, 20, 2, 10, 3)
	results, err := capacity.Compare(tr, limiter.FromAlgorithms(algos.GCRA, algos.FixedWindow), algos.MustLimit(5, algos.Second, 5))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := capacity.WriteComparisonCSV(&b, tr, results); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "limiter" || rows[1][0] != "gcra" || rows[1][5] != strconv.FormatInt(results[0].Run.Accepted, 10) ||
		rows[2][6] != strconv.FormatInt(results[1].Run.Rejected, 10) {
		t.Fatalf("comparison CSV %v", rows)
	}
	s := capacity.Sweep{Trace: tr, Setting: capacity.Limits(limiter.FromAlgorithm(algos.GCRA), algos.Second), Values: []int64{2, 20}, Budget: 0.05}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if rows, err = csv.NewReader(&b).ReadAll(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "value" || rows[1][0] != "2" || rows[1][2] != strconv.FormatBool(r.Rows[0].Meets) ||
		rows[2][2] != strconv.FormatBool(r.Rows[1].Meets) || rows[1][2] == rows[2][2] {
		t.Fatalf("sweep CSV %v (the limit of 2 refuses too many, 20 fits)", rows)
	}
}
