package model

import (
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/record"
)

// Deployment says who tells the algorithm the time and where its state
// lives. The zero Deployment is invalid, so a Config that forgot to choose
// one is an error rather than a silent default.
type Deployment uint8

// The deployments. Ideal is the reference every other run is compared with;
// NodeClock, StoreClock and StoreWiped are atomic scripts in a shared store;
// LocalSplit has no store; GetSet and LocalFull are the two deployment bugs.
const (
	// Ideal is one node with a true clock and its state in memory: each
	// request is decided at the instant it is sent. Nodes, Skew, latency,
	// Seed, WipeAt and RestartEvery are ignored.
	Ideal Deployment = iota + 1
	// NodeClock runs one atomic script per request in the store, and the
	// time the script is told is the sending node's clock, read when it sent.
	NodeClock
	// StoreClock runs one atomic script per request in the store, and the
	// script reads the store's own clock (true time) when it runs.
	StoreClock
	// StoreWiped is StoreClock whose store loses every key at true time
	// WipeAt, before any script that arrives at that instant.
	StoreWiped
	// LocalSplit has no store: each node runs its own limiter of
	// Rate/Nodes per Window with burst Burst/Nodes (integer division) on its
	// own clock, decided when the request reaches it (the send time), and
	// loses all its state whenever it restarts (see RestartEvery).
	LocalSplit
	// GetSet is the non-atomic bug: the node GETs the key's state, decides on
	// its copy with its own clock when the reply arrives, and SETs the copy
	// back (admitted or not), overwriting whatever the store holds by then.
	GetSet
	// LocalFull is the other bug: LocalSplit where every node is given the
	// full limit instead of its share.
	LocalFull
)

var deploymentNames = [...]string{
	Ideal:      "ideal",
	NodeClock:  "node-clock",
	StoreClock: "store-clock",
	StoreWiped: "store-wiped",
	LocalSplit: "local-split",
	GetSet:     "get-set",
	LocalFull:  "local-full",
}

// Deployments lists every valid Deployment in declaration order.
func Deployments() []Deployment {
	return []Deployment{Ideal, NodeClock, StoreClock, StoreWiped, LocalSplit, GetSet, LocalFull}
}

// String is the deployment's short name, as ParseDeployment reads it.
func (d Deployment) String() string {
	if d.valid() {
		return deploymentNames[d]
	}
	return fmt.Sprintf("Deployment(%d)", uint8(d))
}

// ParseDeployment is the inverse of Deployment.String.
func ParseDeployment(name string) (Deployment, error) {
	for _, d := range Deployments() {
		if deploymentNames[d] == name {
			return d, nil
		}
	}
	return 0, fmt.Errorf("model: no deployment named %q", name)
}

func (d Deployment) valid() bool { return d >= Ideal && d <= LocalFull }

// usesStore is true for the deployments whose state is in the shared store.
func (d Deployment) usesStore() bool {
	return d == NodeClock || d == StoreClock || d == StoreWiped || d == GetSet
}

// PerNode reports whether each node keeps its own state of every key (the
// local deployments), so that a key's decisions are made by one instance
// per node rather than by one shared state.
func (d Deployment) PerNode() bool { return d == LocalSplit || d == LocalFull }

// Legs fixes the mean one-way delays to and from the store, in µs, instead
// of RTT/2 each. Out is node → store for the atomic script and for GET; Back
// is store → node for the GET's reply; Set is from the GET/SET node's
// decision to its SET reaching the store. Jitter applies to each of them.
// The zero Legs means "RTT/2 each way"; any other Legs is used as given,
// so a zero field in it is a leg without delay.
//
// A replay that measured the average delay of each step can run the model
// with those averages and Jitter 0 (the "mean delay" model).
type Legs struct {
	Out, Back, Set int64
}

