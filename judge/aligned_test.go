package judge

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/record"
)

// seenAt is a decision of key k at t µs, seen there, stating remaining.
func seenAt(t int64, allowed bool, remaining int64) record.Record {
	return record.Record{Key: "k", Sent: t, Decided: t, Answered: t, Seen: record.SeenDecided,
		Answer: record.Answer{Decision: algos.Decision{Allowed: allowed, Remaining: remaining}, Known: record.FieldRemaining}}
}

// ranked is r with its rank among the run's decisions (record.SeenOrder).
func ranked(r record.Record, order int64) record.Record {
	r.Order, r.Seen = order, r.Seen|record.SeenOrder
	return r
}

// unseen is r as a client on the wire saw it: decided somewhere in the
// millisecond after it was sent.
func unseen(r record.Record) record.Record {
	r.Seen, r.Decided, r.Answered, r.Order = 0, 0, r.Sent+ms, 0
	return r
}

// An aligned window promise is judged window by window when every
// decision was seen: one admit past L in a window is caught, and the
// Remaining that the window's admits leave no room for; 2L admits across
// an edge, L on each side, are clean. The same records as a client on the
// wire sees them (each decision somewhere in its span) show no window's
// edges, and only 2L in less than W would be caught.
func TestAlignedWindowsAreJudgedByWindowWhenEveryDecisionWasSeen(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	p := algos.AlignedWindowPromise(l)
	at := func(ms ...int64) []record.Record {
		var out []record.Record
		for _, t := range ms {
			out = append(out, seenAt(t*1000, true, 0)) // Remaining 0 claims nothing
		}
		return out
	}
	for _, c := range []struct {
		name      string
		recs      []record.Record
		over      int64  // admits caught beyond the promise (0: none)
		remaining int64  // Remainings caught too high (0: none)
		why       string // in the first over-admission's words
	}{
		{"L+1 in one window", at(100, 200, 300, 400), 1, 0, "4 admits of key k were decided in the aligned window [0.000000s, 1.000000s), but at most 3 are promised"},
		{"L on each side of an edge, within 0.6 s", at(700, 800, 900, 1100, 1200, 1300), 0, 0, ""},
		{"L+2 in the second window", at(1000, 1100, 1200, 1300, 1999), 2, 0, "[1.000000s, 2.000000s)"},
		{"a Remaining the window's admits leave no room for", []record.Record{seenAt(100_000, true, 2), seenAt(200_000, true, 2)}, 0, 1, ""},
		{"a Remaining on a denial, after L admits", []record.Record{seenAt(1, true, 2), seenAt(2, true, 1), seenAt(3, true, 0), seenAt(4, false, 1)}, 0, 1, ""},
		// Two decisions at one µs are never certainly ordered: the second
		// may have come first, and its Remaining 2 then fits.
		{"same instant", []record.Record{seenAt(100_000, true, 2), seenAt(100_000, true, 2)}, 0, 0, ""},
		// Ranked, they are: the second's admit and Remaining 2 follow the
		// first's admit, 1 + 1 + 2 > 3.
		{"same instant, ranked", []record.Record{ranked(seenAt(100_000, true, 2), 1), ranked(seenAt(100_000, true, 2), 2)}, 0, 1, ""},
		{"same instant, ranked, Remainings that fit", []record.Record{ranked(seenAt(100_000, true, 2), 1), ranked(seenAt(100_000, true, 1), 2)}, 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Records(c.recs, p, l)
			b, caught := v.Caught(breach.OverAdmission)
			if (c.over > 0) != caught || caught && b.Count != c.over {
				t.Fatalf("over-admission: want %d, got\n%s", c.over, v)
			}
			if caught && !strings.Contains(b.Why, c.why) {
				t.Errorf("over-admission says %q, want %q in it", b.Why, c.why)
			}
			rb, caught := v.Caught(breach.RemainingTooHigh)
			if (c.remaining > 0) != caught || caught && rb.Count != c.remaining {
				t.Fatalf("remaining too high: want %d, got\n%s", c.remaining, v)
			}
			// As the wire shows them: no window is seen, and none of these
			// runs has more than 2L in a span shorter than W.
			wire := make([]record.Record, len(c.recs))
			for i, r := range c.recs {
				wire[i] = unseen(r)
			}
			if w := Records(wire, p, l); !w.Clean() {
				t.Errorf("the same records unseen were judged:\n%s", w)
			}
		})
	}
}

// One record the producer did not see at its decision keeps the whole run
// on the judgement a client can make: its windows are not judged.
func TestAlignedWindowsNeedEveryDecisionSeen(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	recs := []record.Record{seenAt(100_000, true, 0), seenAt(200_000, true, 0), seenAt(300_000, true, 0), unseen(seenAt(400_000, true, 0))}
	if v := Records(recs, algos.AlignedWindowPromise(l), l); !v.Clean() {
		t.Errorf("a run with one unseen decision was judged by its windows:\n%s", v)
	}
	if v := Records(recs[:3], algos.AlignedWindowPromise(l), l); !v.Clean() || v.Most != 3 || v.Allowed != 3 {
		t.Errorf("L seen admits in one window: want clean, most 3 of 3:\n%s", v)
	}
	// An anchored window's edges follow its key's first hit, which no
	// record shows: seen or not, it is judged as a client can.
	four := []record.Record{seenAt(100_000, true, 0), seenAt(200_000, true, 0), seenAt(300_000, true, 0), seenAt(400_000, true, 0)}
	if v := Records(four, algos.AnchoredWindowPromise(l), l); !v.Clean() {
		t.Errorf("an anchored window was judged by aligned windows:\n%s", v)
	}
}

// An admit ranked after an answer of Remaining 0 in the same µs had no
// time to be refilled, whatever the promise: the Remaining 0 or the admit
// is wrong, and the judge says Remaining too high. Unranked, or ranked
// the other way, or a µs apart, the records show nothing.
func TestAnAdmitInTheMicrosecondOfARemainingZeroIsCaught(t *testing.T) {
	l := algos.MustLimit(3, algos.Second, 3)
	zero, admit := seenAt(500_000, false, 0), seenAt(500_000, true, 2)
	for _, p := range []algos.Promise{algos.BucketPromise(l), algos.SlidingWindowPromise(l), algos.AlignedWindowPromise(l)} {
		for _, c := range []struct {
			name   string
			recs   []record.Record
			caught bool
		}{
			{"ranked after the Remaining 0", []record.Record{ranked(admit, 8), ranked(zero, 7)}, true},
			{"ranked before it", []record.Record{ranked(admit, 7), ranked(zero, 8)}, false},
			{"unranked", []record.Record{zero, admit}, false},
			{"a µs later", []record.Record{ranked(zero, 7), ranked(seenAt(500_001, true, 0), 8)}, false},
		} {
			v := Records(c.recs, p, l)
			b, caught := v.Caught(breach.RemainingTooHigh)
			if caught != c.caught {
				t.Errorf("%s, %s: caught %v, want %v:\n%s", p.Text, c.name, caught, c.caught, v)
			}
			if caught && !strings.Contains(b.Why, "in the µs it had answered Remaining 0 (rank 7)") {
				t.Errorf("%s, %s: says %q", p.Text, c.name, b.Why)
			}
		}
	}
}
