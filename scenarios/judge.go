package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/differential"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
)

// A hunt judges the whole contract, not only the promise. Every check is
// made per limiter instance (the store, for every node of a shared
// deployment; each node, for a local one), in the time that instance was
// told, so that a fleet is held to exactly what one limiter owes its
// callers, and a clock error or a node that never saw the earlier request
// is not mistaken for a bug.

// Breach is one way a deployment broke its limiter's contract.
type Breach uint8

const (
	// OverAdmission: the admits broke the limiter's promise.
	OverAdmission Breach = iota + 1
	// HonestTurnedAway: a request was refused where one more admit, after
	// the instance's admits before it, would have kept the promise. Not
	// judged for a Conservative limiter or a promise with no envelope.
	HonestTurnedAway
	// RetryDenied: a closed-loop client's next request after a denial, on
	// the same instance, at or after the Retry-After it was given, was
	// denied.
	RetryDenied
	// RetryExtended: a closed-loop client's next request after a denial,
	// on the same instance and before the Retry-After, was denied and told
	// a later deadline than the one it came early for.
	RetryExtended
	// OffReference: in some aligned window the limiter admitted more or
	// fewer than its reference (Suspect.Reference) on the same requests,
	// past the suspect's tolerance.
	OffReference
	numBreaches = iota + 1 // the kinds, and the zero Breach
)

var breachNames = [numBreaches]string{"", "over-admission", "honest turned away", "retry denied", "retry extended", "off reference"}

// String is the breach's short name.
func (b Breach) String() string {
	if b > 0 && int(b) < len(breachNames) {
		return breachNames[b]
	}
	return fmt.Sprintf("Breach(%d)", int(b))
}

// Breaches lists every kind of breach, in order.
func Breaches() []Breach {
	out := make([]Breach, 0, numBreaches-1)
	for b := Breach(1); b < numBreaches; b++ {
		out = append(out, b)
	}
	return out
}

// finding is a client's first breach of one kind in a run: where (From and
// To, on the instance's clock) and why, in words.
type finding struct {
	breach Breach
	v      *algos.Violation
	trace  []string // the requests that show it, one a line, when the judge has them
}

// traceLine is one request of a trace: when its instance was told it, who
// sent it, when it was decided, and what was decided.
func traceLine(r judged, what string) string {
	return fmt.Sprintf("told %s  node %d  decided %s  %s", algos.FormatTime(r.told), r.node, algos.FormatTime(r.decided), what)
}

func outcome(r judged) string {
	switch {
	case r.failed:
		return "error"
	case r.admitted:
		return "admitted"
	}
	return "refused"
}

// judged is one request as the judge sees it.
type judged struct {
	told, decided    int64
	key, node        int32
	instance         int32
	admitted, failed bool
}

// judgeable reports whether a run under cfg can be held to honesty and
// Retry-After: every instance must keep its state for the whole run (no
// wipe, no restart) and see each request at a time it was told (not the
// GET/SET race, whose copies decide apart from the state).
func judgeable(cfg model.Config) bool {
	switch cfg.Deployment {
	case model.Ideal, model.NodeClock, model.StoreClock:
		return true
	case model.LocalSplit, model.LocalFull:
		return cfg.RestartEvery == 0
	}
	return false
}

// requestsOf lays out every request of a run (the fixed ones, then the
// closed-loop ones in the order sent) with the instance that decided it and
// the time that instance was told: the store's clock when it decided, or
// the sending node's clock when it sent (model.Offset from the true time).
func requestsOf(cfg model.Config, res model.Result) []judged {
	all := make([]judged, len(res.Outcomes))
	local := cfg.Deployment == model.LocalSplit || cfg.Deployment == model.LocalFull
	fixed := len(cfg.Requests)
	offsets := make([]int64, max(1, cfg.Nodes))
	for n := range offsets {
		offsets[n] = model.Offset(n, cfg.Nodes, cfg.Skew)
	}
	for i, o := range res.Outcomes {
		var key int
		var send int64
		if i < fixed {
			key, send = cfg.Requests[i].Key, cfg.Requests[i].Send
		} else {
			p := res.LoopRequests[i-fixed]
			key, send = p.Key, p.Send
		}
		r := judged{key: int32(key), node: o.Node, decided: o.Decided, admitted: o.Admitted, failed: o.Failed}
		switch cfg.Deployment {
		case model.StoreClock:
			r.told = o.Decided
		case model.Ideal:
			r.told = send
		default: // node clock, local: the node's clock when it sent
			r.told = send + offsets[o.Node]
		}
		r.instance = r.key
		if local {
			r.instance = r.key*int32(cfg.Nodes) + r.node
		}
		all[i] = r
	}
	return all
}

