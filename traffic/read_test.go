package traffic_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

type reader func(*strings.Reader) (traffic.Trace, traffic.Info, error)

var (
	readCSV   = func(r *strings.Reader) (traffic.Trace, traffic.Info, error) { return traffic.ReadCSV(r) }
	readJSONL = func(r *strings.Reader) (traffic.Trace, traffic.Info, error) { return traffic.ReadJSONL(r) }
)

// Every malformed input is refused with its line, its column and its problem.
func TestMalformedInputNamesLineColumnAndProblem(t *testing.T) {
	for _, c := range []struct {
		name   string
		read   reader
		input  string
		line   int
		column string
		is     error
		says   string
	}{
		{"csv empty", readCSV, "", 0, "", traffic.ErrEmpty, "not even a header"},
		{"csv header only", readCSV, "timestamp,key\n", 1, "", traffic.ErrEmpty, "after the header"},
		{"csv no timestamp column", readCSV, "time,key\n1,a\n", 1, "timestamp", traffic.ErrMissingColumn, `header is "time,key"`},
		{"csv no key column", readCSV, "timestamp,user\n1,a\n", 1, "key", traffic.ErrMissingColumn, "missing required column"},
		{"csv column twice", readCSV, "timestamp,key,Timestamp\n1,a,2\n", 1, "timestamp", traffic.ErrDuplicateColumn, "twice"},
		{"csv timestamp not a number", readCSV, "timestamp,key\n1,a\nabc,b\n", 3, "timestamp", traffic.ErrNotNumber, `"abc" is not a number`},
		{"csv timestamp empty", readCSV, "timestamp,key\n,a\n", 2, "timestamp", traffic.ErrMissing, "missing"},
		{"csv timestamp negative", readCSV, "timestamp,key\n1,a\n-2.5,b\n", 3, "timestamp", traffic.ErrNegative, `"-2.5" is negative`},
		{"csv timestamp in ms", readCSV, "timestamp,key\n1700000000123,a\n", 2, "timestamp", traffic.ErrTooLarge, "milliseconds"},
		{"csv timestamp with a unit", readCSV, "timestamp,key\n12s,a\n", 2, "timestamp", traffic.ErrNotNumber, `"12s"`},
		{"csv cost not a number", readCSV, "key,cost,timestamp\na,two,1\n", 2, "cost", traffic.ErrNotNumber, `"two" is not a number`},
		{"csv cost 0", readCSV, "timestamp,key,cost\n1,a,1\n2,a,0\n", 3, "cost", traffic.ErrCostBelowOne, `cost "0" is below 1`},
		{"csv cost fractional", readCSV, "timestamp,key,cost\n1,a,1.5\n", 2, "cost", traffic.ErrNotWhole, "not a whole number"},
		{"csv cost negative", readCSV, "timestamp,key,cost\n1,a,-1\n", 2, "cost", traffic.ErrNegative, "negative"},
		{"csv duration negative", readCSV, "timestamp,key,duration\n1,a,0.5\n2,b,-0.1\n", 3, "duration", traffic.ErrNegative, `"-0.1" is negative`},
		{"csv duration not a number", readCSV, "timestamp,key,duration\n1,a,fast\n", 2, "duration", traffic.ErrNotNumber, `"fast"`},
		{"csv too few fields", readCSV, "timestamp,key,cost\n1,a,1\n2,b,1\n3,c\n", 4, "", traffic.ErrFieldCount, "2 where the header has 3"},
		{"csv too many fields", readCSV, "timestamp,key\n1,a,x\n", 2, "", traffic.ErrFieldCount, "3 where the header has 2"},
		{"csv empty key", readCSV, "timestamp,key\n1,a\n2,\n", 3, "key", traffic.ErrEmptyKey, "empty key"},
		{"csv key with a control character", readCSV, "timestamp,key\n1,\"a\tb\"\n", 2, "key", traffic.ErrKey, "control character"},
		{"csv key not UTF-8", readCSV, "timestamp,key\n1,a\xffb\n", 2, "key", traffic.ErrKey, "UTF-8"},
		{"csv key too long", readCSV, "timestamp,key\n1," + strings.Repeat("k", traffic.MaxKeyLen+1) + "\n", 2, "key", traffic.ErrKey, "longer than 4096"},
		{"csv bare quote", readCSV, "timestamp,key\n1,a\"b\n", 2, "", traffic.ErrSyntax, "bare"},
		{"csv lines counted past blanks", readCSV, "timestamp,key\n\n1,a\n\n\nx,b\n", 6, "timestamp", traffic.ErrNotNumber, `"x"`},
		{"csv lines counted inside quotes", readCSV, "timestamp,key,note\n1,a,\"two\nlines\"\nx,b,c\n", 4, "timestamp", traffic.ErrNotNumber, `"x"`},

		{"jsonl empty", readJSONL, "", 0, "", traffic.ErrEmpty, "no JSON object"},
		{"jsonl blank lines only", readJSONL, "\n  \n\n", 3, "", traffic.ErrEmpty, "no JSON object"},
		{"jsonl not JSON", readJSONL, `{"timestamp":1,"key":"a"}` + "\n{timestamp:2}\n", 2, "", traffic.ErrSyntax, "not a JSON object"},
		{"jsonl an array", readJSONL, "[1, \"a\"]\n", 1, "", traffic.ErrSyntax, "not a JSON object"},
		{"jsonl no timestamp", readJSONL, `{"key":"a"}`, 1, "timestamp", traffic.ErrMissing, "missing"},
		{"jsonl timestamp a string", readJSONL, `{"timestamp":"1700000000","key":"a"}`, 1, "timestamp", traffic.ErrNotNumber, "is a string"},
		{"jsonl timestamp negative", readJSONL, "\n\n" + `{"timestamp":-1,"key":"a"}`, 3, "timestamp", traffic.ErrNegative, "negative"},
		{"jsonl timestamp a bool", readJSONL, `{"timestamp":true,"key":"a"}`, 1, "timestamp", traffic.ErrNotNumber, "true"},
		{"jsonl no key", readJSONL, `{"timestamp":1}`, 1, "key", traffic.ErrMissing, "missing"},
		{"jsonl empty key", readJSONL, `{"timestamp":1,"key":""}`, 1, "key", traffic.ErrEmptyKey, "empty key"},
		{"jsonl key an object", readJSONL, `{"timestamp":1,"key":{}}`, 1, "key", traffic.ErrKey, "not a string"},
		{"jsonl key escaping a control", readJSONL, `{"timestamp":1,"key":"a\nb"}`, 1, "key", traffic.ErrKey, "control character"},
		{"jsonl key not UTF-8", readJSONL, "{\"timestamp\":1,\"key\":\"a\xffb\"}", 1, "key", traffic.ErrKey, "UTF-8"},
		{"jsonl cost 0", readJSONL, `{"timestamp":1,"key":"a","cost":0}`, 1, "cost", traffic.ErrCostBelowOne, "below 1"},
		{"jsonl cost a string", readJSONL, `{"timestamp":1,"key":"a","cost":"2"}`, 1, "cost", traffic.ErrNotNumber, "is a string"},
		{"jsonl cost fractional", readJSONL, `{"timestamp":1,"key":"a","cost":2.5}`, 1, "cost", traffic.ErrNotWhole, "whole"},
		{"jsonl duration negative", readJSONL, `{"timestamp":1,"key":"a","duration":-0.5}`, 1, "duration", traffic.ErrNegative, "negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := c.read(strings.NewReader(c.input))
			var pe *record.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if pe.Line != c.line || pe.Column != c.column || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) || !strings.HasPrefix(err.Error(), "traffic: ") {
				t.Errorf("got %q (line %d, column %q), want line %d, column %q, %v, saying \"traffic: …%s…\"",
					err, pe.Line, pe.Column, c.line, c.column, c.is, c.says)
			}
		})
	}
}

