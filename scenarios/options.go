package scenarios

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// Options are the conditions of a matrix, a curve or a hunt. Start from
// DefaultOptions (or HuntOptions) and change fields: a zero field means zero
// (no round trip, no jitter, no restarts), not "the default".
type Options struct {
	// Limit is each client's limit (every client is on its own key).
	Limit algos.Limit
	// Duration is the length of one run in µs.
	Duration int64
	// Seeds are the runs per cell; each seed is its own traffic and its
	// own balancer, legs and restarts.
	Seeds []uint64
	// Nodes behind the load balancer.
	Nodes int
	// RTT is the round trip to the store in µs, Jitter the ±% on each leg.
	RTT    int64
	Jitter int
	// Skew is the distance between the extreme node clocks, in µs, in the
	// matrix's node-clock and local-split columns. (A curve of ParamSkew,
	// the skew sweep's, varies it instead; the deployment-bug columns use
	// clocks in agreement; Hunt gives it to every suspect.)
	Skew int64
	// WipeAt is when the store-wiped column's store loses every key.
	WipeAt int64
	// RestartEvery is the mean µs between one node's restarts in the
	// local-split column. (The local-full bug column never restarts; Hunt
	// gives it to every suspect.)
	RestartEvery int64
	// Loop adds the three closed-loop clients (traffic.RetryAfter,
	// DrainIdle and ResetBurst, of traffic.LoopClients) to the five
	// open-loop ones of traffic.OpenLoop, each on its own key.
	Loop bool
	// Edge adds the edge-probing client (traffic.EdgeProbes) on its own
	// key, and Hunt judges it with the others.
	Edge bool
	// Workers is how many goroutines play runs; 0 means GOMAXPROCS. The
	// output does not depend on it.
	Workers int
}

// DefaultOptions are the conditions of overshoot's published table: the
// five open-loop clients of traffic.OpenLoop and the three closed-loop
// ones, each at 100 requests per second (burst 100), 20 s per run, seeds 1
// to 10, 4 nodes, a 1 ms round trip with ±25% on each leg, node clocks
// 50 ms apart, the store wiped at 10.5 s, local nodes restarting every 5 s
// on average.
func DefaultOptions() Options {
	seeds := make([]uint64, 10)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return Options{
		Limit:        algos.MustLimit(100, algos.Second, 100),
		Duration:     20 * algos.Second,
		Seeds:        seeds,
		Nodes:        4,
		RTT:          1000,
		Jitter:       model.DefaultJitter,
		Skew:         50_000,
		WipeAt:       10*algos.Second + algos.Second/2,
		RestartEvery: 5 * algos.Second,
		Loop:         true,
	}
}

// Validate reports the first problem with o that would stop RunMatrix,
// RunCurve or Hunt. The model checks the rest of each run's configuration.
func (o Options) Validate() error {
	switch {
	case len(o.Seeds) == 0:
		return errors.New("scenarios: no seeds")
	case o.Workers < 0:
		return fmt.Errorf("scenarios: %d workers", o.Workers)
	case o.WipeAt <= 0 || o.WipeAt >= o.Duration:
		return fmt.Errorf("scenarios: the wipe at %s is not inside the run of %s", algos.FormatMicros(o.WipeAt), algos.FormatMicros(o.Duration))
	}
	if err := o.Limit.Validate(); err != nil {
		return fmt.Errorf("scenarios: invalid limit: %w", err)
	}
	for i, s := range o.Seeds {
		for _, t := range o.Seeds[:i] {
			if s == t {
				return fmt.Errorf("scenarios: seed %d is listed twice", s)
			}
		}
	}
	return nil
}

// checkLimiter returns the first reason s (limiter i of a list) cannot be
// run: what limiter.Spec.Validate finds missing.
func checkLimiter(i int, s limiter.Spec) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("scenarios: limiter %d: %w", i, err)
	}
	return nil
}