// byInstance groups the requests' indices by instance, each group in the
// order the instance decided them (by decision time, then request order).
func byInstance(all []judged) [][]int32 {
	n := int32(0)
	for _, r := range all {
		n = max(n, r.instance+1)
	}
	sizes := make([]int, n)
	for _, r := range all {
		sizes[r.instance]++
	}
	groups := make([][]int32, n)
	for k := range groups {
		groups[k] = make([]int32, 0, sizes[k])
	}
	for i, r := range all {
		groups[r.instance] = append(groups[r.instance], int32(i))
	}
	for _, g := range groups {
		sortByDecision(all, g)
	}
	return groups
}

// sortByDecision orders g by decision time, ties in request order. Both fit
// one int64 for any run a hunt makes, and sorting plain integers is what
// keeps the judge a small part of a hunt's time.
func sortByDecision(all []judged, g []int32) {
	const idxBits = 24
	keys := make([]int64, len(g))
	for j, i := range g {
		d := all[i].decided
		if d < 0 || d >= 1<<(62-idxBits) || len(all) >= 1<<idxBits {
			slices.SortStableFunc(g, func(a, b int32) int { return cmp.Compare(all[a].decided, all[b].decided) })
			return
		}
		keys[j] = d<<idxBits | int64(i)
	}
	slices.Sort(keys)
	for j, k := range keys {
		g[j] = int32(k & (1<<idxBits - 1))
	}
}

// instanceLimit is the limit one instance enforces.
func instanceLimit(cfg model.Config) algos.Limit {
	if cfg.Deployment != model.LocalSplit {
		return cfg.Limit
	}
	n := int64(cfg.Nodes)
	l, err := algos.NewLimit(cfg.Limit.Rate/n, cfg.Limit.Window, cfg.Limit.Burst/n)
	if err != nil { // the model refused such a run before it got here
		return cfg.Limit
	}
	return l
}

// traceLength is how many requests a trace of an honest request turned
// away shows: the refusal and those its instance decided just before.
const traceLength = 6

// honesty finds, per client, the first refusal that the promise allowed.
// An instance told a time earlier than one before it (clocks that disagree)
// is judged only up to there: past that, the promise says nothing of what
// it owes.
func honesty(spec limiter.Spec, cfg model.Config, all []judged, groups [][]int32, out *[NumClients]*finding) {
	if spec.Conservative {
		return
	}
	l := instanceLimit(cfg)
	for _, g := range groups {
		env, ok := spec.Promise(l).Envelope()
		if !ok {
			return
		}
		var before int64
		admits := 0
		for j, i := range g {
			r := all[i]
			if j > 0 && r.told < before {
				break
			}
			before = r.told
			switch {
			case r.failed:
			case r.admitted:
				env.Admit(r.told)
				admits++
			case r.key < NumClients && out[r.key] == nil && env.Allows(r.told):
				where := "the store"
				if cfg.Deployment == model.LocalSplit || cfg.Deployment == model.LocalFull {
					where = fmt.Sprintf("node %d", r.node)
				}
				f := &finding{breach: HonestTurnedAway, v: &algos.Violation{From: r.told, To: r.told, Reason: fmt.Sprintf(
					"%s refused a request at %s, after %d admits, where one more keeps the promise (%s)",
					where, algos.FormatTime(r.told), admits, spec.Promise(l).Text)}}
				for _, k := range g[max(0, j-traceLength+1) : j+1] {
					f.trace = append(f.trace, traceLine(all[k], outcome(all[k])))
				}
				out[r.key] = f
			}
		}
	}
}