func TestOutOfOrderInputIsSortedStablyAndReported(t *testing.T) {
	csv := "timestamp,key\n3,a\n1,b\n2,a\n1,c\n"
	jsonl := `{"timestamp":3,"key":"a"}` + "\n\n" + `{"timestamp":1,"key":"b"}` + "\n" +
		`{"timestamp":2,"key":"a"}` + "\n" + `{"timestamp":1,"key":"c"}` + "\n"
	want := traffic.Trace{
		Keys: []string{"b", "c", "a"}, // numbered in time order, as canonical
		Requests: []traffic.TraceRequest{
			{Sent: 1_000_000, Key: 0, Cost: 1}, {Sent: 1_000_000, Key: 1, Cost: 1}, // equal times keep file order
			{Sent: 2_000_000, Key: 2, Cost: 1}, {Sent: 3_000_000, Key: 2, Cost: 1},
		},
	}
	for _, c := range []struct {
		name  string
		read  reader
		input string
		line  int
	}{{"csv", readCSV, csv, 3}, {"jsonl", readJSONL, jsonl, 3}} {
		tr, info, err := c.read(strings.NewReader(c.input))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tr, want) {
			t.Errorf("%s: got %+v, want %+v", c.name, tr, want)
		}
		if !info.Reordered || info.FirstOutOfOrder != c.line {
			t.Errorf("%s: info %+v, want reordered from line %d", c.name, info, c.line)
		}
	}
	_, info, err := traffic.ReadCSV(strings.NewReader("timestamp,key\n1,a\n1,b\n2,a\n"))
	if err != nil || info != (traffic.Info{}) {
		t.Errorf("in-order input: info %+v, err %v; want nothing to report", info, err)
	}
}

