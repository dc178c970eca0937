package adversary

import (
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
	"pgregory.net/rapid"
)

// The search's draws: what rapid chooses (starts, gaps, nodes, edits) and
// how those choices are spread over the gaps that break deployments. They
// stay here, not in package traffic, because they draw with *rapid.T: rapid
// shrinks an attack by shrinking these draws, and traffic, which the
// reports and the capacity plan import, must not import rapid (a test
// library that reads the test flags). What the draws become, requests at
// times within the bounds, is traffic.AttackBounds's.

// generators are the search's rapid generators, made once per search.
type generators struct {
	start *rapid.Generator[int64]
	waits *rapid.Generator[[]traffic.Wait]
	edits *rapid.Generator[[]traffic.Edit]
}

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

	kinds := waitKinds{
		pick:  s.cfg.Pinned && s.cfg.Deployment != model.Ideal && s.cfg.Nodes > 1,
		nodes: s.cfg.Nodes, interval: interval, rtt: rtt, skew: skew, w: w, d: d,
		env: s.env,
	}
	one := rapid.Custom(kinds.drawWait)
	edits := rapid.Custom(func(t *rapid.T) traffic.Edit {
		return traffic.Edit{
			Kind: rapid.IntRange(traffic.InsertEdit, traffic.RemoveEdit).Draw(t, "edit"),
			At:   rapid.IntRange(0, s.b.MaxRequests-1).Draw(t, "at"),
			Wait: one.Draw(t, "wait"),
			Back: rapid.Bool().Draw(t, "back"),
		}
	})
	return generators{
		start: rapid.OneOf(starts...),
		waits: rapid.SliceOfN(one, 1, s.b.MaxRequests),
		edits: rapid.SliceOfN(edits, 0, 8),
	}
}

// waitKinds are what drawWait needs of the deployment and the bounds.
type waitKinds struct {
	pick                      bool // the attacker picks the node
	nodes                     int
	interval, rtt, skew, w, d int64
	env                       traffic.AttackBounds // clamps the gaps
}

// drawWait draws one request's wait: a gap of one of the kinds generators
// lists and, when the attacker picks them, a node.
func (k waitKinds) drawWait(t *rapid.T) traffic.Wait {
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
	node := 0
	if k.pick {
		node = rapid.IntRange(0, k.nodes-1).Draw(t, "node")
	}
	return k.env.Wait(g, node)
}

// nudge is a small shift either way, about a round trip or a µs.
func nudge(t *rapid.T, rtt int64) int64 {
	if rapid.Bool().Draw(t, "fine") {
		return rapid.Int64Range(-2, 2).Draw(t, "µs")
	}
	return rapid.Int64Range(-rtt, rtt).Draw(t, "shift")
}

// draw draws one attack: a start and its waits, placed within the bounds.
func (s *searcher) draw(t *rapid.T) []record.Request {
	start := s.gen.start.Draw(t, "start")
	return s.env.Place(start, s.gen.waits.Draw(t, "waits"))
}

// mutate draws a few edits and applies them to a copy of base: how the
// climb searches near its best attack. It shrinks towards no edit at all,
// base itself.
func (s *searcher) mutate(t *rapid.T, base []record.Request) []record.Request {
	return s.env.Edit(base, s.gen.edits.Draw(t, "edits"))
}
