package traffic_test

import (
	"bytes"
	"runtime"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/traffic"
)

const benchLines = 1_000_000

// benchCSV is a million-request CSV built once: a day's worth of epoch
// times, 10 000 Zipf keys, costs and service times, as WriteCSV writes it
// ("1700000000.123456,k42,3,0.021307").
var benchCSV = sync.OnceValue(func() []byte {
	tr, err := traffic.TraceSpec{
		Profile:  traffic.Poisson{Rate: benchLines / 86_400.0},
		Duration: 86_400 * sec,
		Start:    1_700_000_000 * sec,
		Keys:     traffic.Zipf(10_000, 1),
		Cost:     traffic.Around(3, 2),
		Service:  traffic.Exponential(20_000),
		Seed:     1,
	}.Generate()
	if err != nil {
		panic(err)
	}
	tr.Requests = tr.Requests[:min(len(tr.Requests), benchLines)]
	var b bytes.Buffer
	if err := traffic.WriteCSV(&b, tr.Canonical()); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// BenchmarkReadCSV reads the million-line CSV: one op is the whole file.
// It reports lines/s and the bytes allocated per line.
func BenchmarkReadCSV(b *testing.B) {
	data := benchCSV()
	lines := bytes.Count(data, []byte{'\n'}) - 1
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		tr, _, err := traffic.ReadCSV(bytes.NewReader(data))
		if err != nil || len(tr.Requests) != lines {
			b.Fatalf("%d requests, %v", len(tr.Requests), err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(lines)/float64(b.N), "B/line")
}
