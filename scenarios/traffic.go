package scenarios

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// Client is one of the five clients. Its value is the key its requests use.
type Client int

// The five clients. With a limit of L per W:
const (
	// Flood sends a Poisson stream at 5·L per W from the start to the end.
	Flood Client = iota
	// Boundary sends L requests in the W/100 just before a window edge and L
	// in the W/100 just after it, at the edges W, 3W, 5W, ...; each request
	// sits at a seeded place in its own equal slot of the burst.
	Boundary
	// OnOff is the flood switched on for 2W and off for 3W, starting on.
	OnOff
	// Honest sends evenly at 90% of its limit, a gap of W/(0.9·L) with a
	// seeded phase: a well-behaved client that should never be turned away.
	Honest
	// FirstHit aims at a window that starts at the key's first request (a
	// fixed window anchored at its first hit, INCR then EXPIRE): every 3W,
	// from W/2 on, one request on its idle key to start the window, then
	// L-1 in the W/100 before that window's end (W after the first request)
	// and L in the W/100 after it, each at a seeded place in its own slot.
	// Its edges fall mid-way through aligned windows, so it is not the
	// boundary client again.
	FirstHit
	// RetryAfter, DrainIdle and ResetBurst are the closed-loop clients
	// (RetryAfterClient, DrainIdleClient, ResetBurstClient), which run when
	// Options.Loop is set.
	RetryAfter
	DrainIdle
	ResetBurst
	// Edge probes the µs either side of every window edge and refill
	// instant (EdgeTraffic); it runs when Options.Edge is set, as in a hunt.
	Edge
	// NumClients is the number of clients, open and closed-loop (and of
	// keys in a run).
	NumClients = 9
)

// Clients lists the five open-loop clients, those of Traffic, in key order.
func Clients() []Client { return []Client{Flood, Boundary, OnOff, Honest, FirstHit} }

// Clients lists the clients of a run under o, in key order: the five of
// Traffic, the three closed-loop ones when o.Loop is set, and the
// edge-probing one when o.Edge is.
func (o Options) Clients() []Client {
	c := Clients()
	if o.Loop {
		c = append(c, RetryAfter, DrainIdle, ResetBurst)
	}
	if o.Edge {
		c = append(c, Edge)
	}
	return c
}

var clientNames = [NumClients]string{"flood", "boundary", "on-off", "honest", "first-hit", "retry-after", "drain-idle", "reset-burst", "edge"}

// String is the client's short name.
func (c Client) String() string {
	if c >= 0 && c < NumClients {
		return clientNames[c]
	}
	return fmt.Sprintf("Client(%d)", int(c))
}

// Attack is true for the clients that send more than the limit within
// some window: all but the honest one. "Over" is measured on them.
func (c Client) Attack() bool { return c != Honest }

// Purposes of the traffic's random streams, one per client, each seeded from
// (seed, purpose): changing one client never changes another.
const (
	purposeFlood    uint64 = 0x666c6f6f64000000 // "flood"
	purposeBoundary uint64 = 0x626f756e64617279 // "boundary"
	purposeOnOff    uint64 = 0x6f6e2d6f66660000 // "on-off"
	purposeHonest   uint64 = 0x686f6e6573740000 // "honest"
	purposeFirstHit uint64 = 0x66697273742d6869 // "first-hi"
)

// MaxDuration is the longest traffic Traffic generates: one day.
const MaxDuration = 24 * 3600 * algos.Second

// Traffic returns the five clients' requests over [0, duration) for one
// seed, each client on the key equal to its Client value, merged in time
// order (ties in client order). It depends on seed, limit and duration only.
func Traffic(seed uint64, limit algos.Limit, duration int64) ([]model.Request, error) {
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("scenarios: invalid limit: %w", err)
	}
	if duration <= 0 || duration > MaxDuration {
		return nil, fmt.Errorf("scenarios: duration of %d µs is outside (0, one day]", duration)
	}
	if limit.Window > duration {
		return nil, fmt.Errorf("scenarios: window %s is longer than the run (%s)", algos.FormatMicros(limit.Window), algos.FormatMicros(duration))
	}
	// A Poisson stream at 5·L per W needs a mean gap of at least a µs.
	if limit.Rate > limit.Window/5 {
		return nil, fmt.Errorf("scenarios: a flood at 5× %v would send more than one request per µs", limit)
	}
	// Each client's requests come out sorted by time; merged in key order,
	// ties in key order, they are the stable sort of all of them by (time,
	// key), in one pass.
	parts := [][]model.Request{
		flood(nil, Flood, newRand(seed, purposeFlood), limit, duration, duration, duration),
		boundary(nil, newRand(seed, purposeBoundary), limit, duration),
		flood(nil, OnOff, newRand(seed, purposeOnOff), limit, duration, 2*limit.Window, 5*limit.Window),
		honest(nil, newRand(seed, purposeHonest), limit, duration),
		firstHit(nil, newRand(seed, purposeFirstHit), limit, duration),
	}
	all := mergeBySendThenKey(parts...)
	return all, nil
}

