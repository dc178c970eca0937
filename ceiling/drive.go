package ceiling

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Load is an open-loop drive of one key: Rate requests a second, evenly
// spaced, for Duration, sent to Targets in turn.
type Load struct {
	Targets  []string // the nodes' base URLs
	Path     string   // default "/"
	Header   http.Header
	Rate     int // offered requests per second
	Duration time.Duration
	// Timeout bounds each request (default 5 s); one that takes longer is
	// counted as failed.
	Timeout time.Duration
	// MaxWorkers bounds the requests in flight (default 512): an open
	// loop adds workers when the answers are slow, up to this many.
	MaxWorkers uint64
}

// Result is what a drive measured.
type Result struct {
	Offered int // Rate × Duration
	// Sent is the requests the driver sent; Accepted the 2xx answers,
	// Rejected the 429s and Failed every other outcome (an error, a
	// timeout, another status).
	Sent, Accepted, Rejected, Failed int
	// Span is from the first request sent to the last.
	Span time.Duration
	// P50 and P99 are the answers' latency, nearest rank, over all sent.
	P50, P99 time.Duration
	// FirstFailure is the first failed request's error or status.
	FirstFailure string
	// Decided bounds, for each target (indexed as Load.Targets), when its
	// limiter can have made its first and its last decision.
	Decided []DecisionSpan
}

// DecisionSpan bounds when one node's limiter decided: it decided each
// request between the request's send and its answer (2xx or 429), so its
// first decision lies in [FirstSent, FirstAnswered] and its last in
// [LastSent, LastAnswered] (µs-exact times from the first request sent).
// A stall of the machine widens those intervals instead of biasing a
// rate measured over them.
type DecisionSpan struct {
	FirstSent, FirstAnswered, LastSent, LastAnswered time.Duration
	// Decided counts the node's requests answered 2xx or 429.
	Decided int
}

// Shortest is the least time the limiter can have spent between its first
// and its last decision (0 when the bounds overlap).
func (s DecisionSpan) Shortest() time.Duration { return max(0, s.LastSent-s.FirstAnswered) }

// Longest is the most time it can have spent.
func (s DecisionSpan) Longest() time.Duration { return s.LastAnswered - s.FirstSent }

// AcceptedPerSecond is the accepted over the span.
func (r Result) AcceptedPerSecond() float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(r.Accepted) / r.Span.Seconds()
}

// BeyondBurstPerSecond is the accepted, less one burst of quota, over the
// span: what the limit's rate let through once the fresh key's burst was
// spent. For one shared limiter it is the rate; a run of seconds cannot
// read the rate from AcceptedPerSecond, which the burst inflates.
func (r Result) BeyondBurstPerSecond(quota int64) float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(int64(r.Accepted)-quota) / r.Span.Seconds()
}

// check says what is wrong with ld for a drive; Saturate, which offers no
// rate, asks for everything but the rate.
func (ld Load) check(paced bool) error {
	switch {
	case len(ld.Targets) == 0:
		return errors.New("ceiling: no targets")
	case paced && ld.Rate <= 0:
		return fmt.Errorf("ceiling: the offered rate must be positive, got %d", ld.Rate)
	case ld.Duration <= 0:
		return fmt.Errorf("ceiling: the duration must be positive, got %v", ld.Duration)
	case ld.Timeout < 0:
		return fmt.Errorf("ceiling: negative timeout %v", ld.Timeout)
	}
	for _, t := range ld.Targets {
		u, err := url.Parse(t)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("ceiling: target %q is not an http://host:port URL", t)
		}
	}
	return nil
}

// Drive offers ld's load and counts the answers. It returns when the last
// answer is in, or with ctx's error when ctx ends first.
func Drive(ctx context.Context, ld Load) (Result, error) {
	if err := ld.check(true); err != nil {
		return Result{}, err
	}
	res := Result{Offered: int(float64(ld.Rate) * ld.Duration.Seconds())}
	results := attack(ld, vegeta.ConstantPacer{Freq: ld.Rate, Per: time.Second}, ld.Duration, ld.MaxWorkers)
	err := collect(ctx, results, &res)
	return res, err
}

// Saturate is the closed-loop ceiling of the path: workers clients, each
// sending its next request as soon as the last is answered, for duration.
// Its AcceptedPerSecond plus rejections over Span is the path's rate.
func Saturate(ctx context.Context, ld Load, workers uint64) (Result, error) {
	if err := ld.check(false); err != nil {
		return Result{}, err
	}
	if workers == 0 {
		return Result{}, errors.New("ceiling: Saturate needs at least one worker")
	}
	var res Result
	err := collect(ctx, attack(ld, vegeta.ConstantPacer{}, ld.Duration, workers), &res)
	return res, err
}

