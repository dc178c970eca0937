package scenarios

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

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
	parts, err := trafficParts(seed, limit, duration, nil)
	if err != nil {
		return nil, err
	}
	return mergeBySentThenKey(nil, parts...), nil
}

// checkTraffic is what Traffic (and EdgeTraffic, whose checks are among
// these) refuses limit and duration for, whatever the seed.
func checkTraffic(limit algos.Limit, duration int64) error {
	if err := limit.Validate(); err != nil {
		return fmt.Errorf("scenarios: invalid limit: %w", err)
	}
	if duration <= 0 || duration > MaxDuration {
		return fmt.Errorf("scenarios: duration of %d µs is outside (0, one day]", duration)
	}
	if limit.Window > duration {
		return fmt.Errorf("scenarios: window %s is longer than the run (%s)", algos.FormatMicros(limit.Window), algos.FormatMicros(duration))
	}
	// A Poisson stream at 5·L per W needs a mean gap of at least a µs.
	if limit.Rate > limit.Window/5 {
		return fmt.Errorf("scenarios: a flood at 5× %v would send more than one request per µs", limit)
	}
	return nil
}

// trafficParts are the five clients' requests of Traffic, each sorted by
// time, in key order: merged by (time, key), ties in key order, they are
// Traffic. With sc, they are written in its memory, valid until sc is
// used again.
func trafficParts(seed uint64, limit algos.Limit, duration int64, sc *trafficScratch) ([][]model.Request, error) {
	if err := checkTraffic(limit, duration); err != nil {
		return nil, err
	}
	var parts [][]model.Request
	if sc == nil {
		sc = new(trafficScratch) // fresh memory, for the caller to keep
	} else {
		parts = sc.list[:0]
	}
	p := &sc.parts
	p[0] = flood(p[0][:0], Flood, newRand(seed, purposeFlood), limit, duration, duration, duration)
	p[1] = boundary(p[1][:0], newRand(seed, purposeBoundary), limit, duration)
	p[2] = flood(p[2][:0], OnOff, newRand(seed, purposeOnOff), limit, duration, 2*limit.Window, 5*limit.Window)
	p[3] = honest(p[3][:0], newRand(seed, purposeHonest), limit, duration)
	p[4] = firstHit(p[4][:0], newRand(seed, purposeFirstHit), limit, duration)
	return append(parts, p[:5]...), nil
}

// trafficScratch is the memory one seed's traffic is made in: each part's
// requests, and the merged ones. A hunt's worker makes a seed's traffic,
// plays every suspect on it and moves on, so that the next seed's is made
// in the same memory, warm in the worker's cache, instead of in fresh
// pages for every seed.
type trafficScratch struct {
	parts  [7][]model.Request // the five clients', then the edge prober's two
	list   [][]model.Request
	merged []model.Request
}

var trafficScratchPool = sync.Pool{New: func() any { return new(trafficScratch) }}

// mergeBySentThenKey returns the requests of parts, each sorted by (Sent,
// Key), as one slice sorted by (Sent, Key), equal ones in the order of
// parts and then of each part: what a stable sort of their concatenation
// by (Sent, Key) gives. A part out of order is sorted with the rest, as
// such a sort would.
//
// The result is appended to dst[:0], which a nil dst leaves to be made.
func mergeBySentThenKey(dst []model.Request, parts ...[]model.Request) []model.Request {
	n := 0
	sorted := true
	for _, p := range parts {
		n += len(p)
		sorted = sorted && slices.IsSortedFunc(p, cmpSentThenKey)
	}
	out := slices.Grow(dst[:0], n)
	if !sorted {
		for _, p := range parts {
			out = append(out, p...)
		}
		slices.SortStableFunc(out, cmpSentThenKey)
		return out
	}
	// Merged in pairs of neighbours, level by level, each pair in one tight
	// pass whose ties go to the left one: the earlier parts' requests stay
	// first among equals, and each request is copied once a level (three
	// levels for a hunt's seven parts), where picking the least of every
	// part's next request would compare it with all of them. A level is
	// written into the buffer its parts are not in, the last into out.
	level := parts
	bufs := mergeBufs.Get().(*[2][]model.Request)
	defer mergeBufs.Put(bufs)
	for b := 0; len(level) > 2; b ^= 1 {
		buf := slices.Grow(bufs[b][:0], n)
		var next [][]model.Request
		for k := 0; k < len(level); k += 2 {
			from := len(buf)
			if k+1 == len(level) {
				buf = append(buf, level[k]...) // the odd one, into this level's buffer too
			} else {
				buf = mergeTwo(buf, level[k], level[k+1])
			}
			next = append(next, buf[from:])
		}
		bufs[b], level = buf, next
	}
	if len(level) == 1 {
		return append(out, level[0]...)
	}
	return mergeTwo(out, level[0], level[1])
}

