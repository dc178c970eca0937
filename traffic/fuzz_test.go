package traffic_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/overshoot-go/overshoot/traffic"
)

// roundTrip checks what a reader accepted: it is a valid canonical Trace,
// writing it succeeds, reading that gives the identical Trace (in order,
// nothing to report), and writing that again gives the same bytes.
func roundTrip(t *testing.T, tr traffic.Trace,
	write func(*bytes.Buffer, traffic.Trace) error,
	read func(*bytes.Buffer) (traffic.Trace, traffic.Info, error)) {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatalf("a reader returned an invalid trace: %v", err)
	}
	if !reflect.DeepEqual(tr, tr.Canonical()) {
		t.Fatalf("a reader returned a trace that is not canonical: %+v", tr)
	}
	var first bytes.Buffer
	if err := write(&first, tr); err != nil {
		t.Fatalf("writing what was read: %v", err)
	}
	written := bytes.Clone(first.Bytes())
	back, info, err := read(&first)
	if err != nil {
		t.Fatalf("reading what was written: %v\n%s", err, written)
	}
	if !reflect.DeepEqual(back, tr) || info.Reordered {
		t.Fatalf("read back %+v (reordered %v), want %+v\n%s", back, info.Reordered, tr, written)
	}
	var second bytes.Buffer
	if err := write(&second, back); err != nil || !bytes.Equal(second.Bytes(), written) {
		t.Fatalf("writing again gave other bytes (%v)", err)
	}
}

// FuzzReadCSV: any input either is refused with an error or reads as a
// Trace that survives WriteCSV then ReadCSV exactly; nothing panics.
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"timestamp,key,cost,duration\n1700000000.000001,alice,1,0.012\n1700000000.5,bob,3,0\n",
		"key,timestamp\nb,2\na,1\na,1\n",
		"\ufeffTimestamp,Key,extra\n1,\"a,b\",\"x\ny\"\n2,\"q\"\"q\",z\n",
		"timestamp,key,cost\n1e9,a,\n.5,b,2.0\n5.,c,1e1\n",
		"timestamp,key,duration\n0.0000005,a,1.0000005\n",
		"timestamp,key\n1,a\n\n\n-1,b\n",
		"timestamp,key\n1,\n",
		"timestamp,key\r\n1,a\r\n",
		"timestamp,key\n1,a\"b\n",
		"timestamp,key\n253402300800,a\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, _, err := traffic.ReadCSV(bytes.NewReader(data))
		if err != nil {
			return
		}
		roundTrip(t, tr,
			func(b *bytes.Buffer, tr traffic.Trace) error { return traffic.WriteCSV(b, tr) },
			func(b *bytes.Buffer) (traffic.Trace, traffic.Info, error) { return traffic.ReadCSV(b) })
	})
}

// FuzzReadJSONL is FuzzReadCSV for JSON lines.
func FuzzReadJSONL(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":1700000000.000001,"key":"alice","cost":1,"duration":0.012}` + "\n" + `{"timestamp":1700000000.5,"key":"bob","cost":3}`,
		`{"timestamp":2,"key":"b"}` + "\n\n" + `{"timestamp":1,"key":"a","x":[1,{"y":null}]}`,
		`{"timestamp":1e9,"key":7,"cost":2.0,"duration":null}`,
		`{"timestamp":0.0000005,"key":"caf\u00e9 \"\\ \u2028"}`,
		`{"timestamp":1,"key":"a\ud800"}`,
		`{"TIMESTAMP":1,"Key":"a"}`,
		`{"timestamp":-1,"key":"a"}`,
		`{"timestamp":1,"key":""}`,
		"[1]\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, _, err := traffic.ReadJSONL(bytes.NewReader(data))
		if err != nil {
			return
		}
		roundTrip(t, tr,
			func(b *bytes.Buffer, tr traffic.Trace) error { return traffic.WriteJSONL(b, tr) },
			func(b *bytes.Buffer) (traffic.Trace, traffic.Info, error) { return traffic.ReadJSONL(b) })
	})
}
