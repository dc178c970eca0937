package adversary

import (
	"cmp"
	"slices"

	"github.com/overshoot-go/overshoot/model"
	"pgregory.net/rapid"
)

// step is one drawn request: the wait after the one before (after the
// start, for the first) and, when the attacker picks nodes, its node.
type step struct {
	gap  int64
	node int
}

// generators are the search's rapid generators, made once per search.
type generators struct {
	start *rapid.Generator[int64]
	steps *rapid.Generator[[]step]
	edits *rapid.Generator[[]edit]
}

// edit is one change to an attack: insert a request gap after request at
// (on node), move request at by ±gap, send it to node, or remove it. at is
// taken modulo the attack's length when the edit is applied.
type edit struct {
	kind int
	at   int
	step step
	back bool
}

const (
	insertEdit = iota
	moveEdit
	nodeEdit
	removeEdit
)

// generators draws attacks that shrink towards fewer requests, all at
// instant 0 on node 0. The gaps mix what breaks deployments: requests at
// the same instant (bursts), the limit's emission interval W/L and
// multiples of it, the emission interval less the skew (a node ahead
// refilled early), round trips (races on the store), the window, and
// anything up to the whole duration. The start is 0, early, just before a
// landmark (the wipe) or anywhere.
func (s *searcher) generators() generators {
	d, w := s.b.Duration, s.cfg.Limit.Window
	interval := max(1, (w+s.cfg.Limit.Rate-1)/s.cfg.Limit.Rate)
	rtt := max(1, s.cfg.RTT)
	skew := s.cfg.Skew
	upTo := func(n int64) *rapid.Generator[int64] { return rapid.Int64Range(0, max(0, min(n, d))) }

	starts := []*rapid.Generator[int64]{rapid.Just(int64(0)), upTo(w)}
	for _, l := range s.landmarks {
		starts = append(starts, rapid.Custom(func(t *rapid.T) int64 {
			return max(0, min(d, l-rapid.Int64Range(0, 2*interval).Draw(t, "before")))
		}))
	}
	starts = append(starts, upTo(d))

	kinds := stepKinds{
		pick:  s.cfg.Pinned && s.cfg.Deployment != model.Ideal && s.cfg.Nodes > 1,
		nodes: s.cfg.Nodes, interval: interval, rtt: rtt, skew: skew, w: w, d: d,
	}
	one := rapid.Custom(kinds.drawStep)
	edits := rapid.Custom(func(t *rapid.T) edit {
		return edit{
			kind: rapid.IntRange(insertEdit, removeEdit).Draw(t, "edit"),
			at:   rapid.IntRange(0, s.b.MaxRequests-1).Draw(t, "at"),
			step: one.Draw(t, "step"),
			back: rapid.Bool().Draw(t, "back"),
		}
	})
	return generators{
		start: rapid.OneOf(starts...),
		steps: rapid.SliceOfN(one, 1, s.b.MaxRequests),
		edits: rapid.SliceOfN(edits, 0, 8),
	}
}

// stepKinds are what drawStep needs of the deployment and the bounds.
type stepKinds struct {
	pick                      bool // the attacker picks the node
	nodes                     int
	interval, rtt, skew, w, d int64
}

// drawStep draws one step: a gap of one of the kinds generators lists and,
// when the attacker picks them, a node.
func (k stepKinds) drawStep(t *rapid.T) step {
	var g int64
	switch rapid.IntRange(0, 13).Draw(t, "kind") {
	case 0, 1, 2, 3:
		g = 0
	case 4:
		g = rapid.Int64Range(0, 2*k.interval).Draw(t, "small")
	case 5, 6:
		g = rapid.Int64Range(1, 3).Draw(t, "intervals")*k.interval + nudge(t, k.rtt)
	case 7, 8:
		g = k.interval - k.skew + nudge(t, k.rtt)
	case 9:
		g = k.skew + nudge(t, k.rtt)
	case 10:
		g = rapid.Int64Range(0, 2*k.rtt).Draw(t, "rtt")
	case 11:
		g = k.w + nudge(t, k.rtt)
	case 12:
		g = rapid.Int64Range(0, k.w).Draw(t, "window")
	default:
		g = rapid.Int64Range(0, k.d).Draw(t, "jump")
	}
	st := step{gap: max(0, min(g, k.d))}
	if k.pick {
		st.node = rapid.IntRange(0, k.nodes-1).Draw(t, "node")
	}
	return st
}