// mergeBufs are the buffers of mergeBySentThenKey's inner levels, kept
// from one merge to the next (a hunt merges a seed's traffic once).
var mergeBufs = sync.Pool{New: func() any { return new([2][]model.Request) }}

// mergeTwo appends a and b, each sorted by (Sent, Key), to dst as one run
// sorted by (Sent, Key), a's first among equals.
func mergeTwo(dst, a, b []model.Request) []model.Request {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if x, y := a[i], b[j]; y.Sent < x.Sent || (y.Sent == x.Sent && y.Key < x.Key) {
			dst = append(dst, y)
			j++
		} else {
			dst = append(dst, x)
			i++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

func cmpSentThenKey(a, b model.Request) int {
	if a.Sent != b.Sent {
		if a.Sent < b.Sent {
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
	// Room for the expected count and a margin, so that the stream is not
	// copied as it grows (a larger one grows as appends do).
	busy := min(on, period)
	dst = slices.Grow(dst, int(min(1<<20, float64(duration/period*busy+min(busy, duration%period))/mean*1.05+64)))

	for start := int64(0); start < duration; start += period {
		end := min(start+on, duration)
		for t := start + expGap(p, mean); t < end; t += expGap(p, mean) {
			dst = append(dst, model.Request{Key: int(c), Sent: t})
		}
	}
	return dst
}

// boundary appends L requests just before and L just after the edges W, 3W,
// 5W, ... that have room for the burst after them before duration.
func boundary(dst []model.Request, p *model.Stream, l algos.Limit, duration int64) []model.Request {
	slot := max(1, l.Window/100/l.Rate) // each request's own slot, in µs
	span := slot * l.Rate               // the length of one half-burst
	dst = slices.Grow(dst, roomFor(duration/(2*l.Window)+1, 2*l.Rate))
	for edge := l.Window; edge+span <= duration; edge += 2 * l.Window {
		if edge-span < 0 {
			continue
		}
		for half := range int64(2) {
			from := edge - span + half*span
			for j := range l.Rate {
				dst = append(dst, model.Request{Key: int(Boundary), Sent: from + j*slot + int64(p.Below(uint64(slot)))})
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
	dst = slices.Grow(dst, roomFor(duration/(3*l.Window)+1, 2*l.Rate))
	for start := l.Window / 2; start+l.Window+span <= duration; start += 3 * l.Window {
		dst = append(dst, model.Request{Key: int(FirstHit), Sent: start})
		edge := start + l.Window
		for j := int64(1); j < l.Rate; j++ { // L-1 before the edge, the first slot left empty
			dst = append(dst, model.Request{Key: int(FirstHit), Sent: edge - span + j*slot + int64(p.Below(uint64(slot)))})
		}
		for j := range l.Rate {
			dst = append(dst, model.Request{Key: int(FirstHit), Sent: edge + j*slot + int64(p.Below(uint64(slot)))})
		}
	}
	return dst
}

// honest appends evenly spaced requests at 90% of the limit: the j-th at
// phase + ⌊j·10·W/(9·L)⌋, with a seeded phase within the first gap.
func honest(dst []model.Request, p *model.Stream, l algos.Limit, duration int64) []model.Request {
	num, den := 10*l.Window, 9*l.Rate // the gap is num/den µs
	phase := int64(p.Below(uint64((num + den - 1) / den)))
	dst = slices.Grow(dst, roomFor(duration/max(1, num/den)+1, 1))
	for j := int64(0); ; j++ {
		hi, lo := bits.Mul64(uint64(j), uint64(num))
		if hi != 0 {
			break
		}
		t := phase + int64(lo/uint64(den))
		if t >= duration {
			break
		}
		dst = append(dst, model.Request{Key: int(Honest), Sent: t})
	}
	return dst
}
