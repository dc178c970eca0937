package scenarios

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// Options are the conditions of a table or a sweep. Start from
// DefaultOptions and change fields: a zero field means zero (no round trip,
// no jitter, no restarts), not "the default".
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
	// table's node-clock and local-split columns. (The sweep varies it; the
	// deployment-bug columns use clocks in agreement.)
	Skew int64
	// WipeAt is when the store-wiped column's store loses every key.
	WipeAt int64
	// RestartEvery is the mean µs between one node's restarts in the
	// local-split column. (The local-full bug column never restarts.)
	RestartEvery int64
	// Workers is how many goroutines run cells; 0 means GOMAXPROCS. The
	// output does not depend on it.
	Workers int
}

// DefaultOptions are the conditions of overshoot's published table: 100
// requests per second per client (burst 100), 20 s per run, seeds 1 to 10,
// 4 nodes, a 1 ms round trip with ±25% on each leg, node clocks 50 ms apart,
// the store wiped at 10 s, local nodes restarting every 5 s on average.
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
	}
}

// Validate reports the first problem with o that would stop a table or a
// sweep. The model checks the rest of each run's configuration.
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

func checkAlgorithms(algs []algos.Algorithm) ([]string, error) {
	if len(algs) == 0 {
		return nil, errors.New("scenarios: no algorithms")
	}
	names := make([]string, len(algs))
	for i, a := range algs {
		switch {
		case a.Name == "":
			return nil, fmt.Errorf("scenarios: algorithm %d has no name", i)
		case a.Decide == nil || a.Promise == nil:
			return nil, fmt.Errorf("scenarios: algorithm %q needs both Decide and Promise", a.Name)
		}
		for _, n := range names[:i] {
			if n == a.Name {
				return nil, fmt.Errorf("scenarios: two algorithms are named %q", a.Name)
			}
		}
		names[i] = a.Name
	}
	return names, nil
}

// traffic builds every seed's arrivals once; runs share them read-only.
func (o Options) traffic() ([][]model.Request, error) {
	out := make([][]model.Request, len(o.Seeds))
	err := o.parallel(len(o.Seeds), func(i int) error {
		a, err := Traffic(o.Seeds[i], o.Limit, o.Duration)
		out[i] = a
		return err
	})
	return out, err
}

// parallel calls f(0..n-1) on o.Workers goroutines. Results are written by
// index, so the output is the same for any number of workers; the error
// returned is the one of the lowest index.
func (o Options) parallel(n int, f func(i int) error) error {
	workers := o.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n))
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

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ClientRun is one client in one run.
type ClientRun struct {
	Requests, Admitted int
	// Peak is the most admits in any window [s, s+W) of the limit's window,
	// by true decision time.
	Peak int
	// AfterWipe is the admits in [WipeAt, WipeAt+W), whether or not this
	// run's store was wiped, to compare a wiped run with the ideal one.
	AfterWipe int
	// Violation is the first break of the algorithm's promise, or nil.
	Violation *algos.Violation
}

// measure runs one configuration and summarizes it per client.
func measure(cfg model.Config, wipeAt int64) ([NumClients]ClientRun, error) {
	var out [NumClients]ClientRun
	res, err := model.Run(cfg)
	if err != nil {
		return out, err
	}
	w := cfg.Limit.Window
	for c := range min(NumClients, len(res.Keys)) {
		times := res.AdmitTimes(c)
		out[c] = ClientRun{
			Requests:  res.Keys[c].Requests,
			Admitted:  res.Keys[c].Admitted,
			Peak:      algos.MostInAnyWindow(times, w),
			AfterWipe: countIn(times, wipeAt, wipeAt+w),
			Violation: res.Keys[c].Violation,
		}
	}
	return out, nil
}

// countIn counts the sorted times in [from, to).
func countIn(sorted []int64, from, to int64) int {
	lo, _ := slices.BinarySearch(sorted, from)
	hi, _ := slices.BinarySearch(sorted, to)
	return hi - lo
}

// seedList prints seeds as "1-10" when they are consecutive.
func seedList(seeds []uint64) string {
	consecutive := true
	for i := 1; i < len(seeds); i++ {
		if seeds[i] != seeds[i-1]+1 {
			consecutive = false
		}
	}
	if consecutive && len(seeds) > 2 {
		return fmt.Sprintf("%d-%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}
