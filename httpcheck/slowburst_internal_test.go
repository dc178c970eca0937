package httpcheck

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/record"
)

// burstOf is how many requests plan sends to a key that admits every one
// (status 200, no headers but the limit) and answers each gap after it
// was sent, under a limit of 10 per 200 ms, with the default burst (25).
func burstOf(gap int64) int {
	p := &plan{o: &Options{Window: 200 * time.Millisecond, Limit: 10}, limit: 10}
	var last *record.Record
	sent := 0
	for {
		at, more := p.Next(last)
		if !more {
			return sent
		}
		sent++
		last = &record.Record{Sent: at, Answered: at + gap, Status: http.StatusOK}
	}
}

// A burst that met no 429 goes on while a limit of 10 per 200 ms may still
// have admitted all of it (n ≤ 10·(⌊span/200ms⌋+2)), and no further: sent
// 1 ms apart it stops at the default 25, since 25 fit in no such span; 14
// ms apart (71 a second against a refill of 50), 25 took 350 ms, in which
// 30 may be admitted, so it goes on until it outruns the refill, at 41
// (574 ms, in which 40 may be); 25 ms apart (40 a second, slower than the
// refill) it never does, and stops at four times the burst.
func TestASlowBurstGoesOnUntilItOutrunsTheRefill(t *testing.T) {
	for _, c := range []struct {
		gap  int64 // µs from each send to its answer, the next send
		want int
	}{
		{1_000, 25},
		{14_000, 41},
		{25_000, 100},
	} {
		if got := burstOf(c.gap); got != c.want {
			t.Errorf("answered %d µs apart: a burst of %d, want %d", c.gap, got, c.want)
		}
		if n := c.want; c.want < 100 && int64(n) <= mostAdmits(10, time.Duration(int64(n)*c.gap)*time.Microsecond, 200*time.Millisecond) {
			t.Errorf("answered %d µs apart: the burst stopped at %d, which a limit may still have admitted", c.gap, n)
		}
	}
}

// judged is the verdict of a burst of n admits, each answered gap after it
// was sent and the next sent then, against a limit of 10 per 200 ms.
func judged(n int, gap time.Duration) *Report {
	r := &Report{Limit: 10, Window: 200 * time.Millisecond, Burst: n}
	for i := range n {
		sent := time.Duration(i) * gap
		rec := record.Record{Key: "k", Sent: sent.Microseconds(), Answered: (sent + gap).Microseconds(), Status: http.StatusOK,
			Answer: record.Answer{Known: record.FieldLimit}}
		rec.Limit, rec.Allowed = 10, true
		r.Exchanges = append(r.Exchanges, Exchange{N: i + 1, Sent: sent, Received: sent + gap, Status: http.StatusOK, Limit: "10", Record: rec})
	}
	r.judge(10, 10*time.Second)
	return r
}

// limit-enforced convicts a burst that met no 429 only when no limit of 10
// per 200 ms could have admitted all of it; a burst the machine answered
// too slowly is not judged by it, and the report says so.
func TestLimitEnforcedJudgesOnlyABurstThatOutranTheRefill(t *testing.T) {
	fast := judged(25, time.Millisecond)
	if !slices.Contains(fast.Broken(), RuleLimitEnforced) || fast.Unjudged != "" {
		t.Errorf("25 admits in 25 ms against 10 per 200 ms: want limit-enforced broken, got %v (unjudged: %q)", fast.Broken(), fast.Unjudged)
	}
	slow := judged(25, 14*time.Millisecond)
	if slices.Contains(slow.Broken(), RuleLimitEnforced) || !strings.Contains(slow.Unjudged, "limit-enforced: the burst of 25 requests took 350.0ms, in which 10 per 200ms may admit 30") {
		t.Errorf("25 admits in 350 ms: want limit-enforced not judged, got %v (unjudged: %q)", slow.Broken(), slow.Unjudged)
	}
	outran := judged(41, 14*time.Millisecond)
	if !slices.Contains(outran.Broken(), RuleLimitEnforced) || outran.Unjudged != "" {
		t.Errorf("41 admits in 574 ms: want limit-enforced broken, got %v (unjudged: %q)", outran.Broken(), outran.Unjudged)
	}
}
