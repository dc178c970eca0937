package live

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/record"
)

// drawPromise draws one of the four promises of l, and its idle time
// (idleBound): the Reset rules are held under every promise.
func drawPromise(rng *rand.Rand, l algos.Limit) (algos.Promise, int64) {
	promises := []algos.Promise{algos.BucketPromise(l), algos.SlidingWindowPromise(l), algos.AlignedWindowPromise(l), algos.AnchoredWindowPromise(l)}
	p := promises[rng.IntN(len(promises))]
	bound, _ := idleBound(shapeOf(p, l), p)
	return p, bound
}

// up is us µs rounded up to whole units of by µs, as a service rounds the
// waits it writes.
func up(us, by int64) int64 { return (us + by - 1) / by }

// An honest limiter's waits, rounded up and written in any of the
// conventions services ship (whole seconds, milliseconds, tenths, an epoch,
// the IETF field; Retry-After in seconds or as an HTTP-date), read back by
// Parse on a client whose requests and answers take up to 3 s each way (and
// whose clock is up to 5 s off the server's, when the answer has a Date),
// are never convicted by the Reset rules that read one answer: true waits
// with Retry-After ≤ Reset ≤ the promise's idle time never look otherwise
// after rounding. The same conventions with a Reset 3 s past the idle time,
// or a Retry-After 5 s past the Reset (both also past the answer's flight,
// which makes an instant read early), are caught, so the slack is not so
// wide that the rules test nothing.
func TestRoundedHonestWaitsAreNeverConvicted(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	epoch := time.Unix(1_700_000_000, 0)
	caught := map[breach.Kind]int{}
	for seed := range uint64(4000) {
		rng := rand.New(rand.NewPCG(seed, 26))
		p, bound := drawPromise(rng, l)
		decided := 5*algos.Second + rng.Int64N(algos.Second)
		flight := []int64{300_000, 3 * algos.Second}[rng.IntN(2)] // a slow answer makes an epoch look early
		sent, answered := decided-rng.Int64N(flight), decided+rng.Int64N(flight)
		reset := rng.Int64N(bound + 1)
		if rng.IntN(20) == 0 {
			reset = 0 // idle already, and a Retry-After floored at 1 s
		}
		retry := rng.Int64N(reset + 1)
		var kind breach.Kind
		switch rng.IntN(3) {
		case 1:
			reset, kind = bound+3*algos.Second+(answered-decided)+rng.Int64N(algos.Second), breach.ResetPastIdle
		case 2:
			reset = rng.Int64N(algos.Second)
			retry, kind = reset+5*algos.Second+(answered-sent)+rng.Int64N(algos.Second), breach.ResetBeforeRetryAfter
		}
		h, unit := http.Header{}, ResetAuto
		switch rng.IntN(5) {
		case 0:
			h.Set(HeaderReset, fmt.Sprint(up(reset, algos.Second)))
		case 1:
			h.Set(HeaderReset, fmt.Sprint(up(reset, 1000)))
			unit = ResetMillis
		case 2:
			h.Set(HeaderReset, fmt.Sprintf("%.1f", float64(up(reset, 100_000))/10))
		case 3: // an epoch, rounded up, on the service's clock (the client's)
			h.Set(HeaderReset, fmt.Sprint(up(epoch.UnixMicro()+decided+reset, algos.Second)))
		case 4:
			h.Set(HeaderRateLimit, fmt.Sprintf("limit=10, remaining=0, reset=%d", up(reset, algos.Second)))
		}
		if rng.IntN(2) == 0 {
			h.Set(HeaderRetryAfter, fmt.Sprint(max(up(retry, algos.Second), 1)))
		} else {
			h.Set(HeaderRetryAfter, time.UnixMicro(up(epoch.UnixMicro()+decided+retry, algos.Second)*algos.Second).UTC().Format(http.TimeFormat))
		}
		arrived := epoch.Add(time.Duration(answered) * time.Microsecond)
		if rng.IntN(2) == 0 {
			// The server dates its answer when it sends it, truncated to
			// the second, and the client's clock is up to 5 s off: the
			// instants are read against the Date, the skew does not count.
			sentBack := decided + rng.Int64N(answered-decided+1)
			h.Set("Date", time.UnixMicro(epoch.UnixMicro()+sentBack).UTC().Format(http.TimeFormat))
			arrived = arrived.Add(time.Duration(rng.Int64N(10*algos.Second)-5*algos.Second) * time.Microsecond)
		}
		a, err := Parse(http.StatusTooManyRequests, h, arrived, unit)
		if err != nil || a.Malformed != "" || !a.Known.Has(record.FieldReset|record.FieldRetryAfter) {
			t.Fatalf("seed %d: %v %q %+v", seed, err, a.Malformed, h)
		}
		r := record.Record{Key: "k", Sent: sent, Answered: answered, Answer: a}
		v := Judge([]record.Record{r}, p, l)
		for _, k := range []breach.Kind{breach.ResetBeforeRetryAfter, breach.ResetPastIdle} {
			b, ok := v.Caught(k)
			switch {
			case ok && k != kind:
				t.Fatalf("seed %d, %s: true Reset %s, Retry-After %s sent as %v: %s: %s", seed, p.Text, record.FormatDuration(reset), record.FormatDuration(retry), h, k, b.Why)
			case !ok && k == kind:
				t.Fatalf("seed %d, %s: true Reset %s, Retry-After %s sent as %v: not caught as %s", seed, p.Text, record.FormatDuration(reset), record.FormatDuration(retry), h, k)
			case ok:
				caught[k]++
			}
		}
	}
	t.Logf("caught %d Resets past idle and %d Resets before their Retry-After, no honest answer", caught[breach.ResetPastIdle], caught[breach.ResetBeforeRetryAfter])
}

