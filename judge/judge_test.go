package judge

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/record"
)

// run is a synthetic run: arrivals of one key every gap µs for dur µs,
// decided at their true times by `instances` copies of algo in turn (one:
// a shared limiter; three: per-instance limiters on three nodes), each
// sent up to before µs ahead of its decision and answered up to after µs
// behind it (uniformly, seeded). It returns the records and the true
// times of the admits.
func run(seed uint64, algo algos.Algorithm, l algos.Limit, instances int, gap, dur, before, after int64) ([]record.Record, []int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	states := make([]algos.State, instances)
	var recs []record.Record
	var admits []int64
	i := 0
	for t := int64(1_000_000); t < 1_000_000+dur; t += gap {
		d := algo.Decide(&states[i%instances], t, l)
		r := record.Record{Key: "k", Node: i % instances, Sent: t - rng.Int64N(before+1), Answered: t + rng.Int64N(after+1),
			Answer: record.Answer{Decision: d, Known: record.FieldsAll &^ record.FieldLimit}}
		recs = append(recs, r)
		if d.Allowed {
			admits = append(admits, t)
		}
		i++
	}
	return recs, admits
}

var ms = int64(1000)

// A correct limiter whose answers are late by 0 to 50 ms (and whose
// requests waited 0 to 50 ms before it decided them) is clean, whatever
// the seed: the late answers widen the intervals, which can only hide a
// breach. Three per-instance buckets behind the same delays are caught.
func TestJudgeCannotBeFooledBySlowAnswers(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	p := algos.BucketPromise(l)
	for seed := range uint64(20) {
		recs, _ := run(seed, algos.TokenBucket, l, 1, 10*ms, 3*algos.Second, 50*ms, 50*ms)
		if v := Records(recs, p, l); !v.Clean() {
			t.Fatalf("seed %d: a correct bucket with slow answers was judged:\n%s", seed, v)
		}
		recs, _ = run(seed, algos.TokenBucket, l, 3, 10*ms, 3*algos.Second, 50*ms, 50*ms)
		v := Records(recs, p, l)
		b, ok := v.Caught(breach.OverAdmission)
		if !ok || v.Most < 2*v.Allowed {
			t.Fatalf("seed %d: three per-instance buckets not caught at 2x:\n%s", seed, v)
		}
		if seed == 0 {
			t.Logf("\n%s", v)
			if !strings.Contains(b.Why, "are promised") || b.First.Key != "k" || !b.First.Allowed {
				t.Errorf("breach says %q of %v", b.Why, b.First)
			}
		}
	}
}

// Whatever the limiter and the delays, an over-admission the judge reports
// is one the true times show (Promise.CheckAdmits on them): the judge is
// sound. Correct limiters, per-instance ones and a bucket four times too
// big, with delays from none to longer than a window, for the three shapes
// of promise the judge reads.
func TestJudgeIsSoundAgainstTheTrueTimes(t *testing.T) {
	small := algos.MustLimit(5, 200*ms, 5)
	cases := []struct {
		algo    algos.Algorithm
		promise func(algos.Limit) algos.Promise
	}{
		{algos.TokenBucket, algos.BucketPromise},
		{algos.GCRA, algos.BucketPromise},
		{algos.SlidingLog, algos.SlidingWindowPromise},
		{algos.FixedWindow, algos.AlignedWindowPromise},
	}
	caught, judged := 0, 0
	for _, c := range cases {
		for seed := range uint64(40) {
			rng := rand.New(rand.NewPCG(seed, 99))
			instances := 1 + rng.IntN(3)
			delay := []int64{0, 1, 5 * ms, 50 * ms, 300 * ms}[rng.IntN(5)]
			l := small
			if seed%5 == 4 { // a limiter four times the promise
				l = algos.MustLimit(20, 200*ms, 20)
			}
			recs, admits := run(seed, c.algo, l, instances, 1+rng.Int64N(20*ms), 2*algos.Second, delay, delay)
			p := c.promise(small)
			v := Records(recs, p, small)
			judged++
			if v.Unjudged != "" {
				t.Fatalf("%s: unjudged: %s", c.algo.Name, v.Unjudged)
			}
			if b, ok := v.Caught(breach.RemainingTooHigh); ok && instances == 1 && l == small && c.algo.Name != algos.FixedWindow.Name {
				t.Fatalf("%s seed %d: an honest limiter's Remaining convicted: %s", c.algo.Name, seed, b.Why)
			}
			if b, ok := v.Caught(breach.OverAdmission); ok {
				caught++
				if p.CheckAdmits(admits) == nil {
					t.Fatalf("%s seed %d: caught, but the true times keep the promise: %s", c.algo.Name, seed, b.Why)
				}
			} else if instances == 1 && l == small && delay == 0 && p.CheckAdmits(admits) != nil && c.algo.Name != algos.FixedWindow.Name {
				t.Fatalf("%s seed %d: with exact times a breach of the true times is missed", c.algo.Name, seed)
			}
		}
	}
	if caught < judged/4 {
		t.Errorf("only %d of %d runs caught: the cases do not test soundness", caught, judged)
	}
	t.Logf("%d of %d runs caught, each confirmed by the true times", caught, judged)
}

