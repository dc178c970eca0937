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
// MaxInFlight, never a slower offer. Or, with Loop set, a closed-loop
// drive: each key's client sends its next request when its answer says.
type Load struct {
	// Keys are the identities driven, each at Rate; none is one fresh
	// random key ("live-" and 12 hex digits), so that no state left by an
	// earlier run is judged.
	Keys []string
	// Rate is the requests a second offered to each key; it must be
	// positive for an open-loop drive, and 0 with Loop.
	Rate int
	// Loop, when set, drives each key closed loop instead: a client of its
	// own (Loop()) sends one request at a time, each when the client's
	// Next says, to the target's nodes in turn, until Duration.
	Loop func() Client
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
	case ld.Loop != nil && ld.Rate != 0:
		return fmt.Errorf("live: a closed-loop drive (Loop) offers no rate, got %d a second", ld.Rate)
	case ld.Loop == nil && ld.Rate <= 0:
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
	sorted := func() []record.Record {
		slices.SortStableFunc(records, func(a, b record.Record) int { return cmp.Compare(a.Sent, b.Sent) })
		return records
	}
	if ld.Loop != nil {
		errs := make([]error, keys)
		for k, key := range ld.Keys {
			wg.Go(func() { errs[k] = driveClient(ctx, ld.Loop(), key, nodes, call, ld, since, add) })
		}
		wg.Wait()
		return sorted(), errors.Join(errs...)
	}
	pacer := vegeta.ConstantPacer{Freq: ld.Rate * keys, Per: time.Second}
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
			// The slot is held until the call returns, even one that
			// ignores its context and outlives the record.
			add(timedCall(ctx, call, record.Record{Key: key, Node: node, Sent: since()}, ld.Timeout, since, func() { <-slots }))
		})
	}
	wg.Wait()
	return sorted(), stopped
}

// driveClient runs one key's closed-loop client c until ld.Duration (or
// ctx is done: its error is returned), each request timed out after
// ld.Timeout and recorded by add.
func driveClient(ctx context.Context, c Client, key string, nodes int, call caller, ld Load, since func() int64, add func(record.Record)) error {
	end := ld.Duration.Microseconds()
	next, more := c.Next(nil)
	for i := 0; more && next < end; i++ {
		if wait := next - since(); wait > 0 {
			timer := time.NewTimer(time.Duration(wait) * time.Microsecond)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if since() >= end {
			return nil
		}
		r := timedCall(ctx, call, record.Record{Key: key, Node: i % nodes, Sent: since()}, ld.Timeout, since, func() {})
		add(r)
		next, more = c.Next(&r)
	}
	return nil
}

// timedCall is call for r, given up after timeout: the record then
// carries the timeout as its error. done runs when the call returns, even
// one that ignores its context and outlives the record.
func timedCall(ctx context.Context, call caller, r record.Record, timeout time.Duration, since func() int64, done func()) record.Record {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answer, req := make(chan record.Record, 1), r
	go func() {
		defer done()
		answer <- safeCall(rctx, call, req, since)
	}()
	select {
	case r = <-answer:
	case <-rctx.Done():
		r.Err, r.Answered = fmt.Errorf("live: no answer within %v: %w", timeout, rctx.Err()), since()
	}
	return r
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
