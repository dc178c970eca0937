package traffic

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// ClientKind is one of the simulator's clients: the five open-loop ones
// (OpenLoop), the three closed-loop ones (LoopClients) and the edge prober
// (EdgeProbes). Its value is the key its requests use.
type ClientKind int

// The clients. With a limit of L per W:
const (
	// Flood sends a Poisson stream at 5·L per W from the start to the end.
	Flood ClientKind = iota
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
	// (RetryAfterClient, DrainIdleClient, ResetBurstClient; LoopClients),
	// which a run of package scenarios adds when its Options.Loop is set.
	RetryAfter
	DrainIdle
	ResetBurst
	// Edge probes the µs either side of every window edge and refill
	// instant (EdgeProbes); scenarios adds it when Options.Edge is set, as
	// in a hunt.
	Edge
	// NumClients is the number of clients, open and closed-loop (and of
	// keys in a run).
	NumClients = 9
)

// OpenLoopClients lists the five open-loop clients, those of OpenLoop, in
// key order.
func OpenLoopClients() []ClientKind { return []ClientKind{Flood, Boundary, OnOff, Honest, FirstHit} }

var clientNames = [NumClients]string{"flood", "boundary", "on-off", "honest", "first-hit", "retry-after", "drain-idle", "reset-burst", "edge"}

// String is the client's short name.
func (c ClientKind) String() string {
	if c >= 0 && c < NumClients {
		return clientNames[c]
	}
	return fmt.Sprintf("ClientKind(%d)", int(c))
}

// Attack is true for the clients that send more than the limit within
// some window: all but the honest one. "Over" is measured on them.
func (c ClientKind) Attack() bool { return c != Honest }

// MaxDuration is the longest run OpenLoop and EdgeProbes make requests
// for: one day.
const MaxDuration = 24 * 3600 * algos.Second

// OpenLoop returns the five open-loop clients' requests over [0, duration)
// for one seed, each client on the key equal to its ClientKind value, merged
// in time order (ties in client order). It depends on seed, limit and
// duration only, so every algorithm and every deployment sees exactly the
// same requests.
func OpenLoop(seed uint64, limit algos.Limit, duration int64) ([]record.Request, error) {
	return new(Scratch).Make(seed, limit, duration, false)
}

// CheckOpenLoop is what OpenLoop (and Scratch.Make, and EdgeProbes, whose
// checks are among these) refuses limit and duration for, whatever the
// seed: nil when they make requests for every seed.
func CheckOpenLoop(limit algos.Limit, duration int64) error {
	if err := limit.Validate(); err != nil {
		return fmt.Errorf("traffic: invalid limit: %w", err)
	}
	if duration <= 0 || duration > MaxDuration {
		return fmt.Errorf("traffic: duration of %d µs is outside (0, one day]", duration)
	}
	if limit.Window > duration {
		return fmt.Errorf("traffic: window %s is longer than the run (%s)", algos.FormatMicros(limit.Window), algos.FormatMicros(duration))
	}
	// A Poisson stream at 5·L per W needs a mean gap of at least a µs.
	if limit.Rate > limit.Window/5 {
		return fmt.Errorf("traffic: a flood at 5× %v would send more than one request per µs", limit)
	}
	return nil
}

// openLoopParts are the five open-loop clients' requests, each sorted by
// time, in key order, written in sc's parts: merged by (time, key), ties
// in key order, they are OpenLoop's. They are appended to sc.list[:0].
func (sc *Scratch) openLoopParts(seed uint64, limit algos.Limit, duration int64) ([][]record.Request, error) {
	if err := CheckOpenLoop(limit, duration); err != nil {
		return nil, err
	}
	p := &sc.parts
	p[0] = flood(p[0][:0], Flood, newRand(seed, purposeFlood), limit, duration, duration, duration)
	p[1] = boundary(p[1][:0], newRand(seed, purposeBoundary), limit, duration)
	p[2] = flood(p[2][:0], OnOff, newRand(seed, purposeOnOff), limit, duration, 2*limit.Window, 5*limit.Window)
	p[3] = honest(p[3][:0], newRand(seed, purposeHonest), limit, duration)
	p[4] = firstHit(p[4][:0], newRand(seed, purposeFirstHit), limit, duration)
	return append(sc.list[:0], p[:5]...), nil
}

// newRand is the stream for (seed, purpose), to draw from in place.
func newRand(seed, purpose uint64) *record.Stream { s := record.NewStream(seed, purpose); return &s }

// expGap draws an exponential gap of the given mean, rounded to the µs:
// -ln(U)·mean with U uniform in (0, 1], on 53 random bits (expUnit).
func expGap(p *record.Stream, mean float64) int64 { return int64(expUnit(p)*mean + 0.5) }

// flood appends a Poisson stream at 5·L per W on client's key, on during
// [k·period, k·period+on) for every k, until duration.
func flood(dst []record.Request, c ClientKind, p *record.Stream, l algos.Limit, duration, on, period int64) []record.Request {
	mean := float64(l.Window) / float64(5*l.Rate)
	// Room for the expected count and a margin, so that the stream is not
	// copied as it grows (a larger one grows as appends do).
	busy := min(on, period)
	dst = slices.Grow(dst, int(min(1<<20, float64(duration/period*busy+min(busy, duration%period))/mean*1.05+64)))

	for start := int64(0); start < duration; start += period {
		end := min(start+on, duration)
		for t := start + expGap(p, mean); t < end; t += expGap(p, mean) {
			dst = append(dst, record.Request{Key: int(c), Sent: t})
		}
	}
	return dst
}

// boundary appends L requests just before and L just after the edges W, 3W,
// 5W, ... that have room for the burst after them before duration.
func boundary(dst []record.Request, p *record.Stream, l algos.Limit, duration int64) []record.Request {
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
				dst = append(dst, record.Request{Key: int(Boundary), Sent: from + j*slot + int64(p.Below(uint64(slot)))})
			}
		}
	}
	return dst
}

// firstHit appends, every 3W from W/2, one request that starts a window on
// the idle key, then L-1 requests just before that window's end and L just
// after it, for every cycle whose last request is before duration.
func firstHit(dst []record.Request, p *record.Stream, l algos.Limit, duration int64) []record.Request {
	slot := max(1, l.Window/100/l.Rate) // each request's own slot, as the boundary client's
	span := slot * l.Rate
	dst = slices.Grow(dst, roomFor(duration/(3*l.Window)+1, 2*l.Rate))
	for start := l.Window / 2; start+l.Window+span <= duration; start += 3 * l.Window {
		dst = append(dst, record.Request{Key: int(FirstHit), Sent: start})
		edge := start + l.Window
		for j := int64(1); j < l.Rate; j++ { // L-1 before the edge, the first slot left empty
			dst = append(dst, record.Request{Key: int(FirstHit), Sent: edge - span + j*slot + int64(p.Below(uint64(slot)))})
		}
		for j := range l.Rate {
			dst = append(dst, record.Request{Key: int(FirstHit), Sent: edge + j*slot + int64(p.Below(uint64(slot)))})
		}
	}
	return dst
}

// honest appends evenly spaced requests at 90% of the limit: the j-th at
// phase + ⌊j·10·W/(9·L)⌋, with a seeded phase within the first gap.
func honest(dst []record.Request, p *record.Stream, l algos.Limit, duration int64) []record.Request {
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
		dst = append(dst, record.Request{Key: int(Honest), Sent: t})
	}
	return dst
}