// The bucket judge finds exactly the certain spans a brute force over
// every (Sent, Answered) pair finds.
func TestBucketJudgeAgreesWithBruteForce(t *testing.T) {
	l := algos.MustLimit(3, 100*ms, 2)
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 1 + rng.IntN(12)
		var recs []record.Record
		for range n {
			s := rng.Int64N(300 * ms)
			recs = append(recs, record.Record{Key: "k", Sent: s, Answered: s + rng.Int64N(40*ms), Answer: record.Answer{Decision: algos.Decision{Allowed: true}}})
		}
		want := int64(0) // the most excess, scaled by W
		for _, x := range recs {
			for _, y := range recs {
				if y.Answered < x.Sent {
					continue
				}
				c := int64(0)
				for _, r := range recs {
					if r.Sent >= x.Sent && r.Answered <= y.Answered {
						c++
					}
				}
				want = max(want, c*l.Window-l.Burst*l.Window-l.Rate*(y.Answered-x.Sent))
			}
		}
		v := Records(recs, algos.BucketPromise(l), l)
		if _, got := v.Caught(breach.OverAdmission); got != (want > 0) {
			t.Fatalf("seed %d: judge caught=%v, brute force excess %d:\n%s", seed, got, want, v)
		}
	}
}

// Answers no limiter may give are caught on the fields the target stated,
// and a field it did not state is never held against it.
func TestBadAnswersOnStatedFieldsOnly(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	rec := func(d algos.Decision, known record.Fields) record.Record {
		return record.Record{Key: "k", Sent: 1, Answered: 2, Answer: record.Answer{Decision: d, Known: known}}
	}
	for _, c := range []struct {
		name string
		r    record.Record
		bad  string // a word of the reason, "" for none
	}{
		{"negative remaining", rec(algos.Decision{Allowed: true, Remaining: -1}, record.FieldRemaining), "negative Remaining"},
		{"remaining above the limit", rec(algos.Decision{Allowed: true, Remaining: 11}, record.FieldRemaining), "more than the limit"},
		{"remaining not stated", rec(algos.Decision{Allowed: true, Remaining: -1}, 0), ""},
		{"retry-after on an admit", rec(algos.Decision{Allowed: true, RetryAfter: algos.Second}, record.FieldRetryAfter), "an admit has nothing"},
		// A Retry-After past the Reset is breach.ResetBeforeRetryAfter's, which
		// allows for rounding (reset_test.go).
		{"retry-after past the reset", rec(algos.Decision{RetryAfter: 2 * algos.Second, Reset: algos.Second}, record.FieldRetryAfter|record.FieldReset), ""},
		{"retry-after, no reset", rec(algos.Decision{RetryAfter: 2 * algos.Second, Reset: 0}, record.FieldRetryAfter), ""},
		{"absurd retry-after, no reset", rec(algos.Decision{RetryAfter: 3600 * algos.Second}, record.FieldRetryAfter), "no Reset was sent"},
		{"an epoch read as a wait", rec(algos.Decision{Allowed: true, Reset: 1_700_000_000 * algos.Second}, record.FieldReset), "longer than any limit"},
		{"a good denial", rec(algos.Decision{RetryAfter: algos.Second, Reset: algos.Second}, record.FieldsAll), ""},
	} {
		v := Records([]record.Record{c.r}, algos.BucketPromise(l), l)
		b, caught := v.Caught(breach.BadAnswer)
		switch {
		case c.bad == "" && caught:
			t.Errorf("%s: caught: %s", c.name, b.Why)
		case c.bad != "" && !caught:
			t.Errorf("%s: not caught", c.name)
		case caught && !strings.Contains(b.Why, c.bad):
			t.Errorf("%s: says %q, want %q in it", c.name, b.Why, c.bad)
		}
	}
}

// What the judge cannot judge it says, on the row, rather than call clean.
func TestUnjudgedPromisesAreSaid(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	recs := []record.Record{{Key: "k", Sent: 1, Answered: 2, Answer: record.Answer{Decision: algos.Decision{Allowed: true}}}}
	own := algos.NewPromise("mine", func([]int64) *algos.Violation { return nil })
	for name, v := range map[string]Verdict{
		"own promise":              Records(recs, own, l),
		"own, in a bucket's words": Records(recs, algos.NewPromise(algos.BucketPromise(l).Text, func([]int64) *algos.Violation { return nil }), l),
		"another limit's":          Records(recs, algos.BucketPromise(algos.MustLimit(5, algos.Second, 5)), l),
		"an invalid limit":         Records(recs, algos.BucketPromise(l), algos.Limit{Rate: 1}),
		"a zero limit":             Records(recs, algos.AlignedWindowPromise(algos.Limit{}), algos.Limit{}),
		"answered before sent":     Records([]record.Record{{Key: "k", Sent: 5, Answered: 2, Answer: recs[0].Answer}}, algos.BucketPromise(l), l),
	} {
		if v.Clean() || v.Unjudged == "" || !strings.Contains(v.Row(), "unjudged: ") {
			t.Errorf("%s: %s", name, v.Row())
		}
	}
}

