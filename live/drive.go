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
	// own (Loop(), called once for each of Keys, in order) sends one
	// request at a time, each when the client's Next says, to the target's
	// nodes in turn, until Duration or until it says no more. The
	// simulator's closed-loop clients are such clients (package traffic's
	// RetryAfterClient, AtResetClient and the others): the same clients, in
	// real time, handed each answer's record. A key listed k times has k
	// clients, all at once (a study's workers on one key).
	Loop func() record.Client
	// Sticky, with Loop, sends all of the k-th client's requests (the
	// k-th of Keys) to node k mod the target's nodes, instead of to the
	// nodes in turn: a worker on a connection of its own.
	Sticky bool
	// Plan, when set, is an open-loop drive of exactly these requests
	// instead of a rate: each is sent Sent µs after the drive starts, for
	// its Key, to node Node mod the target's nodes (its Cost kept on its
	// record), in the order given, which must be by Sent. The simulator's
	// traffic is such a plan (traffic.OpenLoop, each Request's Sent as
	// Sent): the same clients, in real time. Rate, Loop and Keys must then
	// be unset. A planned drive ends with its last request, sent however
	// late a stalled machine makes it.
	Plan []record.Record
	// Duration is how long requests are sent; it must be positive, except
	// with a Plan, which it only bounds (0: no bound).
	Duration time.Duration
	// Timeout bounds each request (default 5 s): one that takes longer is
	// recorded with its error. Drive returns at most Duration + Timeout
	// after it starts.
	Timeout time.Duration
	// Start, when set, is the drive's time 0, an instant of this
	// machine's clock: Drive waits for it (when it is still ahead), and
	// a Plan's Sent and every record's times count from it. Zero: the
	// drive starts when Drive is called. A trial that must put its
	// requests at given instants of another clock (a store's TIME, mapped
	// to this machine's) sets it.
	Start time.Time
	// MaxInFlight bounds the requests awaiting answers (default 256); a
	// request due when that many are in flight is recorded, not sent, with
	// ErrInFlight.
	MaxInFlight int
}

