package study

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

// Release is how a trial's workers start sending.
type Release int

const (
	// Adversarial: every worker is released at the same instant by a
	// barrier and sends its share back to back.
	Adversarial Release = iota + 1
	// Random: every worker waits a seeded random offset, uniform in
	// [0, Trial.Spread), after the barrier, then sends its share back to
	// back (the offsets are traffic.ReleaseOffsets').
	Random
	// Rounds: a barrier before every request, not only the first: every
	// worker's k-th request is released together, once every worker's
	// (k−1)-th has been decided. Drift between workers cannot build up
	// across requests, which is the lockstep model's condition, enforced by
	// the experiment instead of hoped for (TrialResult.RoundsOutOfStep says
	// whether the network then kept each round's reads ahead of its writes).
	Rounds
)

var releaseNames = [...]string{Adversarial: "adversarial", Random: "random", Rounds: "rounds"}

// String names the release as the report prints it ("adversarial",
// "random", "rounds"), or Release(n) for a value that is none of them.
func (r Release) String() string { return enumName(releaseNames[:], int(r), "Release") }

// Trial is one run of one strategy: Workers workers, each on its own
// connection, send PerWorker requests each against one fresh key under
// Limit, started as Release says.
type Trial struct {
	Strategy  Strategy      // decides every request
	Workers   int           // c, each on its own connection (Conns)
	PerWorker int           // requests each worker sends
	Limit     algos.Limit   // the limit every request is decided under
	Release   Release       // how the workers start
	Spread    time.Duration // Random only: the range of the start offsets
	Seed      uint64        // Random only: the offsets' seed
}

// Sent is how many requests the trial offers in all.
func (t Trial) Sent() int { return t.Workers * t.PerWorker }

// TrialResult is what a trial measured.
type TrialResult struct {
	Trial Trial // the trial that ran
	// Admitted is how many requests were admitted; Over is Admitted − L,
	// negative when the limit's capacity went unused.
	Admitted, Over int
	// RefusedAtLimit counts refusals taken when the limit was reached.
	RefusedAtLimit int
	// RefusedWithin counts refusals of requests that were within the limit,
	// per strategy (see RefusedWithinLimit).
	RefusedWithin int
	// Attempts sums every request's attempts (more than Sent only for the
	// optimistic strategies).
	Attempts int
	// Latencies holds every request's time from send to decision, sorted.
	Latencies []time.Duration
	// Elapsed is from the barrier's release to the last decision.
	Elapsed time.Duration
	// Rounds and RoundsOutOfStep, for the Rounds release and a strategy that
	// reports what it read (Ruling.Read): how many rounds ran, and in how
	// many some worker's read already saw a write of the same round, so the
	// round did not run in lockstep (every read before every write).
	Rounds, RoundsOutOfStep int
	// Records is every request as the live driver recorded it
	// (live.Drive), each worker a closed-loop client: the key, the worker
	// as its node, when it was sent and answered, in µs since the release,
	// and whether it was admitted; a strategy states no counts, so Known
	// is empty. In the order sent. judge.Records holds them to a promise
	// as it holds any service's.
	Records []record.Record
	// WindowBefore and WindowAfter are the aligned window index floor(t/W)
	// of Redis TIME just before the release and after the last decision
	// (Run reruns a trial whose two differ).
	WindowBefore, WindowAfter int64
}

// Quantile is the q-quantile (0 ≤ q ≤ 1, nearest rank) of the trial's
// latencies; 0 when there are none.
func (r TrialResult) Quantile(q float64) time.Duration { return quantile(r.Latencies, q) }

// Throughput is decisions per second: requests sent over Elapsed (0 when
// no time elapsed).
func (r TrialResult) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Trial.Sent()) / r.Elapsed.Seconds()
}

// Conns is the workers' connections to one Path: worker i uses client i,
// whose pool holds exactly one connection, opened before any trial so that
// no dial is timed. They run one trial at a time.
type Conns struct {
	Path    *Path // the path every connection goes through
	clients []*redis.Client
}

// NewConns opens n worker connections through p and PINGs each (all at
// once: through a slow path, one after another would take n round trips).
func NewConns(ctx context.Context, p *Path, n int) (*Conns, error) {
	clients, err := conn.Dial(ctx, p.upstream, p.Addr, n)
	if err != nil {
		return nil, fmt.Errorf("study: opening worker connections to %s: %w", p.Addr, err)
	}
	return &Conns{Path: p, clients: clients}, nil
}

// Close closes every worker connection.
func (f *Conns) Close() { conn.Close(f.clients) }

// maxTrialReruns bounds how often Run repeats a trial that straddled a
// window edge; two in a row would need a window shorter than two trials.
const maxTrialReruns = 2