// The row counts every record, and failures apart from decisions.
func TestRowCountsEveryRecord(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	recs := []record.Record{
		{Key: "a", Sent: 0, Answered: 10, Answer: record.Answer{Decision: algos.Decision{Allowed: true}}},
		{Key: "b", Sent: 1, Answered: 10, Answer: record.Answer{Decision: algos.Decision{}}},
		{Key: "b", Sent: 2, Answered: 2, Err: errNotSent},
		{Key: "a", Sent: 3, Answered: 9, Answer: record.Answer{Decision: algos.Decision{Allowed: true}, Malformed: `X-RateLimit-Remaining: "x" is not an integer`}},
	}
	v := Records(recs, algos.BucketPromise(l), l)
	if v.Keys != 2 || v.Offered != 4 || v.Admitted != 2 || v.Denied != 1 || v.Failed != 1 || v.Most != 2 || v.Allowed != 20 {
		t.Errorf("%+v", v)
	}
	if b, ok := v.Caught(breach.MalformedAnswer); !ok || b.Count != 1 || !strings.Contains(v.Row(), "caught: malformed answer 1") {
		t.Errorf("%s", v)
	}
	fmt.Fprint(testWriter{t}, v.String())
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log("\n" + string(b)); return len(b), nil }

// The Remaining rule convicts exactly the answers a brute force over every
// admit's Sent convicts: those whose Remaining, with the admits certainly
// decided before them (answered before the answer was sent) and the
// request itself when admitted, is more than the promise allows from that
// Sent to the answer's return; a Remaining of 0 is never convicted.
func TestRemainingRuleAgreesWithBruteForce(t *testing.T) {
	l := algos.MustLimit(3, 100*ms, 4)
	for _, shape := range []promiseShape{bucketShape, slidingShape} {
		convicted := 0
		for seed := range uint64(300) {
			rng := rand.New(rand.NewPCG(seed, 3))
			var recs, admits []record.Record
			var ranked []int // the records seen at an instant and ranked, in rank order
			for range 1 + rng.IntN(14) {
				s := rng.Int64N(300 * ms)
				r := record.Record{Key: "k", Sent: s, Answered: s + rng.Int64N(30*ms),
					Answer: record.Answer{Decision: algos.Decision{Allowed: rng.IntN(3) > 0, Remaining: rng.Int64N(5)}, Known: record.FieldRemaining}}
				if rng.IntN(3) == 0 { // seen, at one of a few instants, so that some share their µs
					s = rng.Int64N(6) * 50 * ms
					r.Sent, r.Decided, r.Answered, r.Seen = s, s, s, record.SeenDecided|record.SeenOrder
					ranked = append(ranked, len(recs))
				}
				recs = append(recs, r)
			}
			slices.SortStableFunc(ranked, func(i, j int) int { return cmp.Compare(recs[i].Decided, recs[j].Decided) })
			for rank, i := range ranked {
				recs[i].Order = int64(rank + 1)
			}
			for _, r := range recs {
				if r.Allowed {
					admits = append(admits, r)
				}
			}
			// certainlyBefore: a's span ends before r's begins, or both are
			// ranked at one instant and a comes first.
			certainlyBefore := func(a, r record.Record) bool {
				return a.Answered < r.Sent || a.Seen.Has(record.SeenOrder) && r.Seen.Has(record.SeenOrder) && a.Decided == r.Decided && a.Order < r.Order
			}
			want := int64(0)
			for _, r := range recs {
				own := int64(0)
				if r.Allowed {
					own = 1
				}
				bad := false
				for _, x := range append([]record.Record{r}, admits...) {
					if !certainlyBefore(x, r) && x.Sent != r.Sent {
						continue
					}
					c := int64(0)
					for _, a := range admits {
						in := certainlyBefore(a, r) && a.Sent >= x.Sent
						if shape == slidingShape {
							in = certainlyBefore(a, r) && a.Sent > r.Answered-l.Window
						}
						if in {
							c++
						}
					}
					if shape == bucketShape && (c+own+r.Remaining)*l.Window > l.Burst*l.Window+l.Rate*(r.Answered-x.Sent) ||
						shape == slidingShape && c+own+r.Remaining > l.Rate {
						bad = true
					}
				}
				if bad && r.Remaining > 0 {
					want++
				}
			}
			if got := judgeRemaining(recs, admits, shape, l); got.count != want {
				t.Fatalf("shape %d, seed %d: %d answers convicted, brute force %d (%s)", shape, seed, got.count, want, got.why)
			}
			convicted += int(want)
		}
		if convicted == 0 {
			t.Errorf("shape %d: nothing convicted in 300 seeds: the cases test nothing", shape)
		}
	}
}

// errNotSent stands for a request its driver never sent (live's
// errNotSent): a record with no decision.
var errNotSent = errors.New("not sent")