func (ld *Load) check() error {
	if ld.Plan != nil {
		if err := ld.checkPlan(); err != nil {
			return err
		}
	}
	switch {
	case ld.Sticky && ld.Loop == nil:
		return errors.New("live: Sticky sends a closed-loop client's requests to one node: it needs Loop")
	case ld.Loop != nil && ld.Rate != 0:
		return fmt.Errorf("live: a closed-loop drive (Loop) offers no rate, got %d a second", ld.Rate)
	case ld.Plan == nil && ld.Loop == nil && ld.Rate <= 0:
		return fmt.Errorf("live: the offered rate must be positive, got %d a second", ld.Rate)
	case ld.Plan == nil && ld.Duration <= 0:
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
	if len(ld.Keys) == 0 && ld.Plan == nil {
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

// checkPlan says what is wrong with a planned drive (whose end is its last
// request: a Duration only bounds it).
func (ld *Load) checkPlan() error {
	switch {
	case len(ld.Plan) == 0:
		return errors.New("live: an empty plan")
	case ld.Rate != 0 || ld.Loop != nil || len(ld.Keys) > 0:
		return errors.New("live: a planned drive takes no Rate, Loop or Keys: its requests say what is sent")
	}
	for i, r := range ld.Plan {
		switch {
		case r.Key == "":
			return fmt.Errorf("live: planned request %d has no key", i+1)
		case r.Sent < 0 || r.Node < 0 || r.Cost < 0:
			return fmt.Errorf("live: planned request %d has a negative time, node or cost (sent %d µs, node %d, cost %d)", i+1, r.Sent, r.Node, r.Cost)
		case i > 0 && r.Sent < ld.Plan[i-1].Sent:
			return fmt.Errorf("live: planned request %d (at %d µs) comes before request %d (at %d µs): a plan is in the order it is sent", i+1, r.Sent, i, ld.Plan[i-1].Sent)
		}
	}
	switch last := ld.Plan[len(ld.Plan)-1].Sent; {
	case ld.Duration < 0:
		return fmt.Errorf("live: the duration must not be negative, got %v", ld.Duration)
	case ld.Duration > 0 && last >= ld.Duration.Microseconds():
		return fmt.Errorf("live: the plan's last request (at %d µs) is past the drive's %v", last, ld.Duration)
	}
	return nil
}

// Drive offers ld to target in real time and records every request,
// sorted by Sent: a Plan's records are in the plan's order, as its
// requests are let go and stamped in that order (an Observer target's record
// widened to hold its decision may start a few µs before the one ahead of
// it). Request i goes to key i mod K, and each key's requests
// go to the target's nodes in turn (a Plan says each request's key and
// node itself). It returns when every answer is in
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
		letGo   []uint64 // an open loop's: each record's place in the order its requests were let go
		wg      sync.WaitGroup
		slots   = make(chan struct{}, ld.MaxInFlight)
	)
	add := func(r record.Record) {
		mu.Lock()
		records = append(records, r)
		mu.Unlock()
	}
	addAt := func(hit uint64, r record.Record) {
		mu.Lock()
		records, letGo = append(records, r), append(letGo, hit)
		mu.Unlock()
	}
	start := ld.Start
	if start.IsZero() {
		start = time.Now()
	} else if wait := time.Until(start); wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		}
	}
	since := func() int64 { return time.Since(start).Microseconds() }
	sorted := func() []record.Record {
		records = inSendOrder(records, letGo)
		seenDecisions(records)
		return records
	}
	if ld.Loop != nil {
		clients := make([]*clientLoop, keys)
		for k, key := range ld.Keys {
			l := &clientLoop{ctx: ctx, c: ld.Loop(), key: key, node: -1, nodes: nodes, call: call, ld: ld, since: since, add: add, wg: &wg}
			if ld.Sticky {
				l.node = k % nodes
			}
			clients[k] = l
			wg.Add(1)
			next, more := l.c.Next(nil)
			go l.run(0, next, more)
		}
		wg.Wait()
		var errs []error
		for _, l := range clients {
			errs = append(errs, l.err)
		}
		return sorted(), errors.Join(errs...)
	}
	// next is when the hits-th request is due, as a wait from elapsed,
	// and the request; false ends the drive.
	next := func(hits uint64, elapsed time.Duration) (time.Duration, record.Record, bool) {
		if hits >= uint64(len(ld.Plan)) {
			return 0, record.Record{}, false
		}
		p := ld.Plan[hits]
		return time.Duration(p.Sent)*time.Microsecond - elapsed, record.Record{Key: p.Key, Node: p.Node % nodes, Cost: p.Cost}, true
	}
	if ld.Plan == nil {
		pacer := vegeta.ConstantPacer{Freq: ld.Rate * keys, Per: time.Second}
		next = func(hits uint64, elapsed time.Duration) (time.Duration, record.Record, bool) {
			wait, stop := pacer.Pace(elapsed, hits)
			return wait, record.Record{Key: ld.Keys[hits%uint64(keys)], Node: int(hits / uint64(keys) % uint64(nodes))}, !stop
		}
	}
	var stopped error
	// A plan ends with its last request, sent however late a stalled
	// machine makes it; a rate ends at Duration.
	over := func(elapsed time.Duration) bool { return ld.Plan == nil && elapsed >= ld.Duration }
	for hits := uint64(0); ; hits++ {
		elapsed := time.Since(start)
		if over(elapsed) {
			break
		}
		wait, r, ok := next(hits, elapsed)
		if !ok {
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
		if over(time.Since(start)) {
			break
		}
		select {
		case slots <- struct{}{}:
		default:
			r.Sent = since()
			r.Answered, r.Err = r.Sent, ErrInFlight
			addAt(hits, r)
			continue
		}
		// Sent is stamped here, in the order the requests are let go, not
		// by the goroutine that sends it: a goroutine a loaded machine
		// starts late would otherwise give a request a later Sent than
		// the next one of its key, and the records, sorted by Sent, would
		// no longer show each key's nodes in turn. It is at most the true
		// send, as the judge's soundness needs.
		r.Sent = since()
		// The slot is held until the call returns, even one that
		// ignores its context and outlives the record.
		wg.Add(1)
		hit := hits
		callAsync(ctx, call, r, ld.Timeout, since, func() { <-slots }, func(r record.Record) { addAt(hit, r); wg.Done() })
	}
	wg.Wait()
	return sorted(), stopped
}

// clientLoop is one key's closed-loop client c, driven until ld.Duration
// or ctx is done, each request sent to node (to the nodes in turn when it
// is negative), timed out after ld.Timeout and recorded by add. Each call
// is made on the goroutine that runs the client: a hop to another
// goroutine and back for every request cost a fast script some 8% of its
// rate on a busy machine. A call that outlives ld.Timeout is left behind:
// its record is taken at the timeout and the client goes on from a fresh
// goroutine, which takes over the client's count in wg (the drive does not
// wait for a stalled call).
type clientLoop struct {
	ctx         context.Context
	c           record.Client
	key         string
	node, nodes int
	call        caller
	ld          Load
	since       func() int64
	add         func(record.Record)
	wg          *sync.WaitGroup
	err         error // ctx's error, when it ended the client
}