// Run runs t against key (and key+":seq" for the strategies that report
// Redis's order), deleting both before and after. If Redis TIME shows that
// the trial straddled an aligned window edge of t.Limit.Window, it is run
// again on a fresh key: the study's trials must fall inside one window.
func (f *Conns) Run(ctx context.Context, t Trial, key string) (TrialResult, error) {
	for range maxTrialReruns + 1 {
		r, err := f.runOnce(ctx, t, key)
		if err != nil || r.WindowBefore == r.WindowAfter {
			return r, err
		}
	}
	return TrialResult{}, fmt.Errorf("study: %d runs of %s straddled a window edge of %s; use a longer window",
		maxTrialReruns+1, t.Strategy.Name(), algos.FormatMicros(t.Limit.Window))
}

// decided is one request of a trial: its ruling, its time from send to
// decision, and when it was decided, since the release.
type decided struct {
	ruling  Ruling
	latency time.Duration
	done    time.Duration // since the release
}

// runOnce runs t once against key, without checking for a window edge.
func (f *Conns) runOnce(ctx context.Context, t Trial, key string) (TrialResult, error) {
	if t.Workers < 1 || t.Workers > len(f.clients) {
		return TrialResult{}, fmt.Errorf("study: %d workers, but the fleet has %d connections", t.Workers, len(f.clients))
	}
	if t.PerWorker < 1 {
		return TrialResult{}, errors.New("study: a trial needs at least one request per worker")
	}
	if err := t.Limit.Validate(); err != nil {
		return TrialResult{}, err
	}
	admin := f.clients[0]
	seqKey := key + ":seq"
	if err := admin.Del(ctx, key, seqKey).Err(); err != nil {
		return TrialResult{}, err
	}
	defer admin.Del(context.WithoutCancel(ctx), key, seqKey)
	if p, ok := t.Strategy.(preparer); ok {
		if err := p.prepare(ctx, admin); err != nil {
			return TrialResult{}, err
		}
	}
	offsets := make([]int64, t.Workers) // µs
	if t.Release == Random {
		offsets = traffic.ReleaseOffsets(t.Workers, t.Spread.Microseconds(), t.Seed)
	}
	before, err := redisNow(ctx, admin)
	if err != nil {
		return TrialResult{}, err
	}

	// The workers are the live driver's closed-loop clients, all on key,
	// each sending to its own connection (the target's node, Sticky) one
	// request after another: released together releaseAt after the
	// drive's start (each waits on its own timer, so all are waiting when
	// it comes), plus its offset for a Random release, and held in step
	// between requests by the barrier for Rounds.
	const releaseAt = 5_000 // µs: time for every worker's goroutine to be waiting
	rounds := newRoundBarrier(t.Workers, t.Release == Rounds)
	rulings := make([][]Ruling, t.Workers) // worker w's, in the order it sent them
	// A call the driver gave up on may still return beside its worker's
	// next one (the trial then fails on its error): the lock keeps that
	// late ruling from racing.
	var mu sync.Mutex
	target := live.Observer{Nodes: t.Workers, Call: func(ctx context.Context, key string, w int) (live.Observation, error) {
		ruling, err := t.Strategy.Allow(ctx, Destination{Client: f.clients[w], Key: key, SeqKey: seqKey, Limit: t.Limit})
		if err != nil {
			return live.Observation{}, err
		}
		mu.Lock()
		rulings[w] = append(rulings[w], ruling)
		mu.Unlock()
		return live.Observation{Answer: record.Answer{Decision: algos.Decision{Allowed: ruling.Allowed}}}, nil
	}}
	keys := make([]string, t.Workers)
	for w := range keys {
		keys[w] = key
	}
	made := 0
	drive, err := live.Drive(ctx, target, live.Load{Keys: keys, Sticky: true, Duration: trialTimeout, Timeout: trialTimeout,
		Loop: func() record.Client {
			c := &trialWorker{first: releaseAt + offsets[made], left: t.PerWorker, rounds: rounds}
			made++
			return c
		}})
	if err == nil {
		err = firstError(drive)
	}
	if err == nil && len(drive) != t.Sent() {
		// The drive ends at its Duration: a trial is every request, or none.
		err = fmt.Errorf("%d of its %d requests were sent within %v", len(drive), t.Sent(), trialTimeout)
	}
	if err != nil {
		return TrialResult{}, fmt.Errorf("study: %s with %d workers: %w", t.Strategy.Name(), t.Workers, err)
	}
	recs := make([][]decided, t.Workers)
	for i := range drive { // each worker's in the order it sent them
		rec := &drive[i]
		rec.Sent, rec.Answered = rec.Sent-releaseAt, rec.Answered-releaseAt // since the release
		w := rec.Node
		recs[w] = append(recs[w], decided{ruling: rulings[w][len(recs[w])], latency: time.Duration(rec.Answered-rec.Sent) * time.Microsecond,
			done: time.Duration(rec.Answered) * time.Microsecond})
	}
	after, err := redisNow(ctx, admin)
	if err != nil {
		return TrialResult{}, err
	}

	all := slices.Concat(recs...)
	r := TrialResult{
		Trial:        t,
		WindowBefore: algos.FloorDiv(before, t.Limit.Window),
		WindowAfter:  algos.FloorDiv(after, t.Limit.Window),
	}
	r.Records = drive
	for _, rec := range all {
		r.Attempts += rec.ruling.Attempts
		r.Latencies = append(r.Latencies, rec.latency)
		r.Elapsed = max(r.Elapsed, rec.done)
		switch {
		case rec.ruling.Allowed:
			r.Admitted++
		case rec.ruling.Refusal == AtLimit:
			r.RefusedAtLimit++
		}
	}
	r.Over = r.Admitted - int(t.Limit.Rate)
	r.RefusedWithin = RefusedWithinLimit(rulingsOf(all), t.Limit.Rate)
	if t.Release == Rounds && t.Strategy.Atomicity() == Racy {
		r.Rounds, r.RoundsOutOfStep = roundsOutOfStep(recs)
	}
	slices.Sort(r.Latencies)
	return r, nil
}

