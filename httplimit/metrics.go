package httplimit

import (
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/prometheus/client_golang/prometheus"
)

// The names of the middleware's Prometheus metrics (see Collector).
const (
	// MetricDecisions is the counter of the requests the middleware has
	// answered, by LabelResult: the same four counts as Stats, read from
	// the same counters at each scrape, so the two always agree.
	MetricDecisions = "httplimit_decisions_total"
	// MetricDecisionSeconds is the histogram of the time one call of the
	// Limiter took, in seconds, by LabelResult, with buckets from 100 µs
	// (a Redis round trip on loopback) to 1 s (DecisionBuckets). A failed
	// decision usually takes Options.Timeout.
	MetricDecisionSeconds = "httplimit_decision_seconds"
	// LabelResult is the label of both metrics, one of the Result values.
	LabelResult = "result"
)

// The values of LabelResult.
const (
	// ResultAdmitted is a request the limiter admitted (Stats.Admitted).
	ResultAdmitted = "admitted"
	// ResultDenied is a request the limiter denied, answered 429
	// (Stats.Denied).
	ResultDenied = "denied"
	// ResultFailedOpen is a request the limiter failed to decide, served
	// under FailOpen (Stats.FailedOpen): the signal to alert on.
	ResultFailedOpen = "fail_open"
	// ResultFailedClosed is a request the limiter failed to decide,
	// refused with 503 under FailClosed (Stats.FailedClosed).
	ResultFailedClosed = "fail_closed"
)

// DecisionBuckets returns the upper bounds, in seconds, of
// MetricDecisionSeconds' buckets: 100 µs to 1 s in 1-2.5-5 steps. A fresh
// slice each call.
func DecisionBuckets() []float64 {
	return []float64{
		0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5,
		1,
	}
}

var results = [...]string{ResultAdmitted, ResultDenied, ResultFailedOpen, ResultFailedClosed}

var decisionsDesc = prometheus.NewDesc(MetricDecisions,
	"Requests answered by the rate-limit middleware, by result: admitted, denied (429), fail_open (served undecided) or fail_closed (503).",
	[]string{LabelResult}, nil)

// newLatency returns the decision-latency histogram, with every result's
// series present from the start.
func newLatency() *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricDecisionSeconds,
		Help:    "Time one call of the rate limiter took, in seconds, by result.",
		Buckets: DecisionBuckets(),
	}, []string{LabelResult})
	for _, r := range results {
		h.WithLabelValues(r)
	}
	return h
}

// observe records one decision begun at start that returned d and err.
func (m *Middleware) observe(start time.Time, d algos.Decision, err error) {
	var r string
	switch {
	case err != nil && m.opts.OnError == FailOpen:
		r = ResultFailedOpen
	case err != nil:
		r = ResultFailedClosed
	case d.Allowed:
		r = ResultAdmitted
	default:
		r = ResultDenied
	}
	m.latency.WithLabelValues(r).Observe(time.Since(start).Seconds())
}

// Collector returns the collector of m's metrics, MetricDecisions and
// MetricDecisionSeconds, for the caller to register with the registry it
// serves (promhttp.HandlerFor); nothing is registered with Prometheus's
// default registry behind the caller's back. Two middlewares in one
// registry need a label to tell them apart, for instance
// prometheus.WrapRegistererWith(prometheus.Labels{"limiter": "api"}, reg).
// A request refused 400 because it had no key is not a decision and is in
// neither metric, as it is in no count of Stats.
func (m *Middleware) Collector() prometheus.Collector { return collector{m} }

// Register registers m's Collector with reg.
func (m *Middleware) Register(reg prometheus.Registerer) error {
	return reg.Register(m.Collector())
}

// collector is a Middleware seen as a prometheus.Collector: its decision
// counts are read from the counters behind Stats at each scrape.
type collector struct{ m *Middleware }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- decisionsDesc
	c.m.latency.Describe(ch)
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Stats()
	for i, n := range [...]int64{s.Admitted, s.Denied, s.FailedOpen, s.FailedClosed} {
		ch <- prometheus.MustNewConstMetric(decisionsDesc, prometheus.CounterValue, float64(n), results[i])
	}
	c.m.latency.Collect(ch)
}