// run sends the client's requests from its i-th, due at next (more false:
// it has none), and then marks the client done in wg, unless it moved to
// another goroutine. The error is set only by the goroutine that runs the
// client last, and is read after wg.
func (l *clientLoop) run(i int, next int64, more bool) {
	if moved := l.from(i, next, more); !moved {
		l.wg.Done()
	}
}

// from is run's loop; it says whether the client moved to another
// goroutine.
func (l *clientLoop) from(i int, next int64, more bool) bool {
	end := l.ld.Duration.Microseconds()
	for ; more && next < end; i++ {
		if wait := next - l.since(); wait > 0 {
			timer := time.NewTimer(time.Duration(wait) * time.Microsecond)
			select {
			case <-timer.C:
			case <-l.ctx.Done():
				timer.Stop()
			}
		}
		if err := l.ctx.Err(); err != nil {
			l.err = err
			return false
		}
		if l.since() >= end {
			return false
		}
		to := l.node
		if to < 0 {
			to = i % l.nodes
		}
		r, moved := l.send(i, record.Record{Key: l.key, Node: to, Sent: l.since()})
		if moved {
			return true
		}
		l.add(r)
		next, more = l.c.Next(&r)
	}
	return false
}

// send makes the i-th request's call on this goroutine and returns its
// record. When the call outlives ld.Timeout (or ctx is done first), the
// record is taken then, with that error, and the client goes on from its
// next request on the goroutine the timeout started; send then says the
// client moved, and its goroutine, once the call returns, has nothing
// left to do.
func (l *clientLoop) send(i int, r record.Record) (record.Record, bool) {
	rctx, cancel := context.WithTimeout(l.ctx, l.ld.Timeout)
	defer cancel()
	var once sync.Once
	stop := context.AfterFunc(rctx, func() {
		var late record.Record
		took := false
		once.Do(func() { late, took = timedOut(r, l.ld.Timeout, rctx.Err(), l.since()), true })
		if took {
			l.add(late)
			next, more := l.c.Next(&late)
			l.run(i+1, next, more)
		}
	})
	answered := safeCall(rctx, l.call, r, l.since)
	stop()
	moved := true
	once.Do(func() { moved = false })
	return answered, moved
}

// callAsync is call for r, given up after timeout, on a goroutine of its
// own, which makes the call itself (one goroutine a request, so that a
// loaded machine starts one, not two, before the request leaves): finish
// is handed the record once, its answer or, at timeout or when ctx is
// done first, its error, and release runs when the call returns.
func callAsync(ctx context.Context, call caller, r record.Record, timeout time.Duration, since func() int64, release func(), finish func(record.Record)) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	var once sync.Once
	stop := context.AfterFunc(rctx, func() {
		once.Do(func() { finish(timedOut(r, timeout, rctx.Err(), since())) })
	})
	go func() {
		defer release()
		answered := safeCall(rctx, call, r, since)
		stop() // an answer in time: no goroutine is started to time it out
		once.Do(func() { finish(answered) })
		cancel()
	}()
}

// timedOut is r given up at, unanswered within timeout (cause: the
// deadline, or the drive's context ending first).
func timedOut(r record.Record, timeout time.Duration, cause error, at int64) record.Record {
	r.Err, r.Answered = fmt.Errorf("live: no answer within %v: %w", timeout, cause), at
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
	r.Err = call(ctx, &r)
	r.Answered = since()
	return r
}

// inSendOrder is records sorted by Sent; with letGo (an open loop's: each
// record's place in the order its requests were let go, which is by Sent),
// in that order, which keeps a plan's order where two requests were let go
// in one µs.
func inSendOrder(records []record.Record, letGo []uint64) []record.Record {
	if letGo == nil {
		slices.SortStableFunc(records, func(a, b record.Record) int { return cmp.Compare(a.Sent, b.Sent) })
		return records
	}
	order := make([]int, len(records))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(letGo[i], letGo[j]) })
	out := make([]record.Record, len(records))
	for k, i := range order {
		out[k] = records[i]
	}
	return out
}

// seenDecisions widens each record whose decision its target saw to hold
// it (the target's clock, mapped to this machine's, may put it a few µs
// outside the span the driver timed), and turns the orders the target saw
// into ranks (record.Ranks).
func seenDecisions(records []record.Record) {
	for i := range records {
		if r := &records[i]; r.Seen.Has(record.SeenDecided) {
			r.Sent, r.Answered = min(r.Sent, r.Decided), max(r.Answered, r.Decided)
		}
	}
	ranks := record.Ranks(len(records), func(i int) (int64, int64, bool) {
		r := &records[i]
		return r.Decided, r.Order, r.Seen.Has(record.SeenOrder | record.SeenDecided)
	})
	for i, rank := range ranks {
		if rank > 0 {
			records[i].Order = rank
		}
	}
}