// mergeBySendThenKey returns the requests of parts, each sorted by (Send,
// Key), as one slice sorted by (Send, Key), equal ones in the order of
// parts and then of each part: what a stable sort of their concatenation
// by (Send, Key) gives. A part out of order is sorted with the rest, as
// such a sort would.
func mergeBySendThenKey(parts ...[]model.Request) []model.Request {
	less := func(a, b model.Request) bool { return a.Send < b.Send || (a.Send == b.Send && a.Key < b.Key) }
	n := 0
	sorted := true
	for _, p := range parts {
		n += len(p)
		sorted = sorted && slices.IsSortedFunc(p, cmpSendThenKey)
	}
	out := make([]model.Request, 0, n)
	if !sorted {
		for _, p := range parts {
			out = append(out, p...)
		}
		slices.SortStableFunc(out, cmpSendThenKey)
		return out
	}
	// Merge pairwise, left into right: on a tie the earlier part goes first.
	var buf []model.Request
	for _, p := range parts {
		buf = slices.Grow(buf[:0], len(out)+len(p))
		i, j := 0, 0
		for i < len(out) && j < len(p) {
			if less(p[j], out[i]) {
				buf = append(buf, p[j])
				j++
			} else {
				buf = append(buf, out[i])
				i++
			}
		}
		buf = append(append(buf, out[i:]...), p[j:]...)
		out, buf = buf, out
	}
	return out
}

func cmpSendThenKey(a, b model.Request) int {
	if a.Send != b.Send {
		if a.Send < b.Send {
			return -1
		}
		return 1
	}
	return a.Key - b.Key
}

func newRand(seed, purpose uint64) *model.Stream { s := model.NewStream(seed, purpose); return &s }

// expGap draws an exponential gap of the given mean, rounded to the µs.
// It is the one place overshoot's traffic uses floating point: -ln(U) with U
// uniform in (0, 1], on 53 random bits.
func expGap(p *model.Stream, mean float64) int64 {
	u := float64(p.Uint64()>>11+1) / (1 << 53)
	return int64(-math.Log(u)*mean + 0.5)
}

// flood appends a Poisson stream at 5·L per W on client's key, on during
// [k·period, k·period+on) for every k, until duration.
func flood(dst []model.Request, c Client, p *model.Stream, l algos.Limit, duration, on, period int64) []model.Request {
	mean := float64(l.Window) / float64(5*l.Rate)
	for start := int64(0); start < duration; start += period {
		end := min(start+on, duration)
		for t := start + expGap(p, mean); t < end; t += expGap(p, mean) {
			dst = append(dst, model.Request{Key: int(c), Send: t})
		}
	}
	return dst
}

// boundary appends L requests just before and L just after the edges W, 3W,
// 5W, ... that have room for the burst after them before duration.
func boundary(dst []model.Request, p *model.Stream, l algos.Limit, duration int64) []model.Request {
	slot := max(1, l.Window/100/l.Rate) // each request's own slot, in µs
	span := slot * l.Rate               // the length of one half-burst
	for edge := l.Window; edge+span <= duration; edge += 2 * l.Window {
		if edge-span < 0 {
			continue
		}
		for half := range int64(2) {
			from := edge - span + half*span
			for j := range l.Rate {
				dst = append(dst, model.Request{Key: int(Boundary), Send: from + j*slot + int64(p.Below(uint64(slot)))})
			}
		}
	}
	return dst
}

// firstHit appends, every 3W from W/2, one request that starts a window on
// the idle key, then L-1 requests just before that window's end and L just
// after it, for every cycle whose last request is before duration.
func firstHit(dst []model.Request, p *model.Stream, l algos.Limit, duration int64) []model.Request {
	slot := max(1, l.Window/100/l.Rate) // each request's own slot, as the boundary client's
	span := slot * l.Rate
	for start := l.Window / 2; start+l.Window+span <= duration; start += 3 * l.Window {
		dst = append(dst, model.Request{Key: int(FirstHit), Send: start})
		edge := start + l.Window
		for j := int64(1); j < l.Rate; j++ { // L-1 before the edge, the first slot left empty
			dst = append(dst, model.Request{Key: int(FirstHit), Send: edge - span + j*slot + int64(p.Below(uint64(slot)))})
		}
		for j := range l.Rate {
			dst = append(dst, model.Request{Key: int(FirstHit), Send: edge + j*slot + int64(p.Below(uint64(slot)))})
		}
	}
	return dst
}

// honest appends evenly spaced requests at 90% of the limit: the j-th at
// phase + ⌊j·10·W/(9·L)⌋, with a seeded phase within the first gap.
func honest(dst []model.Request, p *model.Stream, l algos.Limit, duration int64) []model.Request {
	num, den := 10*l.Window, 9*l.Rate // the gap is num/den µs
	phase := int64(p.Below(uint64((num + den - 1) / den)))
	for j := int64(0); ; j++ {
		hi, lo := bits.Mul64(uint64(j), uint64(num))
		if hi != 0 {
			break
		}
		t := phase + int64(lo/uint64(den))
		if t >= duration {
			break
		}
		dst = append(dst, model.Request{Key: int(Honest), Send: t})
	}
	return dst
}
