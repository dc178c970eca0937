package ceiling

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
)

// DriveTally is what a drive measured, tallied from its records.
type DriveTally struct {
	Offered int // Rate × Duration
	// Sent is the requests the driver sent; Accepted the 2xx answers,
	// Rejected the 429s and Failed every other outcome (an error, a
	// timeout, another status, an answer whose rate-limit headers cannot
	// be read). Dropped is the requests the schedule called for while
	// the load's MaxInFlight were in flight, not sent: the offer a
	// starved machine could not make, which the limiter never saw.
	Sent, Accepted, Rejected, Failed, Dropped int
	// Span is from the first request sent to the last.
	Span time.Duration
	// P50 and P99 are the answers' latency, nearest rank, over all sent.
	P50, P99 time.Duration
	// FirstFailure is the first failed request's error or status.
	FirstFailure string
	// Records are the requests as the client saw them (live.Drive's, node i
	// being the target's Nodes[i]), for the one judge of records,
	// judge.Records.
	Records []record.Record
}

// AcceptedPerSecond is the accepted over the span.
func (r DriveTally) AcceptedPerSecond() float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(r.Accepted) / r.Span.Seconds()
}

// BeyondBurstPerSecond is the accepted, less one burst of quota, over the
// span: what the limit's rate let through once the fresh key's burst was
// spent. For one shared limiter it is the rate; a run of seconds cannot
// read the rate from AcceptedPerSecond, which the burst inflates.
func (r DriveTally) BeyondBurstPerSecond(quota int64) float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(int64(r.Accepted)-quota) / r.Span.Seconds()
}

// Drive offers ld to target and tallies the answers: live.Drive, open
// loop on vegeta's constant pacer, of the one key ld.Keys names (the
// limit under test is per key, and Result's rates are that key's) at
// ld.Rate for ld.Duration. It returns when the last answer is in, or with
// ctx's error when ctx ends first.
func Drive(ctx context.Context, target live.HTTP, ld live.Load) (DriveTally, error) {
	if err := checkLoad(ld); err != nil {
		return DriveTally{}, err
	}
	recs, err := live.Drive(ctx, target, withMaxInFlight(ld))
	res := tally(recs)
	res.Offered = int(float64(ld.Rate) * ld.Duration.Seconds())
	return res, err
}

// Saturate is the closed-loop ceiling of the path: workers clients of the
// one key ld.Keys names, each sending its next request as soon as the last
// is answered, for ld.Duration, which offers no Rate. Its
// AcceptedPerSecond plus rejections over Span is the path's rate.
func Saturate(ctx context.Context, target live.HTTP, ld live.Load, workers int) (DriveTally, error) {
	if err := checkLoad(ld); err != nil {
		return DriveTally{}, err
	}
	ld = withMaxInFlight(ld)
	switch {
	case workers <= 0:
		return DriveTally{}, errors.New("ceiling: Saturate needs at least one worker")
	case workers > ld.MaxInFlight:
		return DriveTally{}, fmt.Errorf("ceiling: %d workers is more than MaxInFlight %d", workers, ld.MaxInFlight)
	}
	keys := make([]string, workers) // one closed-loop client each, all on the one key
	for i := range keys {
		keys[i] = ld.Keys[0]
	}
	ld.Keys, ld.Loop = keys, func() record.Client { return backToBack{} }
	recs, err := live.Drive(ctx, target, ld)
	return tally(recs), err
}

// checkLoad says what is wrong with ld for a ceiling drive, beyond what
// live.Drive checks: the drive measures one key's rate and must name it
// (Saturate gives it to every client; live.Drive's fresh random key stays
// inside the drive), and its requests are its own, at Rate or back to
// back, not a Loop's or a Plan's.
func checkLoad(ld live.Load) error {
	switch {
	case len(ld.Keys) != 1:
		return fmt.Errorf("ceiling: a drive is of one key, named in Load.Keys; got %d", len(ld.Keys))
	case ld.Loop != nil || ld.Plan != nil:
		return errors.New("ceiling: a drive takes no Loop or Plan: Drive sends at Rate, Saturate back to back")
	}
	return nil
}

// withMaxInFlight is ld bounded at 512 requests in flight unless it says
// otherwise, twice live's default: a ceiling drive's answers may wait
// seconds on a starved machine (its tests allow 25 s), and each request
// the bound keeps from being sent is offer lost (Result.Dropped).
func withMaxInFlight(ld live.Load) live.Load {
	if ld.MaxInFlight == 0 {
		ld.MaxInFlight = 512
	}
	return ld
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
func tally(recs []record.Record) DriveTally {
	res := DriveTally{Records: recs}
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