// Timestamps stay where they were: epoch µs exactly, never moved to zero,
// more than six decimals rounded half up.
func TestEpochTimestampsAreKeptExactly(t *testing.T) {
	for in, want := range map[string]int64{
		"1700000000.000001":       1_700_000_000_000_001,
		"1700000000.999999":       1_700_000_000_999_999,
		"1700000000":              1_700_000_000_000_000,
		"1700000000.1":            1_700_000_000_100_000,
		"1.7e9":                   1_700_000_000_000_000,
		"17000000000000001E-7":    1_700_000_000_000_000, // 1700000000.0000001: rounds down
		"1700000000.0000005":      1_700_000_000_000_001, // half rounds up
		"1700000000.0000004999":   1_700_000_000_000_000,
		"1700000000.9999995":      1_700_000_001_000_000, // and carries
		"0.000001":                1,
		"0":                       0,
		"253402300800":            traffic.MaxTime,
		"1700000000.123456000000": 1_700_000_000_123_456,
	} {
		for _, c := range []struct {
			name, input string
			read        reader
		}{
			{"csv", "timestamp,key\n" + in + ",a\n", readCSV},
			{"jsonl", `{"timestamp":` + in + `,"key":"a"}`, readJSONL},
		} {
			tr, _, err := c.read(strings.NewReader(c.input))
			if err != nil {
				t.Errorf("%s %s: %v", c.name, in, err)
				continue
			}
			if got := tr.Requests[0].Sent; got != want {
				t.Errorf("%s %s: %d µs, want %d", c.name, in, got, want)
			}
		}
	}
}

// The header is found by name, in any order and case, past a byte-order
// mark; other columns are ignored; empty optional fields take defaults;
// a quoted key may hold commas and quotes.
func TestCSVHeaderAndFieldsAsWritten(t *testing.T) {
	in := "\ufeffRegion, Duration ,KEY,Timestamp,cost\n" +
		"eu,0.25,alice,1700000000.5,3\n" +
		"us,,\"bob, \"\"the builder\"\"\",1700000001,\n"
	tr, _, err := traffic.ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := traffic.Trace{
		Keys: []string{"alice", `bob, "the builder"`},
		Requests: []traffic.TraceRequest{
			{Sent: 1_700_000_000_500_000, Key: 0, Cost: 3, Service: 250_000},
			{Sent: 1_700_000_001_000_000, Key: 1, Cost: 1, Service: 0},
		},
	}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("got %+v, want %+v", tr, want)
	}
}

func TestJSONLFieldsAsWritten(t *testing.T) {
	in := "{\"timestamp\":1700000000.5,\"key\":\"alice\",\"cost\":3,\"duration\":0.25,\"path\":\"/x\"}\r\n" +
		"\n" +
		`  {"key": 42, "timestamp": 1.7000000015e9, "cost": null, "duration": null}  ` + "\n" +
		`{"timestamp":1700000002,"key":"caf\u00e9 \"q\""}`
	tr, _, err := traffic.ReadJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := traffic.Trace{
		Keys: []string{"alice", "42", `café "q"`},
		Requests: []traffic.TraceRequest{
			{Sent: 1_700_000_000_500_000, Key: 0, Cost: 3, Service: 250_000},
			{Sent: 1_700_000_001_500_000, Key: 1, Cost: 1},
			{Sent: 1_700_000_002_000_000, Key: 2, Cost: 1},
		},
	}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("got %+v, want %+v", tr, want)
	}
}

