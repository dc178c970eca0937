package httpcheck_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/httpcheck"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
)

// The check reads answers with live.Parse, so the conventions it reads are
// every judge's: the reference middleware's headers restated as the IETF
// RateLimit fields, or with its Reset in milliseconds (said in
// Options.Reset), keep the contract as X-RateLimit-* in seconds do. A
// Reset in milliseconds read as seconds is a thousand times too late: the
// contract has no rule for it, the live judge catches it. Every exchange
// carries its record, and the live verdict of a correct limiter is clean.
func TestTheCheckReadsEveryConvention(t *testing.T) {
	l := algos.MustLimit(10, 2*algos.Second, 10)
	ietf := func(t testing.TB) http.Handler {
		h, _ := reference(t, algos.TokenBucket, l)
		return rewrite(h, func(_, _ int, h http.Header) {
			h.Set("RateLimit", fmt.Sprintf("limit=%s, remaining=%s, reset=%s", h.Get(httplimit.HeaderLimit), h.Get(httplimit.HeaderRemaining), h.Get(httplimit.HeaderReset)))
			h.Set("RateLimit-Policy", h.Get(httplimit.HeaderLimit)+";w=2")
			for _, name := range []string{httplimit.HeaderLimit, httplimit.HeaderRemaining, httplimit.HeaderReset} {
				h.Del(name)
			}
		})
	}
	// millis restates the Reset in milliseconds, rounded up, from the
	// decision the middleware made (its whole seconds are too coarse).
	millis := func(t testing.TB) http.Handler {
		lim, q := local(t, algos.TokenBucket, l)
		var reset atomic.Int64 // the requests come one at a time
		withMillis := httplimit.LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
			d, err := lim.Allow(ctx, key)
			reset.Store(d.Reset)
			return d, err
		})
		return rewrite(behind(t, withMillis, q, httplimit.FailClosed), func(_, _ int, h http.Header) {
			h.Set(httplimit.HeaderReset, strconv.FormatInt((reset.Load()+999)/1000, 10))
		})
	}
	cases := []struct {
		name    string
		handler func(testing.TB) http.Handler
		opts    httpcheck.Options
		caught  breach.Kind // 0: the check is OK
	}{
		{"X-RateLimit-*, Reset in seconds", func(t testing.TB) http.Handler { h, _ := reference(t, algos.TokenBucket, l); return h }, httpcheck.Options{Window: 2 * time.Second}, 0},
		{"the IETF RateLimit fields", ietf, httpcheck.Options{Window: 2 * time.Second}, 0},
		{"Reset in milliseconds, said", millis, httpcheck.Options{Window: 2 * time.Second, Reset: live.ResetMillis}, 0},
		{"Reset in milliseconds, read as seconds", millis, httpcheck.Options{Window: 2 * time.Second}, breach.ResetPastIdle},
	}
	t.Parallel()
	checks := make([]func() (*httpcheck.Report, error), len(cases))
	for i, c := range cases {
		checks[i] = started(t, c.handler(t), c.opts)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := finished(t, checks[i])
			out := written(t, r)
			t.Logf("\n%s", out)
			for _, e := range r.Exchanges {
				if e.Record.Status != e.Status || e.Record.Key != r.Key || !e.Record.Known.Has(record.FieldLimit|record.FieldRemaining|record.FieldReset) {
					t.Fatalf("exchange %d carries the record %v", e.N, e.Record)
				}
			}
			if r.Limit != 10 || r.Live.Unjudged != "" || r.Live.Offered != len(r.Exchanges) {
				t.Errorf("judged against limit %d; live: %s", r.Limit, r.Live.Row())
			}
			if c.caught == 0 {
				if !r.OK() {
					t.Errorf("a correct limiter failed the check")
				}
				return
			}
			b, ok := r.Live.Caught(c.caught)
			if !ok || len(r.Breaches) != 0 || r.OK() || !strings.Contains(out, ": the live judge caught ") || !strings.Contains(out, b.Why) {
				t.Errorf("want the contract kept and the live judge to catch %s, in the report", c.caught)
			}
		})
	}
}
