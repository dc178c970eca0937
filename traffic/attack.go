package traffic

import (
	"cmp"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// The traffic of package adversary's search: an attack on one key is drawn
// as waits and edits (the search draws them, with rapid), and turned here
// into requests at times within the attacker's bounds.

// AttackBounds is what an attack on one key may send: every request on key 0,
// sent at a true time in [0, Duration] µs, on a node in [0, max(1, Nodes)),
// at most MaxRequests of them, and at most PerWindow in any window
// [s, s+Window) of the limit's window. It is adversary.Bounds resolved
// against the deployment under attack (AttackBoundsFor).
type AttackBounds struct {
	Window      int64 // the limit's window W, µs
	Duration    int64 // the span of an attack, µs
	MaxRequests int   // the most requests of one attack
	PerWindow   int   // the most requests in any window of length Window (at least 1)
	Nodes       int   // the deployment's nodes
}

// AttackBoundsFor is the bounds of an attack on limit l, over duration µs,
// of at most maxRequests requests offered at no more than maxRate times the
// limit's rate, on a deployment of nodes nodes: PerWindow is maxRate·L, or
// maxRequests when that is no tighter. It expects a valid limit, and
// maxRequests and maxRate of at least 1.
func AttackBoundsFor(l algos.Limit, duration int64, maxRequests int, maxRate int64, nodes int) AttackBounds {
	perWindow := maxRequests // no bound tighter than the attack's length
	if maxRate <= int64(maxRequests)/l.Rate {
		perWindow = int(maxRate * l.Rate)
	}
	return AttackBounds{Window: l.Window, Duration: duration, MaxRequests: maxRequests, PerWindow: perWindow, Nodes: nodes}
}

// Wait is one request of an attack before it is placed: Gap, its wait in
// µs after the request before it (after the attack's start, for the
// first), and Node, its node (0 unless the attacker picks nodes).
type Wait struct {
	Gap  int64
	Node int
}

// Wait is a wait of gap µs for a request on node, its gap clamped into
// [0, Duration]: a request never waits backwards, nor longer than the
// attack lasts (so that adding gaps cannot overflow).
func (e AttackBounds) Wait(gap int64, node int) Wait {
	return Wait{Gap: max(0, min(gap, e.Duration)), Node: node}
}

// Place turns waits into requests within the bounds: each request waits
// its gap after the one before, and then, if the window before it already
// holds PerWindow requests, until the earliest of those leaves it. Requests
// past Duration are dropped; the first is moved to the end of it instead,
// so that an attack has at least one request. The result is sorted, and
// Valid for at most MaxRequests waits, clamped (AttackBounds.Wait), on the
// nodes there are, from a start in [0, Duration].
func (e AttackBounds) Place(start int64, waits []Wait) []record.Request {
	w, d := e.Window, e.Duration
	reqs := make([]record.Request, 0, len(waits))
	at := start
	for i, st := range waits {
		at += st.Gap // both at most d, which is far from overflowing
		if i >= e.PerWindow {
			first := reqs[i-e.PerWindow].Sent
			if w > d-first {
				break // it would wait past the duration
			}
			at = max(at, first+w)
		}
		if at > d {
			if i > 0 {
				break
			}
			at = d // an attack has at least one request
		}
		reqs = append(reqs, record.Request{Sent: at, Node: st.Node})
	}
	return reqs
}

// The kinds of Edit.
const (
	InsertEdit = iota // insert a request Wait.Gap after request At, on Wait.Node
	MoveEdit          // move request At by Wait.Gap, earlier when Back
	NodeEdit          // send request At to Wait.Node
	RemoveEdit        // remove request At
)

// Edit is one change to an attack, of one of the kinds InsertEdit to
// RemoveEdit. At is taken modulo the attack's length when the edit is
// applied.
type Edit struct {
	Kind int
	At   int
	Wait Wait
	Back bool
}

// Edit applies edits to a copy of base, a sorted attack within the
// bounds, in order, stopping if the attack runs out of requests: a time
// moved or inserted past either end of [0, Duration] stays at that end.
// It then sorts the requests by time (stably: among requests at the same
// instant, in the edited order) and keeps those that are Within the
// bounds. base is not modified.
func (e AttackBounds) Edit(base []record.Request, edits []Edit) []record.Request {
	reqs := slices.Clone(base)
	for _, ed := range edits {
		if len(reqs) == 0 {
			break
		}
		i := ed.At % len(reqs)
		switch ed.Kind {
		case InsertEdit:
			r := reqs[i]
			r.Sent, r.Node = min(r.Sent+ed.Wait.Gap, e.Duration), ed.Wait.Node
			reqs = slices.Insert(reqs, i+1, r)
		case MoveEdit:
			if ed.Back {
				reqs[i].Sent = max(0, reqs[i].Sent-ed.Wait.Gap)
			} else {
				reqs[i].Sent = min(e.Duration, reqs[i].Sent+ed.Wait.Gap)
			}
		case NodeEdit:
			reqs[i].Node = ed.Wait.Node
		case RemoveEdit:
			reqs = slices.Delete(reqs, i, i+1)
		}
	}
	slices.SortStableFunc(reqs, func(a, b record.Request) int { return cmp.Compare(a.Sent, b.Sent) })
	return e.Within(reqs)
}

// Within keeps the requests of a sorted list, in order, that the bounds
// allows: each one that would make a window hold more than PerWindow
// requests is left out, and so is any past MaxRequests. It filters reqs in
// place and returns the kept prefix.
func (e AttackBounds) Within(reqs []record.Request) []record.Request {
	out := reqs[:0]
	for _, r := range reqs {
		if len(out) == e.MaxRequests {
			break
		}
		if n := len(out); n >= e.PerWindow && r.Sent-out[n-e.PerWindow].Sent < e.Window {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Valid reports whether reqs is an attack within the bounds: at least
// one request and at most MaxRequests, all on key 0, sorted by time,
// within [0, Duration], no more than PerWindow in any window, on the nodes
// there are.
func (e AttackBounds) Valid(reqs []record.Request) bool {
	if len(reqs) == 0 || len(reqs) > e.MaxRequests {
		return false
	}
	for i, r := range reqs {
		switch {
		case r.Key != 0 || r.Sent < 0 || r.Sent > e.Duration || r.Node < 0 || r.Node >= max(1, e.Nodes):
			return false
		case i > 0 && r.Sent < reqs[i-1].Sent:
			return false
		case i >= e.PerWindow && r.Sent-reqs[i-e.PerWindow].Sent < e.Window:
			return false
		}
	}
	return true
}
