package ceiling

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
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
	// loop sends on schedule however slow the answers, up to this many at
	// once (a request due beyond it is not sent: Result.Dropped).
	MaxWorkers uint64
}

// Result is what a drive measured, tallied from its records.
type Result struct {
	Offered int // Rate × Duration
	// Sent is the requests the driver sent; Accepted the 2xx answers,
	// Rejected the 429s and Failed every other outcome (an error, a
	// timeout, another status, an answer whose rate-limit headers cannot
	// be read). Dropped is the requests the schedule called for while
	// MaxWorkers were in flight, not sent: the offer a starved machine
	// could not make, which the limiter never saw.
	Sent, Accepted, Rejected, Failed, Dropped int
	// Span is from the first request sent to the last.
	Span time.Duration
	// P50 and P99 are the answers' latency, nearest rank, over all sent.
	P50, P99 time.Duration
	// FirstFailure is the first failed request's error or status.
	FirstFailure string
	// Records are the requests as the client saw them (live.Drive's, node i
	// being Load.Targets[i]), for the one judge of records, live.Judge.
	Records []record.Record
}

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

// Drive offers ld's load (live.Drive: open loop on vegeta's constant
// pacer) and tallies the answers. It returns when the last answer is in,
// or with ctx's error when ctx ends first.
func Drive(ctx context.Context, ld Load) (Result, error) {
	if err := ld.check(true); err != nil {
		return Result{}, err
	}
	recs, err := live.Drive(ctx, ld.target(), live.Load{Keys: []string{driveKey}, Rate: ld.Rate, Duration: ld.Duration, Timeout: ld.Timeout, MaxInFlight: ld.maxInFlight()})
	res := tally(recs)
	res.Offered = int(float64(ld.Rate) * ld.Duration.Seconds())
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
	if workers > uint64(ld.maxInFlight()) {
		return Result{}, fmt.Errorf("ceiling: %d workers is more than MaxWorkers %d", workers, ld.maxInFlight())
	}
	keys := make([]string, workers) // one closed-loop client each, all on the one key
	for i := range keys {
		keys[i] = driveKey
	}
	recs, err := live.Drive(ctx, ld.target(), live.Load{Keys: keys, Loop: func() live.Client { return backToBack{} }, Duration: ld.Duration, Timeout: ld.Timeout, MaxInFlight: ld.maxInFlight()})
	return tally(recs), err
}

// driveKey names the records' key: the key the target sees is in
// Load.Header, so the drive sends none of its own (live.HTTP's KeyHeader "-").
const driveKey = "ceiling"

// target is ld's nodes as live's HTTP target.
func (ld Load) target() live.HTTP {
	return live.HTTP{Nodes: ld.Targets, Path: ld.Path, Header: ld.Header, KeyHeader: "-"}
}

func (ld Load) maxInFlight() int {
	if ld.MaxWorkers == 0 {
		return 512
	}
	return int(min(ld.MaxWorkers, 1<<20))
}

// backToBack is a closed-loop client that sends its next request the
// moment the last is answered, whatever the answer said.
type backToBack struct{}

func (backToBack) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return 0, true
	}
	return last.Answered, true
}

// tally counts recs (sorted by Sent, as live.Drive returns them) into a
// Result.
func tally(recs []record.Record) Result {
	res := Result{Records: recs}
	latencies := make([]time.Duration, 0, len(recs))
	for _, r := range recs {
		if errors.Is(r.Err, live.ErrInFlight) {
			res.Dropped++
			continue
		}
		res.Sent++
		latencies = append(latencies, time.Duration(r.Answered-r.Sent)*time.Microsecond)
		switch {
		case r.Err == nil && r.Status >= 200 && r.Status < 300:
			res.Accepted++
		case r.Err == nil && r.Status == http.StatusTooManyRequests:
			res.Rejected++
		default:
			res.Failed++
			if res.FirstFailure == "" {
				res.FirstFailure = fmt.Sprintf("status %d %v", r.Status, r.Err)
			}
		}
	}
	if n := len(recs); n > 0 {
		res.Span = time.Duration(recs[n-1].Sent-recs[0].Sent) * time.Microsecond
	}
	res.P50, res.P99 = rank(latencies, 50), rank(latencies, 99)
	return res
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
