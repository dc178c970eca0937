package live

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/record"
)

// drawPromise draws one of the four promises of l, and its idle time
// (algos.Promise.LongestIdle): the Reset rules are held under every promise.
func drawPromise(rng *rand.Rand, l algos.Limit) (algos.Promise, int64) {
	promises := []algos.Promise{algos.BucketPromise(l), algos.SlidingWindowPromise(l), algos.AlignedWindowPromise(l), algos.AnchoredWindowPromise(l)}
	p := promises[rng.IntN(len(promises))]
	bound, _, _ := p.LongestIdle()
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
		v := judge.Records([]record.Record{r}, p, l)
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