// retries holds a closed-loop client (on key) to the answers it was given:
// its next request after a denial, on the same instance, is admitted if it
// came at or after the Retry-After, and if it came before and was denied,
// it is not told to wait past the deadline it came early for. The
// retry-after client tests the first; the drain-idle and reset-burst
// clients, which come back early, the second. replies are the answers the
// client was handed, in the order it sent the requests (the last may have
// none).
func retries(all []judged, key int, replies []model.Reply, out *[NumClients]*finding) {
	if key >= NumClients || out[key] != nil {
		return
	}
	var mine []int
	for i := range all {
		if int(all[i].key) == key && len(mine) < len(replies) {
			mine = append(mine, i)
		}
	}
	for k := 1; k < len(mine); k++ {
		d, r := all[mine[k-1]], all[mine[k]]
		dd, rd := replies[k-1].Decision, replies[k].Decision
		if d.failed || d.admitted || r.failed || r.instance != d.instance || r.told < d.told {
			continue
		}
		deadline := d.told + dd.RetryAfter
		trace := func() []string {
			return []string{
				traceLine(d, fmt.Sprintf("refused, Retry-After %s", algos.FormatMicros(dd.RetryAfter))),
				traceLine(r, fmt.Sprintf("refused, Retry-After %s", algos.FormatMicros(rd.RetryAfter))),
			}
		}
		switch {
		case r.told >= deadline && !r.admitted:
			out[key] = &finding{RetryDenied, &algos.Violation{From: d.told, To: r.told, Reason: fmt.Sprintf(
				"denied at %s with Retry-After %s, retried at %s (%s later), denied again with Retry-After %s",
				algos.FormatTime(d.told), algos.FormatMicros(dd.RetryAfter), algos.FormatTime(r.told),
				algos.FormatMicros(r.told-d.told), algos.FormatMicros(rd.RetryAfter))}, trace()}
			return
		case r.told < deadline && !r.admitted && r.told+rd.RetryAfter > deadline:
			out[key] = &finding{RetryExtended, &algos.Violation{From: d.told, To: r.told, Reason: fmt.Sprintf(
				"denied at %s until %s, retried early at %s and told to wait until %s",
				algos.FormatTime(d.told), algos.FormatTime(deadline), algos.FormatTime(r.told), algos.FormatTime(r.told+rd.RetryAfter))}, trace()}
			return
		}
	}
}

// recorder keeps the answers one closed-loop client was given, in order.
type recorder struct {
	model.Client
	replies *[]model.Reply
}

func (r recorder) Next(last *model.Reply) (int64, bool) {
	if last != nil {
		*r.replies = append(*r.replies, *last)
	}
	return r.Client.Next(last)
}

// offReference compares the run of cfg with ref's on the same requests and,
// when some key's aligned window is more than tolerance apart (either way),
// records an OffReference finding for the client of the worst such window,
// unless that client already has a breach of its own.
func offReference(cfg model.Config, ref limiter.Spec, tolerance int64, run *jobRun) error {
	rep, err := differential.Run(cfg.Limiter, ref, cfg)
	if err != nil {
		return err
	}
	// Limiter errors are counted by the hunt already; here only admits count.
	var past *differential.BoundError
	if !errors.As(rep.Check(differential.Bound{Over: tolerance, Under: tolerance, Errors: math.MaxInt64}), &past) {
		return nil
	}
	row := past.Row
	if row.Key >= 0 && row.Key < NumClients && run.found[row.Key] == nil {
		run.found[row.Key] = &finding{breach: OffReference, v: &algos.Violation{From: row.Start, To: row.End, Admits: row.Mine, Allowed: row.Ref, Reason: past.Error()}}
	}
	return nil
}