// Config is one simulated run. Run and Plan never modify it (in particular
// Requests), so one Requests slice can be shared by concurrent runs.
type Config struct {
	// Limiter decides; its Promise is what every admit is checked against.
	// A Spec made by limiter.FromAlgorithm runs on the model's own store
	// (Store); any other is made fresh by its New for the run (and for each
	// node of a local deployment, and again after a wipe or a restart), and
	// closed when the run ends. Applies says which deployments it fits.
	Limiter limiter.Spec
	// Limit is the limit the deployment is meant to enforce, per key.
	Limit algos.Limit
	// Deployment is who tells the time and where the state lives.
	Deployment Deployment
	// Nodes is how many nodes the balancer spreads requests over (at least 1).
	Nodes int
	// Skew is the distance, in µs, between the clocks of the first and the
	// last node; node i reads true time + record.Offset(i, Nodes, Skew). With one
	// node there is no skew.
	Skew int64
	// Clocks are the clocks' drift and steps beyond their offsets (see
	// Clocks); the zero value has none. Ideal ignores them.
	Clocks Clocks
	// RTT is the round trip to the store in µs; each leg is RTT/2 unless
	// Legs is set.
	RTT int64
	// Legs, when non-zero, replaces RTT/2 for each leg.
	Legs Legs
	// Jitter spreads each leg uniformly over ±Jitter percent of its mean
	// (integer µs); 0 makes every leg exactly its mean. DefaultJitter is the
	// design's ±25%.
	Jitter int
	// WipeAt is the true time at which a StoreWiped store drops every key.
	// It must be positive for StoreWiped and is ignored otherwise.
	WipeAt int64
	// RestartEvery is the mean time in µs between restarts of one node in the
	// local deployments; each gap is drawn uniformly from [1, 2·RestartEvery]
	// by that node's own stream. 0 means nodes never restart.
	RestartEvery int64
	// Pinned sends every request to the node its record.Request.Node names instead
	// of the node the balancer draws: traffic whose callers are fixed, such
	// as workers each with their own clock. Ideal ignores it.
	Pinned bool
	// Seed selects the random streams (balancer, legs, restarts).
	Seed uint64
	// Requests are the traffic, sorted by Sent, with 0 ≤ Sent ≤
	// algos.MaxTime/8 (algos.MaxTime for Ideal without Loop) and
	// 0 ≤ Key < record.MaxKeys.
	Requests []record.Request
	// Loop are the closed-loop clients, each on its key (0 ≤ Key <
	// record.MaxKeys), sending beside Requests as the answers they get direct.
	Loop []record.LoopClient
}

// DefaultJitter is the design's jitter on each leg to or from the store: ±25%.
const DefaultJitter = 25

// legs returns the mean of each leg in µs.
func (c *Config) legs() Legs {
	if c.Legs != (Legs{}) {
		return c.Legs
	}
	return Legs{Out: c.RTT / 2, Back: c.RTT / 2, Set: c.RTT / 2}
}

// Validate reports the first thing wrong with c, or nil. Run and Plan call
// it; a Config that passes never makes them panic or overflow.
func (c *Config) Validate() error {
	_, err := c.validate()
	return err
}

// validate checks c and returns the number of keys (the largest key + 1).
func (c *Config) validate() (int, error) { return c.validateKnown(nil, false) }

// requestCheck is what the check of the requests reads besides them: the
// node range a pinned request must fall in, or 0 when none is checked, and
// the latest send (latestSend).
type requestCheck struct {
	pinnedNodes int
	latest      int64
}

func (c *Config) requestCheck() requestCheck {
	if c.Pinned && c.Deployment != Ideal {
		return requestCheck{pinnedNodes: c.Nodes, latest: c.latestSend()}
	}
	return requestCheck{latest: c.latestSend()}
}

// latestSend is the latest Sent c accepts: algos.MaxTime for an ideal run
// without closed-loop clients, which adds no skew, leg or wait to a send
// time (so that package capacity plays a recorded trace at its Unix-epoch
// times), and an eighth of it otherwise, to leave room for those.
func (c *Config) latestSend() int64 {
	if c.Deployment == Ideal && len(c.Loop) == 0 {
		return algos.MaxTime
	}
	return algos.MaxTime / 8
}

