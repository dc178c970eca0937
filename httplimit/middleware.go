package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/prometheus/client_golang/prometheus"
)

// The header names of the contract.
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderRetryAfter = "Retry-After"
	// HeaderDegraded is set to "fail-open" or "fail-closed" on a response
	// the limiter could not decide.
	HeaderDegraded = "X-RateLimit-Degraded"
)

// FailurePolicy is what the middleware does when its limiter fails to decide.
type FailurePolicy uint8

const (
	// FailClosed answers 503 Service Unavailable with Retry-After 1:
	// nothing unlimited gets through while the store is away.
	FailClosed FailurePolicy = iota
	// FailOpen serves the request undecided: the API stays up, unlimited,
	// and Stats.FailedOpen counts every such request.
	FailOpen
)

// String is "fail-closed" or "fail-open", as HeaderDegraded says it.
func (p FailurePolicy) String() string {
	switch p {
	case FailClosed:
		return "fail-closed"
	case FailOpen:
		return "fail-open"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// Options configure a Middleware.
type Options struct {
	// Quota is X-RateLimit-Limit: the most requests a fresh key is
	// admitted at once (QuotaOf finds it for a limiter.Spec). It must be
	// positive.
	Quota int64
	// Key says whose request it is; nil is ByHeader("X-API-Key") falling
	// back to ByIP.
	Key KeyFunc
	// OnError is the policy when the limiter fails; the zero value is
	// FailClosed.
	OnError FailurePolicy
	// Timeout bounds each decision, so that a store that stops answering
	// costs a request at most this long before OnError decides; 0 leaves
	// it to the request's context. Tens of milliseconds is typical. It is
	// a context deadline, so it bounds a go-redis call only on a client
	// made with ContextTimeoutEnabled: true; without it go-redis waits its
	// ReadTimeout (3 s by default) whatever the context says, which the
	// blackhole drill (package drills) measures.
	Timeout time.Duration
}

// Stats counts the middleware's answers since it was made.
type Stats struct {
	Admitted, Denied int64
	// FailedOpen is the requests served undecided under FailOpen, and
	// FailedClosed those refused with 503 under FailClosed.
	FailedOpen, FailedClosed int64
}

// Middleware puts a Limiter in front of handlers. It is safe for
// concurrent use.
type Middleware struct {
	lim                      Limiter
	opts                     Options
	quota                    string
	admitted, denied         atomic.Int64
	failedOpen, failedClosed atomic.Int64
	latency                  *prometheus.HistogramVec // MetricDecisionSeconds
}

// New returns the middleware of lim under opts, or an error saying what is
// wrong with them.
func New(lim Limiter, opts Options) (*Middleware, error) {
	switch {
	case lim == nil:
		return nil, errors.New("httplimit: no limiter")
	case opts.Quota <= 0:
		return nil, fmt.Errorf("httplimit: Quota must be positive, got %d", opts.Quota)
	case opts.OnError != FailClosed && opts.OnError != FailOpen:
		return nil, fmt.Errorf("httplimit: unknown policy %v", opts.OnError)
	case opts.Timeout < 0:
		return nil, fmt.Errorf("httplimit: negative Timeout %v", opts.Timeout)
	}
	if opts.Key == nil {
		opts.Key = FirstOf(ByHeader("X-API-Key"), ByIP)
	}
	return &Middleware{lim: lim, opts: opts, quota: strconv.FormatInt(opts.Quota, 10), latency: newLatency()}, nil
}

// Stats returns the counts so far.
func (m *Middleware) Stats() Stats {
	return Stats{
		Admitted:     m.admitted.Load(),
		Denied:       m.denied.Load(),
		FailedOpen:   m.failedOpen.Load(),
		FailedClosed: m.failedClosed.Load(),
	}
}

// Wrap returns next behind the limiter.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := m.opts.Key(r)
		if err != nil {
			http.Error(w, "rate limit: "+err.Error(), http.StatusBadRequest)
			return
		}
		ctx := r.Context()
		if m.opts.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, m.opts.Timeout)
			defer cancel()
		}
		start := time.Now()
		d, err := m.lim.Allow(ctx, key)
		m.observe(start, d, err)
		h := w.Header()
		h.Set(HeaderLimit, m.quota)
		if err != nil {
			h.Set(HeaderDegraded, m.opts.OnError.String())
			if m.opts.OnError == FailOpen {
				m.failedOpen.Add(1)
				next.ServeHTTP(w, r)
				return
			}
			m.failedClosed.Add(1)
			h.Set(HeaderRetryAfter, "1")
			http.Error(w, "rate limit: the limiter could not decide", http.StatusServiceUnavailable)
			return
		}
		h.Set(HeaderRemaining, strconv.FormatInt(max(d.Remaining, 0), 10))
		h.Set(HeaderReset, strconv.FormatInt(Seconds(d.Reset), 10))
		if !d.Allowed {
			m.denied.Add(1)
			h.Set(HeaderRetryAfter, strconv.FormatInt(max(Seconds(d.RetryAfter), 1), 10))
			http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
			return
		}
		m.admitted.Add(1)
		next.ServeHTTP(w, r)
	})
}

// Seconds is µs as whole seconds, rounded up: a client told to wait that
// long has waited at least as long as the limiter asked.
func Seconds(us int64) int64 {
	if us <= 0 {
		return 0
	}
	return (us + algos.Second - 1) / algos.Second
}