// checkLimiters returns the names of specs, or the first reason they
// cannot be the rows of one report: none at all, one that cannot run
// (checkLimiter), or a name used twice.
func checkLimiters(specs []limiter.Spec) ([]string, error) {
	if len(specs) == 0 {
		return nil, errors.New("scenarios: no limiters")
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		if err := checkLimiter(i, s); err != nil {
			return nil, err
		}
		for _, n := range names[:i] {
			if n == s.Name {
				return nil, fmt.Errorf("scenarios: two limiters are named %q", s.Name)
			}
		}
		names[i] = s.Name
	}
	return names, nil
}

// Columns are the matrix's deployments under o: the ideal reference, the
// node clock at o.Skew, the store clock, the store wiped at o.WipeAt, the
// local split at o.Skew restarting every o.RestartEvery, and the two
// deployment bugs with clocks in agreement and no restarts, so that the bug
// is all they measure.
func (o Options) Columns() []Column {
	return []Column{
		{Name: "ideal", Deployment: model.Ideal},
		{Name: "node clock " + algos.FormatMicros(o.Skew), Deployment: model.NodeClock, Skew: o.Skew},
		{Name: "store clock", Deployment: model.StoreClock},
		{Name: "store wiped", Deployment: model.StoreWiped},
		{Name: "local split", Deployment: model.LocalSplit, Skew: o.Skew, RestartEvery: o.RestartEvery},
		{Name: "GET, decide, SET", Deployment: model.GetSet},
		{Name: "local, full limit", Deployment: model.LocalFull},
	}
}

// config is the model configuration of one limiter, column and seed,
// playing that seed's requests.
func (o Options) config(s limiter.Spec, col Column, seed uint64, requests []record.Request) model.Config {
	return model.Config{
		Limiter:      s,
		Limit:        o.Limit,
		Deployment:   col.Deployment,
		Nodes:        o.Nodes,
		Skew:         col.Skew,
		RTT:          o.RTT,
		Jitter:       o.Jitter,
		WipeAt:       o.WipeAt,
		RestartEvery: col.RestartEvery,
		Seed:         seed,
		Requests:     requests,
		Loop:         o.loopClients(),
	}
}

// Clients lists the clients of a run under o, in key order: the five
// open-loop ones (traffic.OpenLoopClients), the three closed-loop ones when
// o.Loop is set, and the edge prober when o.Edge is.
func (o Options) Clients() []traffic.ClientKind {
	c := traffic.OpenLoopClients()
	if o.Loop {
		c = append(c, traffic.RetryAfter, traffic.DrainIdle, traffic.ResetBurst)
	}
	if o.Edge {
		c = append(c, traffic.Edge)
	}
	return c
}

// loopClients are the closed-loop clients of a run under o, or none.
func (o Options) loopClients() []record.LoopClient {
	if !o.Loop {
		return nil
	}
	return traffic.LoopClients(int(traffic.RetryAfter), o.Limit, o.Duration)
}

// requests builds every seed's requests once, each in memory of its own;
// runs share them read-only.
func (o Options) requests() ([][]record.Request, error) {
	out := make([][]record.Request, len(o.Seeds))
	err := o.parallel(len(o.Seeds), func(i int) error {
		var err error
		out[i], err = new(traffic.Scratch).Make(o.Seeds[i], o.Limit, o.Duration, o.Edge)
		return err
	})
	return out, err
}

// parallel calls f(0..n-1) on o.Workers goroutines. Results are written by
// index, so the output is the same for any number of workers; the error
// returned is the one of the lowest index.
func (o Options) parallel(n int, f func(i int) error) error {
	workers := max(1, min(o.workers(), n))
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				errs[i] = f(i)
			}
		})
	}
	wg.Wait()
	return firstError(errs)
}

// workers is how many goroutines play runs: o.Workers, or GOMAXPROCS.
func (o Options) workers() int {
	if o.Workers == 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Workers
}

// firstError is the first non-nil error of errs, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