// knownRequests are requests already checked: under check, with keys
// (the largest key + 1).
type knownRequests struct {
	check requestCheck
	keys  int
}

// validateKnown is validate, remembering in *known (when not nil) how c's
// requests were checked. With same, c's requests are those *known was
// written for (the caller compared them whole), and under the same check
// they are not walked again.
func (c *Config) validateKnown(known *knownRequests, same bool) (int, error) {
	if err := c.Limiter.Validate(); err != nil {
		return 0, fmt.Errorf("model: %w", err)
	}
	if err := c.Limit.Validate(); err != nil {
		return 0, fmt.Errorf("model: invalid limit: %w", err)
	}
	if !c.Deployment.valid() {
		return 0, fmt.Errorf("model: unknown deployment %d (want one of %v)", c.Deployment, Deployments())
	}
	if err := Applies(c.Limiter, c.Deployment); err != nil {
		return 0, err
	}
	const maxSpan = algos.MaxTime / 8 // room for a skew, three legs and a send time
	legs := c.legs()
	switch {
	case c.Nodes < 1:
		return 0, fmt.Errorf("model: %d nodes; a deployment needs at least one", c.Nodes)
	case c.Nodes > 1<<16:
		return 0, fmt.Errorf("model: %d nodes is more than the model handles (65536)", c.Nodes)
	case c.Skew < 0:
		return 0, fmt.Errorf("model: negative skew %d µs; skew is the distance between the extreme clocks", c.Skew)
	case c.Skew > maxSpan:
		return 0, fmt.Errorf("model: skew of %d µs is too large", c.Skew)
	case c.RTT < 0:
		return 0, fmt.Errorf("model: negative round trip %d µs", c.RTT)
	case c.RTT > maxSpan:
		return 0, fmt.Errorf("model: round trip of %d µs is too large", c.RTT)
	case legs.Out < 0 || legs.Back < 0 || legs.Set < 0:
		return 0, fmt.Errorf("model: negative leg in %+v", legs)
	case legs.Out > maxSpan || legs.Back > maxSpan || legs.Set > maxSpan:
		return 0, fmt.Errorf("model: leg in %+v is too large", legs)
	case c.Jitter < 0 || c.Jitter > 100:
		return 0, fmt.Errorf("model: jitter of %d%% is outside 0-100%%", c.Jitter)
	case c.WipeAt < 0:
		return 0, fmt.Errorf("model: negative wipe time %d µs", c.WipeAt)
	case c.Deployment == StoreWiped && c.WipeAt == 0:
		return 0, errors.New("model: deployment store-wiped needs WipeAt > 0, the true time of the wipe")
	case c.RestartEvery < 0:
		return 0, fmt.Errorf("model: negative RestartEvery %d µs", c.RestartEvery)
	case c.RestartEvery > maxSpan:
		return 0, fmt.Errorf("model: RestartEvery of %d µs is too large", c.RestartEvery)
	}
	if err := c.Clocks.validate(c.Nodes, maxSpan); err != nil {
		return 0, err
	}
	if _, pure := c.Limiter.Algorithm(); !pure && c.Limiter.Clock == limiter.StoreClock {
		for _, st := range c.Clocks.Steps {
			if st.Clock == StoreClockStep && st.By < 0 {
				return 0, fmt.Errorf("model: %s reads a store of its own, whose clock the model can only move forward; a store step back applies to pure algorithms", c.Limiter.Name)
			}
		}
	}
	if c.Deployment == LocalSplit {
		n := int64(c.Nodes)
		if c.Limit.Rate < n || c.Limit.Burst < n {
			return 0, fmt.Errorf("model: local-split over %d nodes needs a rate and burst of at least %d each, have %v", c.Nodes, c.Nodes, c.Limit)
		}
	}
	var keys int
	if check := c.requestCheck(); same && known != nil && known.check == check {
		keys = known.keys
	} else {
		var err error
		if keys, err = c.validateRequests(); err != nil {
			return 0, err
		}
		if known != nil {
			*known = knownRequests{check: check, keys: keys}
		}
	}
	for i, lc := range c.Loop {
		switch {
		case lc.Key < 0 || lc.Key >= record.MaxKeys:
			return 0, fmt.Errorf("model: closed-loop client %d has key %d, outside [0, %d)", i, lc.Key, record.MaxKeys)
		case lc.New == nil:
			return 0, fmt.Errorf("model: closed-loop client %d (key %d) has no New function", i, lc.Key)
		}
		keys = max(keys, lc.Key+1)
	}
	return keys, nil
}