// Write then read gives the identical Trace, in either format, for every
// profile (with epoch times, costs and service times) and for keys that
// need quoting or escaping.
func TestWriteThenReadIsIdentical(t *testing.T) {
	traces := map[string]traffic.Trace{}
	for name, s := range profiles() {
		s.Start, s.Seed = 1_700_000_000_000_001, 4
		traces[name] = generate(t, s)
	}
	traces["awkward keys"] = generate(t, traffic.TraceSpec{
		Profile:  traffic.Poisson{Rate: 100},
		Duration: sec,
		Keys:     traffic.Uniform(6).Named(`a,b`, `"quoted"`, `back\slash`, " lead", "ünï €", `\.`),
		Seed:     1,
	})
	for name, tr := range traces {
		for _, f := range []struct {
			format string
			write  func(*bytes.Buffer, traffic.Trace) error
			read   func(*bytes.Buffer) (traffic.Trace, traffic.Info, error)
		}{
			{"csv", func(b *bytes.Buffer, t traffic.Trace) error { return traffic.WriteCSV(b, t) },
				func(b *bytes.Buffer) (traffic.Trace, traffic.Info, error) { return traffic.ReadCSV(b) }},
			{"jsonl", func(b *bytes.Buffer, t traffic.Trace) error { return traffic.WriteJSONL(b, t) },
				func(b *bytes.Buffer) (traffic.Trace, traffic.Info, error) { return traffic.ReadJSONL(b) }},
		} {
			var b bytes.Buffer
			if err := f.write(&b, tr); err != nil {
				t.Fatalf("%s %s: %v", name, f.format, err)
			}
			back, info, err := f.read(&b)
			if err != nil {
				t.Fatalf("%s %s: %v", name, f.format, err)
			}
			if !reflect.DeepEqual(back, tr) || info.Reordered {
				t.Errorf("%s %s: read back differs (reordered %v)", name, f.format, info.Reordered)
			}
		}
	}
}

// A Trace built by hand, with unused keys and keys out of first-use
// order, reads back as its Canonical form; an invalid one is not written.
func TestWriteOfAHandMadeTrace(t *testing.T) {
	tr := traffic.Trace{
		Keys:     []string{"unused", "b", "a"},
		Requests: []traffic.TraceRequest{{Sent: 5, Key: 2, Cost: 1}, {Sent: 5, Key: 1, Cost: 2, Service: 7}, {Sent: 9, Key: 2, Cost: 1}},
	}
	var b bytes.Buffer
	if err := traffic.WriteCSV(&b, tr); err != nil {
		t.Fatal(err)
	}
	if want := "timestamp,key,cost,duration\n0.000005,a,1,0\n0.000005,b,2,0.000007\n0.000009,a,1,0\n"; b.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", b.String(), want)
	}
	back, _, err := traffic.ReadCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if want := tr.Canonical(); !reflect.DeepEqual(back, want) || want.Keys[0] != "a" || len(want.Keys) != 2 {
		t.Errorf("read back %+v, want the canonical %+v", back, want)
	}
	for name, bad := range map[string]traffic.Trace{
		"unsorted":     {Keys: []string{"a"}, Requests: []traffic.TraceRequest{{Sent: 2, Cost: 1}, {Sent: 1, Cost: 1}}},
		"cost 0":       {Keys: []string{"a"}, Requests: []traffic.TraceRequest{{Sent: 2}}},
		"key range":    {Keys: []string{"a"}, Requests: []traffic.TraceRequest{{Sent: 2, Cost: 1, Key: 1}}},
		"dup names":    {Keys: []string{"a", "a"}, Requests: []traffic.TraceRequest{{Sent: 2, Cost: 1}}},
		"newline key":  {Keys: []string{"a\nb"}, Requests: []traffic.TraceRequest{{Sent: 2, Cost: 1}}},
		"no requests":  {Keys: []string{"a"}},
		"negative":     {Keys: []string{"a"}, Requests: []traffic.TraceRequest{{Sent: -1, Cost: 1}}},
		"service < 0":  {Keys: []string{"a"}, Requests: []traffic.TraceRequest{{Sent: 1, Cost: 1, Service: -1}}},
		"past MaxTime": {Keys: []string{"a"}, Requests: []traffic.TraceRequest{{Sent: traffic.MaxTime + 1, Cost: 1}}},
	} {
		var b bytes.Buffer
		if err := traffic.WriteJSONL(&b, bad); err == nil || b.Len() != 0 {
			t.Errorf("%s: wrote %d bytes, err %v; want an error and nothing written", name, b.Len(), err)
		}
	}
}