// nudge is a small shift either way, about a round trip or a µs.
func nudge(t *rapid.T, rtt int64) int64 {
	if rapid.Bool().Draw(t, "fine") {
		return rapid.Int64Range(-2, 2).Draw(t, "µs")
	}
	return rapid.Int64Range(-rtt, rtt).Draw(t, "shift")
}

// draw draws one attack.
func (s *searcher) draw(t *rapid.T) []model.Request {
	start := s.gen.start.Draw(t, "start")
	return s.place(start, s.gen.steps.Draw(t, "steps"))
}

// mutate draws a few edits and applies them to base, a copy of it: how
// the climb searches near its best attack. It shrinks towards no edit at
// all, base itself.
func (s *searcher) mutate(t *rapid.T, base []model.Request) []model.Request {
	reqs := slices.Clone(base)
	for _, e := range s.gen.edits.Draw(t, "edits") {
		if len(reqs) == 0 {
			break
		}
		i := e.at % len(reqs)
		switch e.kind {
		case insertEdit:
			r := reqs[i]
			r.Sent, r.Node = min(r.Sent+e.step.gap, s.b.Duration), e.step.node
			reqs = slices.Insert(reqs, i+1, r)
		case moveEdit:
			if e.back {
				reqs[i].Sent = max(0, reqs[i].Sent-e.step.gap)
			} else {
				reqs[i].Sent = min(s.b.Duration, reqs[i].Sent+e.step.gap)
			}
		case nodeEdit:
			reqs[i].Node = e.step.node
		case removeEdit:
			reqs = slices.Delete(reqs, i, i+1)
		}
	}
	slices.SortStableFunc(reqs, func(a, b model.Request) int { return cmp.Compare(a.Sent, b.Sent) })
	return s.within(reqs)
}

// within keeps the requests of a sorted list, in order, that the bounds
// allow: each one that would make a window of the limit hold more than the
// offered rate allows is left out, and so is any past MaxRequests.
func (s *searcher) within(reqs []model.Request) []model.Request {
	w := s.cfg.Limit.Window
	out := reqs[:0]
	for _, r := range reqs {
		if len(out) == s.b.MaxRequests {
			break
		}
		if n := len(out); n >= s.perWindow && r.Sent-out[n-s.perWindow].Sent < w {
			continue
		}
		out = append(out, r)
	}
	return out
}

// place turns drawn steps into requests within the bounds: each request
// waits its gap after the one before, and then, if the window before it
// already holds the most requests the offered rate allows, until the
// earliest of those leaves it. Requests past the duration are dropped
// (the first is moved to the end of it instead).
func (s *searcher) place(start int64, steps []step) []model.Request {
	w, d := s.cfg.Limit.Window, s.b.Duration
	reqs := make([]model.Request, 0, len(steps))
	at := start
	for i, st := range steps {
		at += st.gap // both at most d, which is far from overflowing
		if i >= s.perWindow {
			first := reqs[i-s.perWindow].Sent
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
		reqs = append(reqs, model.Request{Sent: at, Node: st.node})
	}
	return reqs
}

// valid reports whether reqs is an attack within the bounds: at least one
// request, sorted, within [0, Duration], no more than the offered rate
// allows in any window, on the nodes there are.
func (s *searcher) valid(reqs []model.Request) bool {
	if len(reqs) == 0 || len(reqs) > s.b.MaxRequests {
		return false
	}
	w := s.cfg.Limit.Window
	for i, r := range reqs {
		switch {
		case r.Key != 0 || r.Sent < 0 || r.Sent > s.b.Duration || r.Node < 0 || r.Node >= max(1, s.cfg.Nodes):
			return false
		case i > 0 && r.Sent < reqs[i-1].Sent:
			return false
		case i >= s.perWindow && r.Sent-reqs[i-s.perWindow].Sent < w:
			return false
		}
	}
	return true
}
