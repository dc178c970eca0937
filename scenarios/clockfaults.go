package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// ClockFault is one of the simulated clock faults: what the clocks do,
// and for how long the run goes on (a drift needs an hour to show, a step
// a minute and more after it). Active, when set, sends traffic only in the
// last Active µs of every 10 minutes, so that an hour of drift costs six
// minutes of requests.
type ClockFault struct {
	Name     string
	Clocks   model.Clocks
	Duration int64
	Active   int64
}

// ClockFaults are the default faults on a fleet of nodes: node 0's clock
// stepping ±1 s and ±60 s at 20.4 s (inside a window, not at its edge);
// node 0 drifting ±100 ppm for an hour, and half the fleet +100 ppm and
// half −100 ppm (so that the fleet's clocks part by 720 ms in the hour),
// with traffic in the last minute of every 10; and the store's clock
// stepping ±1 s and ±60 s at 20.4 s, as a failover to a replica whose
// clock is off does. Each step run lasts 100 s.
func ClockFaults(nodes int) []ClockFault {
	const at, stepRun, hour = 20*algos.Second + 400_000, 100 * algos.Second, 3600 * algos.Second
	step := func(who int, by int64) ClockFault {
		name := "node 0"
		if who == model.StoreClockStep {
			name = "store"
		}
		return ClockFault{
			Name:     fmt.Sprintf("%s steps %+ds at 20.4s", name, by/algos.Second),
			Clocks:   model.Clocks{Steps: []model.Step{{Clock: who, At: at, By: by}}},
			Duration: stepRun,
		}
	}
	drift := func(name string, ppm func(node int) int64) ClockFault {
		d := make([]int64, nodes)
		for i := range d {
			d[i] = ppm(i)
		}
		return ClockFault{Name: name, Clocks: model.Clocks{DriftPPM: d}, Duration: hour, Active: 60 * algos.Second}
	}
	return []ClockFault{
		step(0, algos.Second), step(0, -algos.Second), step(0, 60*algos.Second), step(0, -60*algos.Second),
		drift("node 0 drifts +100ppm, 1h", nodeZero(100)),
		drift("node 0 drifts -100ppm, 1h", nodeZero(-100)),
		drift("half +100ppm, half -100ppm, 1h", func(i int) int64 {
			if i < nodes/2 {
				return 100
			}
			return -100
		}),
		step(model.StoreClockStep, algos.Second), step(model.StoreClockStep, -algos.Second),
		step(model.StoreClockStep, 60*algos.Second), step(model.StoreClockStep, -60*algos.Second),
	}
}

// nodeZero is a drift of ppm on node 0 alone.
func nodeZero(ppm int64) func(node int) int64 {
	return func(node int) int64 {
		if node == 0 {
			return ppm
		}
		return 0
	}
}

// ClockFaultOptions are the conditions RunClockFaults plays the faults in:
// every limiter in every deployment, under every fault, against the same
// run without the fault.
type ClockFaultOptions struct {
	Limiters    []limiter.Spec
	Deployments []model.Deployment
	Faults      []ClockFault
	Limit       algos.Limit
	Nodes       int
	RTT         int64
	Seed        uint64
	// Workers bounds the runs at once (0: GOMAXPROCS); the report is the
	// same for any number.
	Workers int
}

// DefaultClockFaultOptions is the six algorithms, deployed node-clock,
// store-clock and local-split (no restarts), on 4 nodes a 1 ms round trip
// (±25%) from the store, at 20 per second with a burst of 20, under
// ClockFaults.
func DefaultClockFaultOptions() ClockFaultOptions {
	return ClockFaultOptions{
		Limiters:    limiter.FromAlgorithms(algos.All()...),
		Deployments: []model.Deployment{model.NodeClock, model.StoreClock, model.LocalSplit},
		Faults:      ClockFaults(4),
		Limit:       algos.MustLimit(20, algos.Second, 20),
		Nodes:       4,
		RTT:         1000,
		Seed:        1,
	}
}

// ClockFaultCell is one limiter in one deployment under one fault.
type ClockFaultCell struct {
	// NotApplicable is why the deployment cannot hold the limiter, or nil.
	NotApplicable error
	// Extra is the admits, both clients together, beyond the same run
	// without the fault: the burst the fault handed out (negative: the
	// admits it cost).
	Extra int
	// Lockout is the honest client's longest run of refusals, in true
	// time from the first refused request to the next admit (or the end
	// of the run); Clean is the same without the fault.
	Lockout, Clean int64
	// Refused is the honest requests refused beyond the same run without
	// the fault (negative: fewer).
	Refused int
	// Violations counts the keys whose admits broke the promise in true
	// time; CleanViolations the same without the fault.
	Violations, CleanViolations int
}

// ClockFaultReport is what RunClockFaults measured:
// Cells[fault][deployment][limiter].
type ClockFaultReport struct {
	Options ClockFaultOptions
	Cells   [][][]ClockFaultCell
}

func (o ClockFaultOptions) check() error {
	switch {
	case len(o.Limiters) == 0 || len(o.Deployments) == 0 || len(o.Faults) == 0:
		return errors.New("scenarios: clock faults need limiters, deployments and faults")
	case o.Nodes < 2 || o.Nodes > 1<<10:
		return fmt.Errorf("scenarios: clock faults need 2 to 1024 nodes, got %d", o.Nodes)
	}
	if err := o.Limit.Validate(); err != nil {
		return fmt.Errorf("scenarios: clock faults: %w", err)
	}
	if 2*o.Limit.Window/o.Limit.Rate < 1 {
		// Its requests would all fall on one µs, and never reach the end.
		return fmt.Errorf("scenarios: clock faults at %v: the honest client sends one request every 2W/L, under 1 µs at this limit", o.Limit)
	}
	for _, f := range o.Faults {
		if f.Duration <= 0 || f.Duration > algos.MaxTime/16 || f.Active < 0 {
			return fmt.Errorf("scenarios: fault %q needs a positive duration (and Active ≥ 0)", f.Name)
		}
	}
	_, err := checkLimiters(o.Limiters)
	return err
}