// A denial at a Reset is a breach only when it is certain: every request
// was sent from the instant the Reset named, nothing else of the key could
// be decided between, and more were denied than an idle key may deny.
func TestResetDeniedOnlyWhenCertain(t *testing.T) {
	answer := func(sent, answered int64, allowed bool, reset int64) record.Record {
		r := record.Record{Key: "k", Sent: sent, Answered: answered, Answer: record.Answer{Decision: algos.Decision{Allowed: allowed, Reset: reset}, Known: record.FieldsDecision}}
		if !allowed {
			r.RetryAfter = reset
		}
		return r
	}
	admit := func(sent, answered int64) record.Record { return answer(sent, answered, true, 50) }
	deny := func(sent, answered int64) record.Record { return answer(sent, answered, false, 50) }
	at := func(r record.Record, t int64) record.Record {
		r.Decided, r.Seen = t, record.SeenDecided
		return r
	}
	noReset := admit(5, 30)
	noReset.Known = record.FieldRemaining
	failed := deny(110, 120)
	failed.Err = ErrInFlight
	costly := deny(110, 120)
	costly.Cost = 2
	for _, c := range []struct {
		name   string
		recs   []record.Record
		n      int64
		spread int64
		want   int64
	}{
		{"a denial at the Reset", []record.Record{answer(0, 10, true, 100), deny(110, 120)}, 1, 0, 1},
		{"a denial sent before the Reset", []record.Record{answer(0, 10, true, 100), deny(109, 120)}, 1, 0, 0},
		{"a burst of three, the fourth denied", []record.Record{answer(0, 10, true, 100), admit(110, 115), admit(116, 118), admit(119, 120), deny(121, 125)}, 3, 0, 0},
		{"a burst of three, the third denied", []record.Record{answer(0, 10, true, 100), admit(110, 115), admit(116, 118), deny(119, 120), deny(121, 125)}, 3, 0, 1},
		{"three in flight at once, one denied", []record.Record{answer(0, 10, true, 100), admit(110, 130), deny(111, 131), admit(112, 129)}, 3, 0, 1},
		{"three in flight at once, one denied, an idle key grants two", []record.Record{answer(0, 10, true, 100), admit(110, 130), deny(111, 131), admit(112, 129)}, 2, 0, 0},
		{"another request in flight over the Reset", []record.Record{answer(0, 10, true, 100), admit(5, 200), deny(210, 220)}, 1, 0, 0},
		{"the answer naming a later Reset may have been decided last", []record.Record{answer(0, 20, true, 50), answer(5, 30, true, 200), deny(100, 110)}, 1, 0, 0},
		{"the latest decided named the Reset", []record.Record{answer(0, 20, true, 50), answer(25, 30, true, 20), deny(60, 70)}, 1, 0, 1},
		{"a request that may have been decided last named none", []record.Record{answer(0, 20, true, 50), noReset, deny(100, 110)}, 1, 0, 0},
		{"an error at the Reset is no denial", []record.Record{answer(0, 10, true, 100), failed}, 1, 0, 0},
		{"a request of cost 2 is not counted", []record.Record{answer(0, 10, true, 100), costly}, 1, 0, 0},
		{"decisions at one instant, any of them the last", []record.Record{at(answer(0, 0, true, 100), 0), at(answer(0, 0, true, 300), 0), at(deny(250, 250), 250)}, 1, 0, 0},
		{"decisions at one instant, denied after the latest Reset", []record.Record{at(answer(0, 0, true, 100), 0), at(answer(0, 0, true, 300), 0), at(deny(300, 300), 300)}, 1, 0, 1},
		{"clocks apart: the first request only", []record.Record{answer(0, 10, true, 100), admit(110, 115), deny(116, 120)}, 3, 1, 0},
		{"clocks apart: a first request denied", []record.Record{answer(0, 10, true, 100), deny(111, 115)}, 3, 1, 1},
		{"clocks apart: the Reset moves by the spread", []record.Record{answer(0, 10, true, 100), deny(110, 115)}, 3, 1, 0},
		{"every Reset disproved is counted", []record.Record{answer(0, 10, true, 100), deny(110, 120), deny(170, 180)}, 1, 0, 2},
	} {
		got := judgeResetDenied(c.recs, c.n, c.spread)
		if got.count != c.want {
			t.Errorf("%s: %d Resets disproved, want %d (%s)", c.name, got.count, c.want, got.why)
		}
		if got.count > 0 && (got.first.Allowed || !strings.Contains(got.why, "idle again by")) {
			t.Errorf("%s: first %v, why %q", c.name, got.first, got.why)
		}
	}
}
