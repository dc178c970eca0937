package traffic_test

import (
	"errors"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// runLoop plays one closed-loop client alone on key 0.
func runLoop(t *testing.T, a algos.Algorithm, l algos.Limit, d model.Deployment, c func() record.Client) model.Result {
	t.Helper()
	res, err := model.Run(model.Config{Limiter: limiter.FromAlgorithm(a), Limit: l, Deployment: d, Nodes: 4,
		RTT: 1000, Jitter: model.DefaultJitter, Seed: 1, Loop: []record.LoopClient{{Key: 0, New: c}}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// deniedAfterDenial counts the requests denied right after a denial: the
// retries a client made at the Retry-After it was given, and lost.
func deniedAfterDenial(res model.Result) int {
	n := 0
	for i := 1; i < len(res.Outcomes); i++ {
		if !res.Outcomes[i-1].Admitted && !res.Outcomes[i].Admitted {
			n++
		}
	}
	return n
}

// The Retry-After client gets exactly the limit from an honest limiter on
// one node (a burst of 10, then one each 100 ms for 10 s: 109 admits, no
// retry denied), and a Retry-After cut in half shows as denied retries.
func TestRetryAfterClientExposesADishonestRetryAfter(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 10)
	c := traffic.RetryAfterClient(0, 10*algos.Second, 1)
	honest := runLoop(t, algos.TokenBucket, l, model.Ideal, c)
	if got, lost := honest.Keys[0].Admitted, deniedAfterDenial(honest); got != 109 || lost != 0 {
		t.Errorf("honest Retry-After: %d admits and %d retries denied, want 109 and 0", got, lost)
	}
	short := algos.TokenBucket
	short.Name = "token-bucket, Retry-After halved"
	short.Decide = func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		d := algos.TokenBucket.Decide(s, now, l)
		d.RetryAfter /= 2
		return d
	}
	cut := runLoop(t, short, l, model.Ideal, c)
	if lost := deniedAfterDenial(cut); lost < 90 {
		t.Errorf("a Retry-After cut in half lost %d retries, want one for nearly every admit after the burst", lost)
	}
	t.Logf("honest: %d admits of %d requests; halved: %d admits of %d requests, %d retries denied",
		honest.Keys[0].Admitted, honest.Keys[0].Requests, cut.Keys[0].Admitted, cut.Keys[0].Requests, deniedAfterDenial(cut))
}

// The drain-then-idle client, behind a store, breaks the promise of a
// limiter whose key expires a second before it is idle (10 per second,
// burst 20), and not that of the same limiter whose key lives until idle.
func TestDrainIdleClientExposesAShortTTL(t *testing.T) {
	l := algos.MustLimit(10, algos.Second, 20)
	c := traffic.DrainIdleClient(0, 30*algos.Second, 1)
	for _, extra := range []int64{-algos.Second, 0} {
		a := algos.TokenBucket
		a.KeyTTL = func(d algos.Decision, _ algos.Limit) int64 { return d.Reset + extra }
		res := runLoop(t, a, l, model.StoreClock, c)
		v := res.Keys[0].Violation
		switch {
		case extra < 0 && v == nil:
			t.Errorf("a key TTL 1 s short: %d admits of %d requests and the promise held", res.Keys[0].Admitted, res.Keys[0].Requests)
		case extra == 0 && v != nil:
			t.Errorf("a key TTL exactly to idle broke the promise: %v", v)
		case v != nil:
			t.Logf("a key TTL 1 s short: %s", v.Reason)
		}
	}
}

// The reset-burst client gets 2L-1 admits within 2·margin from a window
// that starts over at the reset it reports (the aligned fixed window, the
// first-hit window), on one node with a true clock, and at most L from the
// sliding log.
func TestResetBurstClientDoublesWindowsThatStartOver(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 100)
	margin := l.Window / 100
	c := traffic.ResetBurstClient(0, 20*algos.Second, margin, 1)
	for _, tc := range []struct {
		a    algos.Algorithm
		want int
	}{{algos.FixedWindow, 199}, {algos.FirstHitWindow, 199}, {algos.SlidingLog, 100}} {
		res := runLoop(t, tc.a, l, model.Ideal, c)
		peak := algos.MostInAnyWindow(res.AdmitTimes(0), 2*margin+1)
		if peak != tc.want {
			t.Errorf("%s: %d admits within 2·margin, want %d", tc.a.Name, peak, tc.want)
		}
		if v := res.Keys[0].Violation; v != nil {
			t.Errorf("%s broke its own promise: %v", tc.a.Name, v)
		}
	}
}

// answered is a record of a request sent at sent and answered at answered,
// with the answer d stating the counts in known (or failed with err).
func answered(sent, answered int64, d algos.Decision, known record.Fields, err error) *record.Record {
	return &record.Record{Sent: sent, Answered: answered, Answer: record.Answer{Decision: d, Known: known}, Err: err}
}

// A closed-loop client, live or simulated, waits only what an answer
// stated: a denial without a Retry-After (or Reset), or a failed request,
// is no wait, and the client comes back at its pace; every client starts
// at start and stops at end.
func TestClosedLoopClientsWaitOnlyWhatTheAnswerStated(t *testing.T) {
	denied := algos.Decision{RetryAfter: 500, Reset: 1000}
	admitted := algos.Decision{Allowed: true, Reset: 1000}
	failed := errors.New("store unreachable")
	cases := []struct {
		name   string
		client func() record.Client
		last   *record.Record
		want   int64
		more   bool
	}{
		{"retry-after: first request at start", traffic.RetryAfterClient(40, 10_000, 10), nil, 40, true},
		{"retry-after: nothing before start is sent", traffic.RetryAfterClient(10_000, 10_000, 10), nil, 10_000, false},
		{"retry-after: an admit, then its pace", traffic.RetryAfterClient(0, 10_000, 10), answered(100, 103, admitted, record.FieldsDecision, nil), 110, true},
		{"retry-after: a denial, at its Retry-After", traffic.RetryAfterClient(0, 10_000, 10), answered(100, 103, denied, record.FieldsDecision, nil), 603, true},
		{"retry-after: a denial stating none, at its pace", traffic.RetryAfterClient(0, 10_000, 10), answered(100, 103, denied, record.FieldReset, nil), 110, true},
		{"retry-after: a failure, at its pace", traffic.RetryAfterClient(0, 10_000, 10), answered(100, 103, denied, record.FieldsDecision, failed), 110, true},
		{"retry-after: a wait past the end ends it", traffic.RetryAfterClient(0, 600, 10), answered(100, 103, denied, record.FieldsDecision, nil), 603, false},
		{"at-reset: an admit, then its pace", traffic.AtResetClient(0, 10_000, 10), answered(100, 103, admitted, record.FieldsDecision, nil), 110, true},
		{"at-reset: a denial, at its Reset", traffic.AtResetClient(0, 10_000, 10), answered(100, 103, denied, record.FieldsDecision, nil), 1103, true},
		{"at-reset: a denial stating no Reset, at its pace", traffic.AtResetClient(0, 10_000, 10), answered(100, 103, denied, record.FieldRetryAfter, nil), 110, true},
		{"at-reset: a failure, at its pace", traffic.AtResetClient(0, 10_000, 10), answered(100, 103, denied, record.FieldsDecision, failed), 110, true},
		{"at-reset: a negative Reset is none", traffic.AtResetClient(0, 10_000, 10), answered(100, 103, algos.Decision{Reset: -5}, record.FieldsDecision, nil), 110, true},
	}
	for _, c := range cases {
		cl := c.client()
		if c.last != nil {
			cl.Next(nil)
		}
		if got, more := cl.Next(c.last); got != c.want || more != c.more {
			t.Errorf("%s: next %d (more %v), want %d (more %v)", c.name, got, more, c.want, c.more)
		}
	}
}
