package live

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/record"
)

// A run's records written to a file, as JSON lines or as CSV, and read
// back are judged exactly as the records the run kept: the same Verdict,
// breach for breach, first record for first record. The file must keep
// which waits were stated as delays (record.Answer.Delta) for that: a
// Reset in whole seconds one second past the promise's idle time, or a
// Retry-After in whole seconds one second past its Reset, is caught from
// memory only because a delay is rounded up once, and is caught from the
// file too. The same file without the marks (as a writer older than them
// wrote it) lets every one of them go, and never convicts anything the
// run's own records do not: looser, still sound. Honest waits, in every
// convention Parse reads, are convicted by neither Reset rule in any
// reading.
func TestARecordFileIsJudgedAsTheRunItKept(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	epoch := time.Unix(1_700_000_000, 0)
	marks := regexp.MustCompile(`,"(reset|retry_after)_is_delay":true`)
	planted, caughtOld := map[breach.Kind]int{}, map[breach.Kind]int{}
	for seed := range uint64(600) {
		rng := rand.New(rand.NewPCG(seed, 27))
		p, bound := drawPromise(rng, l)
		var recs []record.Record
		var kind breach.Kind // planted in the run's first answer; 0: every wait honest
		at := 5 * algos.Second
		for i := range 1 + rng.IntN(3) {
			flight := 1 + rng.Int64N(300*ms)
			sent, answered := at, at+flight
			decided := sent + rng.Int64N(flight+1)
			at = answered + rng.Int64N(3*algos.Second)
			reset := rng.Int64N(bound + 1)
			retry := rng.Int64N(reset + 1)
			h, unit := http.Header{}, ResetAuto
			if i == 0 {
				switch rng.IntN(3) {
				case 1: // stated as bound + 1 s, true wait in (bound, bound + 1 s]
					reset, kind = bound+1+rng.Int64N(algos.Second), breach.ResetPastIdle
					retry = rng.Int64N(algos.Second + 1)
				case 2: // stated as Reset 1 s and Retry-After 2 s: true waits in (0, 1 s] and (1 s, 2 s]
					reset, kind = 1+rng.Int64N(algos.Second), breach.ResetBeforeRetryAfter
					retry = algos.Second + 1 + rng.Int64N(algos.Second)
				}
			}
			format := rng.IntN(4)
			if i == 0 && kind != 0 {
				format = rng.IntN(2) // a delay in whole seconds, the only one Delta tightens
			}
			switch format {
			case 0:
				h.Set(HeaderReset, fmt.Sprint(up(reset, algos.Second)))
			case 1:
				h.Set(HeaderRateLimit, fmt.Sprintf("limit=10, remaining=0, reset=%d", up(reset, algos.Second)))
			case 2:
				h.Set(HeaderReset, fmt.Sprint(up(reset, ms)))
				unit = ResetMillis
			case 3: // an epoch, rounded up: an instant, no delay
				h.Set(HeaderReset, fmt.Sprint(up(epoch.UnixMicro()+decided+reset, algos.Second)))
			}
			status := http.StatusOK
			if rng.IntN(4) > 0 || kind == breach.ResetBeforeRetryAfter {
				status = http.StatusTooManyRequests
				if (i == 0 && kind != 0) || rng.IntN(2) == 0 {
					h.Set(HeaderRetryAfter, fmt.Sprint(max(up(retry, algos.Second), 1)))
				} else {
					h.Set(HeaderRetryAfter, time.UnixMicro(up(epoch.UnixMicro()+decided+retry, algos.Second)*algos.Second).UTC().Format(http.TimeFormat))
				}
			}
			a, err := Parse(status, h, epoch.Add(time.Duration(answered)*time.Microsecond), unit)
			if err != nil || a.Malformed != "" {
				t.Fatalf("seed %d: %v %q %v", seed, err, a.Malformed, h)
			}
			recs = append(recs, record.Record{Key: "k", Sent: sent, Answered: answered, Status: status, Answer: a})
		}
		memory := judge.Records(recs, p, l)
		var jsonl, csv bytes.Buffer
		if err := record.WriteJSONL(&jsonl, recs); err != nil {
			t.Fatal(err)
		}
		if err := record.WriteCSV(&csv, recs); err != nil {
			t.Fatal(err)
		}
		old := marks.ReplaceAll(jsonl.Bytes(), nil)
		fromJSONL, err := record.ReadJSONL(&jsonl)
		if err != nil {
			t.Fatal(err)
		}
		fromCSV, err := record.ReadCSV(&csv)
		if err != nil {
			t.Fatal(err)
		}
		fromOld, err := record.ReadJSONL(bytes.NewReader(old))
		if err != nil {
			t.Fatal(err)
		}
		for name, file := range map[string][]record.Record{"JSON lines": fromJSONL, "CSV": fromCSV} {
			if v := judge.Records(file, p, l); !reflect.DeepEqual(v, memory) {
				t.Fatalf("seed %d, %s: judged from its %s as\n%s\nfrom memory as\n%s", seed, p.Text, name, v, memory)
			}
		}
		loose := judge.Records(fromOld, p, l)
		for _, b := range loose.Breaches {
			if m, ok := memory.Caught(b.Kind); !ok || b.Count > m.Count {
				t.Fatalf("seed %d, %s: the file without its delays convicts %s %d, its records %d:\n%s", seed, p.Text, b.Kind, b.Count, m.Count, loose)
			}
		}
		for _, k := range []breach.Kind{breach.ResetPastIdle, breach.ResetBeforeRetryAfter} {
			b, inMemory := memory.Caught(k)
			_, inOld := loose.Caught(k)
			switch {
			case k == kind && !inMemory:
				t.Fatalf("seed %d, %s: the planted %s, stated as a delay, is not caught from memory:\n%s", seed, p.Text, k, memory)
			case k != kind && inMemory:
				t.Fatalf("seed %d, %s: an honest wait convicted of %s: %s", seed, p.Text, k, b.Why)
			case inOld:
				caughtOld[k]++
			}
		}
		if kind != 0 {
			planted[kind]++
		}
	}
	if planted[breach.ResetPastIdle] == 0 || planted[breach.ResetBeforeRetryAfter] == 0 || caughtOld[breach.ResetPastIdle] != 0 || caughtOld[breach.ResetBeforeRetryAfter] != 0 {
		t.Errorf("planted %v, caught without the delay marks %v: want some of each planted, none caught without", planted, caughtOld)
	}
	t.Logf("planted %d Resets a second past idle and %d Retry-Afters a second past their Reset: every one caught from memory, from JSON lines and from CSV alike, none from the file without its delays", planted[breach.ResetPastIdle], planted[breach.ResetBeforeRetryAfter])
}

// ms is a millisecond in µs.
const ms = algos.Second / 1000