// validateRequests checks c's requests and returns the largest key + 1.
func (c *Config) validateRequests() (int, error) {
	maxSpan := c.latestSend()
	keys := 0
	prev := int64(0)
	for i, a := range c.Requests {
		switch {
		case a.Key < 0 || a.Key >= record.MaxKeys:
			return 0, fmt.Errorf("model: request %d has key %d, outside [0, %d)", i, a.Key, record.MaxKeys)
		case a.Sent < 0:
			return 0, fmt.Errorf("model: request %d is at negative time %d µs", i, a.Sent)
		case a.Sent > maxSpan:
			return 0, fmt.Errorf("model: request %d at %d µs is too late", i, a.Sent)
		case c.Pinned && c.Deployment != Ideal && (a.Node < 0 || a.Node >= c.Nodes):
			return 0, fmt.Errorf("model: request %d is pinned to node %d, outside [0, %d)", i, a.Node, c.Nodes)
		case a.Sent < prev:
			return 0, fmt.Errorf("model: requests are not sorted: request %d at %s comes after one at %s",
				i, algos.FormatTime(a.Sent), algos.FormatTime(prev))
		}
		prev = a.Sent
		keys = max(keys, a.Key+1)
	}
	return keys, nil
}

// localLimit is the limit each node enforces in a local deployment.
func (c *Config) localLimit() (algos.Limit, error) {
	if c.Deployment != LocalSplit {
		return c.Limit, nil
	}
	n := int64(c.Nodes)
	l, err := algos.NewLimit(c.Limit.Rate/n, c.Limit.Window, c.Limit.Burst/n)
	if err != nil {
		return algos.Limit{}, fmt.Errorf("model: local-split share of %v over %d nodes: %w", c.Limit, c.Nodes, err)
	}
	return l, nil
}

// NotApplicableError is the error of a deployment that cannot hold a
// limiter at all, so that a report prints "n/a" and the reason instead of a
// number: a store-clock limiter has no node clock to be told and no local
// form, and only a pure algorithm's state can be read and written whole by
// the GET-then-SET bug.
type NotApplicableError struct {
	Limiter    string
	Deployment Deployment
	Reason     string
}

func (e *NotApplicableError) Error() string {
	return fmt.Sprintf("model: %s does not apply to %s: %s", e.Deployment, e.Limiter, e.Reason)
}

// Applies returns nil when s can be deployed as d, and a
// *NotApplicableError saying why not otherwise.
func Applies(s limiter.Spec, d Deployment) error {
	reason := ""
	_, pure := s.Algorithm()
	switch {
	case s.Clock == limiter.StoreClock && d == NodeClock:
		reason = "it reads the store's clock, so no node's clock reaches it"
	case s.Clock == limiter.StoreClock && d.PerNode():
		reason = "it reads the store's clock, and a local limiter has no store"
	case d == GetSet && !pure:
		reason = "GET, decide, SET needs the key's state as a value, which only a pure algorithm's is"
	default:
		return nil
	}
	return &NotApplicableError{Limiter: s.Name, Deployment: d, Reason: reason}
}