// roundsOutOfStep counts the rounds of a Rounds trial of a racy strategy,
// and those in which some read did not see exactly the admits of the rounds
// before it: a write of its own round had reached Redis first.
func roundsOutOfStep(recs [][]decided) (rounds, outOfStep int) {
	var admitted int64 // by the rounds before this one
	for k := 0; ; k++ {
		var thisRound int64
		ran, inStep := false, true
		for _, rs := range recs {
			if k >= len(rs) {
				continue
			}
			ran = true
			if rs[k].ruling.Read != admitted {
				inStep = false
			}
			if rs[k].ruling.Allowed {
				thisRound++
			}
		}
		if !ran {
			return rounds, outOfStep
		}
		rounds++
		if !inStep {
			outOfStep++
		}
		admitted += thisRound
	}
}

// roundBarrier holds every worker of a Rounds trial until all of them have
// finished their current request; for the other releases it never waits.
type roundBarrier struct {
	on      bool
	mu      sync.Mutex
	cond    *sync.Cond
	members int // workers still sending
	waiting int
	gen     int
}

// newRoundBarrier is a barrier for workers, which waits only when on.
func newRoundBarrier(workers int, on bool) *roundBarrier {
	b := &roundBarrier{on: on, members: workers}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// await returns once every worker still sending has called it for this round.
func (b *roundBarrier) await() {
	if !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.gen
	b.waiting++
	if b.waiting >= b.members {
		b.next()
		return
	}
	for gen == b.gen {
		b.cond.Wait()
	}
}

// leave takes a worker that has sent its last request (or failed) out of
// the rounds, releasing the others if it was the last one awaited.
func (b *roundBarrier) leave() {
	if !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.members--
	if b.members > 0 && b.waiting >= b.members {
		b.next()
	}
}

// next releases the workers waiting in this round and starts the next.
func (b *roundBarrier) next() {
	b.waiting = 0
	b.gen++
	b.cond.Broadcast()
}

// RefusedWithinLimit counts the refusals among rulings on requests that were
// within the limit: refused while fewer than limit requests had been
// admitted in total.
// How that is known depends on the strategy:
//
//   - Exhausted refusals (the optimistic strategies) count: the last count
//     the request read was below L.
//   - Refusals that carry Redis's order of decisions (Seq: the scripts, and
//     increment-then-check, whose INCR reply is its place) count when fewer
//     than L admits come before them in that order.
//   - Check-then-act carries no order, and needs none: it refuses only on
//     reading a count of L or more, and its count is the number admitted.
func RefusedWithinLimit(rulings []Ruling, limit int64) int {
	var admits []int64
	for _, a := range rulings {
		if a.Allowed && a.Seq > 0 {
			admits = append(admits, a.Seq)
		}
	}
	slices.Sort(admits)
	n := 0
	for _, a := range rulings {
		switch {
		case a.Allowed:
		case a.Refusal == Exhausted:
			n++
		case a.Seq > 0:
			before, _ := slices.BinarySearch(admits, a.Seq)
			if int64(before) < limit {
				n++
			}
		}
	}
	return n
}

// rulingsOf is the ruling of every record, in order.
func rulingsOf(recs []decided) []Ruling {
	out := make([]Ruling, len(recs))
	for i, r := range recs {
		out[i] = r.ruling
	}
	return out
}

// redisNow is Redis TIME in µs.
func redisNow(ctx context.Context, c *redis.Client) (int64, error) {
	t, err := c.Time(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("study: TIME: %w", err)
	}
	return t.UnixMicro(), nil
}

// quantile is the nearest-rank q-quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// trialWorker is one worker of a trial as a closed-loop client of the live
// driver: its first request at first (µs after the drive's start), then
// each as soon as the last is answered, left in all; for Rounds, each
// only once every worker still sending has its last answer (the
// barrier). It stops at its first error, leaving the barrier so that the
// others go on.
type trialWorker struct {
	first  int64
	left   int
	rounds *roundBarrier
}

func (c *trialWorker) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return c.first, true
	}
	if c.left--; c.left == 0 || last.Err != nil {
		c.rounds.leave()
		return 0, false
	}
	c.rounds.await()
	return 0, true
}