// RunClockFaults runs every cell of o: each limiter in each deployment
// once without a fault for each traffic (duration and active time), then
// under each fault.
func RunClockFaults(o ClockFaultOptions) (*ClockFaultReport, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	type shape struct{ duration, active int64 }
	var shapes []shape
	shapeOf := make([]int, len(o.Faults))
	for f, fault := range o.Faults {
		s := shape{fault.Duration, fault.Active}
		if shapeOf[f] = slices.Index(shapes, s); shapeOf[f] < 0 {
			shapeOf[f] = len(shapes)
			shapes = append(shapes, s)
		}
	}
	// The two clients (traffic.ClockFaultRequests), each on its own key.
	requests := make([][]record.Request, len(shapes))
	for i, s := range shapes {
		requests[i] = traffic.ClockFaultRequests(o.Seed, o.Limit, s.duration, s.active)
	}
	config := func(s, dep, shape int) model.Config {
		return model.Config{
			Limiter:    o.Limiters[s],
			Limit:      o.Limit,
			Deployment: o.Deployments[dep],
			Nodes:      o.Nodes,
			RTT:        o.RTT,
			Jitter:     model.DefaultJitter,
			Seed:       o.Seed,
			Requests:   requests[shape],
		}
	}
	// The runs without a fault, by [shape][deployment][limiter].
	type clean struct {
		admitted, violations, refused int
		lockout                       int64
		na                            error
	}
	cleans := make([]clean, len(shapes)*len(o.Deployments)*len(o.Limiters))
	cleanAt := func(shape, dep, s int) *clean {
		return &cleans[(shape*len(o.Deployments)+dep)*len(o.Limiters)+s]
	}
	par := Options{Workers: o.Workers}
	err := par.parallel(len(cleans), func(i int) error {
		s, dep, shape := i%len(o.Limiters), i/len(o.Limiters)%len(o.Deployments), i/len(o.Limiters)/len(o.Deployments)
		cfg := config(s, dep, shape)
		r, err := model.Run(cfg)
		var na *model.NotApplicableError
		switch {
		case errors.As(err, &na):
			cleans[i].na = na
			return nil
		case err != nil:
			return err
		}
		refused, lockout := honestRefusals(r, cfg.Requests, shapes[shape].duration)
		cleans[i] = clean{r.Admitted(), r.Violations(), refused, lockout, nil}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep := &ClockFaultReport{Options: o, Cells: make([][][]ClockFaultCell, len(o.Faults))}
	for f := range o.Faults {
		rep.Cells[f] = make([][]ClockFaultCell, len(o.Deployments))
		for dep := range o.Deployments {
			rep.Cells[f][dep] = make([]ClockFaultCell, len(o.Limiters))
		}
	}
	n := len(o.Faults) * len(o.Deployments) * len(o.Limiters)
	err = par.parallel(n, func(i int) error {
		s, dep, f := i%len(o.Limiters), i/len(o.Limiters)%len(o.Deployments), i/len(o.Limiters)/len(o.Deployments)
		fault := o.Faults[f]
		c := cleanAt(shapeOf[f], dep, s)
		cell := &rep.Cells[f][dep][s]
		if c.na != nil {
			cell.NotApplicable = c.na
			return nil
		}
		cfg := config(s, dep, shapeOf[f])
		cfg.Clocks = fault.Clocks
		r, err := model.Run(cfg)
		if err != nil {
			return fmt.Errorf("scenarios: %s, %s, %s: %w", o.Limiters[s].Name, cfg.Deployment, fault.Name, err)
		}
		refused, lockout := honestRefusals(r, cfg.Requests, fault.Duration)
		*cell = ClockFaultCell{
			Extra:           r.Admitted() - c.admitted,
			Lockout:         lockout,
			Clean:           c.lockout,
			Refused:         refused - c.refused,
			Violations:      r.Violations(),
			CleanViolations: c.violations,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// honestRefusals is the honest client's refusals, and its longest run of them:
// from its first refused request to its next admit, or to end.
func honestRefusals(r model.Result, reqs []record.Request, end int64) (refused int, lockout int64) {
	since := int64(-1)
	for i, q := range reqs {
		if q.Key != traffic.ClockFaultHonest {
			continue
		}
		o := r.Outcomes[i]
		if !o.Admitted {
			refused++
		}
		switch {
		case !o.Admitted && since < 0:
			since = o.Decided
		case o.Admitted && since >= 0:
			lockout = max(lockout, o.Decided-since)
			since = -1
		}
	}
	if since >= 0 {
		lockout = max(lockout, end-since)
	}
	return refused, lockout
}

// Cell returns the cell of the named fault, deployment and limiter.
func (r *ClockFaultReport) Cell(fault string, d model.Deployment, name string) (ClockFaultCell, bool) {
	f := slices.IndexFunc(r.Options.Faults, func(x ClockFault) bool { return x.Name == fault })
	dep := slices.Index(r.Options.Deployments, d)
	s := slices.IndexFunc(r.Options.Limiters, func(x limiter.Spec) bool { return x.Name == name })
	if f < 0 || dep < 0 || s < 0 {
		return ClockFaultCell{}, false
	}
	return r.Cells[f][dep][s], true
}
