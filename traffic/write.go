package traffic

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteCSV writes t as CSV that ReadCSV reads back: the header
// timestamp,key,cost,duration, then one row per request with times in
// exact decimal seconds (1700000000.000001, 0.012) and a key quoted when
// it holds a comma or a quote. For every Trace this package returns,
// reading what was written gives the identical Trace; for a Trace built by
// hand, it gives t.Canonical(). An invalid t (Validate) is an error and
// nothing is written. So is a t without requests, which no reader accepts.
func WriteCSV(w io.Writer, t Trace) error {
	return write(w, t, "timestamp,key,cost,duration\n", func(b []byte, key string, r TraceRequest) []byte {
		b = appendSeconds(b, r.Sent)
		b = append(b, ',')
		if strings.ContainsAny(key, ",\"") {
			b = append(b, '"')
			b = append(b, strings.ReplaceAll(key, `"`, `""`)...)
			b = append(b, '"')
		} else {
			b = append(b, key...)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Cost, 10)
		b = append(b, ',')
		b = appendSeconds(b, r.Service)
		return append(b, '\n')
	})
}

// WriteJSONL writes t as JSON lines that ReadJSONL reads back, every field
// on every line:
//
//	{"timestamp":1700000000.000001,"key":"alice","cost":1,"duration":0.012}
//
// The round trip is exact as for WriteCSV. A program that reads the
// timestamps as doubles (most JSON libraries) loses the last µs of an
// epoch time; ReadJSONL does not.
func WriteJSONL(w io.Writer, t Trace) error {
	return write(w, t, "", func(b []byte, key string, r TraceRequest) []byte {
		b = append(b, `{"timestamp":`...)
		b = appendSeconds(b, r.Sent)
		b = append(b, `,"key":"`...)
		// A valid key has no control characters, so a quote and a
		// backslash are all that JSON needs escaped.
		for i := 0; i < len(key); i++ {
			if c := key[i]; c == '"' || c == '\\' {
				b = append(b, '\\', c)
			} else {
				b = append(b, c)
			}
		}
		b = append(b, `","cost":`...)
		b = strconv.AppendInt(b, r.Cost, 10)
		b = append(b, `,"duration":`...)
		b = appendSeconds(b, r.Service)
		return append(b, "}\n"...)
	})
}

// write validates t, then writes the header and one line per request.
func write(w io.Writer, t Trace, header string, line func([]byte, string, TraceRequest) []byte) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if len(t.Requests) == 0 {
		return fmt.Errorf("traffic: %w: a trace without requests would not read back", ErrEmpty)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(header)
	var buf []byte
	for _, r := range t.Requests {
		buf = line(buf[:0], t.Keys[r.Key], r)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
