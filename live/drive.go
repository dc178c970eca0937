package live

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/record"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Load is an open-loop drive: each key offered Rate requests a second,
// evenly spaced (vegeta's constant pacer), for Duration. The offer does not
// wait for answers: a slow target gets more requests in flight, up to
// MaxInFlight, never a slower offer.
type Load struct {
	// Keys are the identities driven, each at Rate; none is one fresh
	// random key ("live-" and 12 hex digits), so that no state left by an
	// earlier run is judged.
	Keys []string
	// Rate is the requests a second offered to each key; it must be
	// positive.
	Rate int
	// Duration is how long requests are sent; it must be positive.
	Duration time.Duration
	// Timeout bounds each request (default 5 s): one that takes longer is
	// recorded with its error. Drive returns at most Duration + Timeout
	// after it starts.
	Timeout time.Duration
	// MaxInFlight bounds the requests awaiting answers (default 256); a
	// request due when that many are in flight is recorded, not sent, with
	// ErrInFlight.
	MaxInFlight int
}

func (ld *Load) check() error {
	switch {
	case ld.Rate <= 0:
		return fmt.Errorf("live: the offered rate must be positive, got %d a second", ld.Rate)
	case ld.Duration <= 0:
		return fmt.Errorf("live: the duration must be positive, got %v", ld.Duration)
	case ld.Timeout < 0:
		return fmt.Errorf("live: negative timeout %v", ld.Timeout)
	case ld.MaxInFlight < 0:
		return fmt.Errorf("live: negative MaxInFlight %d", ld.MaxInFlight)
	case ld.Rate > 1_000_000/max(1, len(ld.Keys)):
		return fmt.Errorf("live: %d keys at %d a second is more than a million requests a second", len(ld.Keys), ld.Rate)
	}
	for _, k := range ld.Keys {
		if k == "" {
			return errors.New("live: an empty key")
		}
	}
	if len(ld.Keys) == 0 {
		b := make([]byte, 6)
		rand.Read(b)
		ld.Keys = []string{"live-" + hex.EncodeToString(b)}
	}
	if ld.Timeout == 0 {
		ld.Timeout = 5 * time.Second
	}
	if ld.MaxInFlight == 0 {
		ld.MaxInFlight = 256
	}
	return nil
}

// Drive offers ld to target in real time and records every request,
// sorted by Sent. Request i goes to key i mod K, and each key's requests
// go to the target's nodes in turn. It returns when every answer is in
// (at most ld.Timeout after the last send), or early with ctx's error,
// the records so far included (requests cut short carry ctx's error).
func Drive(ctx context.Context, target Target, ld Load) ([]record.Record, error) {
	if target == nil {
		return nil, errors.New("live: no target")
	}
	if err := ld.check(); err != nil {
		return nil, err
	}
	nodes, call, err := target.open(ld.MaxInFlight)
	if err != nil {
		return nil, err
	}
	keys := len(ld.Keys)
	pacer := vegeta.ConstantPacer{Freq: ld.Rate * keys, Per: time.Second}
	var (
		mu      sync.Mutex
		records []record.Record
		wg      sync.WaitGroup
		slots   = make(chan struct{}, ld.MaxInFlight)
	)
	add := func(r record.Record) {
		mu.Lock()
		records = append(records, r)
		mu.Unlock()
	}
	start := time.Now()
	since := func() int64 { return time.Since(start).Microseconds() }
	var stopped error
	for hits := uint64(0); ; hits++ {
		elapsed := time.Since(start)
		if elapsed >= ld.Duration {
			break
		}
		wait, stop := pacer.Pace(elapsed, hits)
		if stop {
			break
		}
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
			}
		}
		if err := ctx.Err(); err != nil {
			stopped = err
			break
		}
		if time.Since(start) >= ld.Duration {
			break
		}
		key, node := ld.Keys[hits%uint64(keys)], int(hits/uint64(keys)%uint64(nodes))
		select {
		case slots <- struct{}{}:
		default:
			now := since()
			add(record.Record{Key: key, Node: node, Sent: now, Answered: now, Err: ErrInFlight})
			continue
		}
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, ld.Timeout)
			defer cancel()
			r := record.Record{Key: key, Node: node, Sent: since()}
			done, req := make(chan record.Record, 1), r
			go func() {
				// The slot is held until the call returns, even one that
				// ignores its context and outlives the record.
				defer func() { <-slots }()
				done <- safeCall(rctx, call, req, since)
			}()
			select {
			case r = <-done:
			case <-rctx.Done():
				r.Err, r.Answered = fmt.Errorf("live: no answer within %v: %w", ld.Timeout, rctx.Err()), since()
			}
			add(r)
		})
	}
	wg.Wait()
	slices.SortStableFunc(records, func(a, b record.Record) int { return cmp.Compare(a.Sent, b.Sent) })
	return records, stopped
}

// safeCall is call for r, timed on the run's clock, a panic recorded as
// an error.
func safeCall(ctx context.Context, call caller, r record.Record, since func() int64) (out record.Record) {
	defer func() {
		if v := recover(); v != nil {
			out = r
			out.Err, out.Answered = fmt.Errorf("live: the target panicked: %v", v), since()
		}
	}()
	r.Answer, r.Status, r.Err = call(ctx, r.Key, r.Node)
	r.Answered = since()
	return r
}