// attacker is a running attack: vegeta's, to stop it, and its results.
type attacker struct {
	*vegeta.Attacker
	results <-chan *vegeta.Result
	target  map[string]int // a target's URL to its index in Load.Targets
}

// attack starts vegeta on ld's targets in turn, on loopback, with no proxy
// and no redirects, and streams the results.
func attack(ld Load, p vegeta.Pacer, d time.Duration, maxWorkers uint64) attacker {
	if ld.Timeout == 0 {
		ld.Timeout = 5 * time.Second
	}
	if maxWorkers == 0 {
		maxWorkers = 512
	}
	path := ld.Path
	if path == "" {
		path = "/"
	}
	targets := make([]vegeta.Target, len(ld.Targets))
	index := make(map[string]int, len(ld.Targets))
	for i, t := range ld.Targets {
		targets[i] = vegeta.Target{Method: http.MethodGet, URL: t + path, Header: ld.Header.Clone()}
		index[targets[i].URL] = i
	}
	workers := min(maxWorkers, 16)
	a := vegeta.NewAttacker(
		vegeta.Timeout(ld.Timeout),
		vegeta.Workers(workers),
		vegeta.MaxWorkers(maxWorkers),
		vegeta.KeepAlive(true),
		vegeta.Redirects(vegeta.NoFollow),
		vegeta.LocalAddr(net.IPAddr{IP: net.IPv4(127, 0, 0, 1)}),
		vegeta.Proxy(func(*http.Request) (*url.URL, error) { return nil, nil }),
	)
	return attacker{Attacker: a, results: a.Attack(vegeta.NewStaticTargeter(targets...), p, d, ""), target: index}
}

// collect counts a's results into res; on ctx's end it stops the attack,
// drains it, and returns ctx's error.
func collect(ctx context.Context, a attacker, res *Result) error {
	type bounds struct{ firstSent, firstAnswered, lastSent, lastAnswered time.Time }
	var (
		latencies     []time.Duration
		first, last   time.Time
		decided       = make([]bounds, len(a.target))
		stopped       error
		stopOnContext sync.Once
	)
	res.Decided = make([]DecisionSpan, len(a.target))
	for {
		var r *vegeta.Result
		var ok bool
		select {
		case r, ok = <-a.results:
		case <-ctx.Done():
			stopOnContext.Do(func() { stopped = ctx.Err(); a.Stop() })
			r, ok = <-a.results
		}
		if !ok {
			break
		}
		res.Sent++
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
		if r.Timestamp.After(last) {
			last = r.Timestamp
		}
		latencies = append(latencies, r.Latency)
		if i, ok := a.target[r.URL]; ok && (r.Code >= 200 && r.Code < 300 || r.Code == http.StatusTooManyRequests) {
			b, answered := &decided[i], r.Timestamp.Add(r.Latency)
			if res.Decided[i].Decided == 0 {
				*b = bounds{r.Timestamp, answered, r.Timestamp, answered}
			}
			res.Decided[i].Decided++
			b.firstSent, b.lastSent = earliest(b.firstSent, r.Timestamp), latest(b.lastSent, r.Timestamp)
			b.firstAnswered, b.lastAnswered = earliest(b.firstAnswered, answered), latest(b.lastAnswered, answered)
		}
		switch {
		case r.Code >= 200 && r.Code < 300:
			res.Accepted++
		case r.Code == http.StatusTooManyRequests:
			res.Rejected++
		default:
			res.Failed++
			if res.FirstFailure == "" {
				res.FirstFailure = fmt.Sprintf("status %d %s", r.Code, r.Error)
			}
		}
	}
	res.Span = last.Sub(first)
	res.P50, res.P99 = rank(latencies, 50), rank(latencies, 99)
	for i, b := range decided {
		if res.Decided[i].Decided > 0 {
			res.Decided[i] = DecisionSpan{b.firstSent.Sub(first), b.firstAnswered.Sub(first), b.lastSent.Sub(first), b.lastAnswered.Sub(first), res.Decided[i].Decided}
		}
	}
	return stopped
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// rank is the p-th percentile of ds by nearest rank (0 for none).
func rank(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := (p*len(ds) + 99) / 100 // ⌈p·n/100⌉, 1-based
	return ds[max(i, 1)-1]
}
