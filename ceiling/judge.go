package ceiling

import (
	"time"

	"github.com/overshoot-go/overshoot/algos"
)

// BucketRate is what one token bucket's decisions say of its rate, judged
// on the clock it decided by (JudgeBucket).
type BucketRate struct {
	// Admitted is the admits between the first and the last denial of
	// each stretch, Span the time those stretches cover (µs), and
	// Stretches how many there are.
	Admitted  int
	Span      int64
	Stretches int
	// Held bounds what the buckets held at the first denials of the
	// stretches less what they held at the last ones, in scaled tokens
	// (algos.Limit.Unit per request): the admits beyond the refill.
	HeldLo, HeldHi int64
	// Skipped is the time between denials too far apart to judge (µs):
	// time in which the drive let the bucket fill, so that it may have
	// lost refill through no fault of its own.
	Skipped int64
	// Decisions is every decision read, Denied the denials among them.
	Decisions, Denied int
}

// Add is b and o together: several buckets judged as one figure.
func (b BucketRate) Add(o BucketRate) BucketRate {
	return BucketRate{
		Admitted: b.Admitted + o.Admitted, Span: b.Span + o.Span, Stretches: b.Stretches + o.Stretches,
		HeldLo: b.HeldLo + o.HeldLo, HeldHi: b.HeldHi + o.HeldHi, Skipped: b.Skipped + o.Skipped,
		Decisions: b.Decisions + o.Decisions, Denied: b.Denied + o.Denied,
	}
}

// Bounds are the least and the most the rate the bucket refilled at can
// be, as a multiple of l's: the admits, less what it held beyond them
// (HeldLo to HeldHi), over l.Rate per l.Window for Span. For a correct
// bucket lo ≤ 1 ≤ hi, and hi - lo is about two µs of refill per stretch
// over Span. Both are 0 when nothing could be judged.
func (b BucketRate) Bounds(l algos.Limit) (lo, hi float64) {
	if b.Span <= 0 {
		return 0, 0
	}
	refilled := float64(b.Span) * float64(l.Refill)
	admitted := float64(b.Admitted) * float64(l.Unit)
	return (admitted - float64(b.HeldHi)) / refilled, (admitted - float64(b.HeldLo)) / refilled
}

// Judged is Span as a Duration.
func (b BucketRate) Judged() time.Duration { return time.Duration(b.Span) * time.Microsecond }

// JudgeBucket reads the rate of one token bucket deployed under l from its
// decisions, sorted by the time it decided them at (Log.Decisions,
// filtered to one bucket), reading each RetryAfter in l's arithmetic. A denial leaves the bucket less than one
// request's worth, and says how much less: its RetryAfter is the time to
// refill to one request, to the µs. Between two denials no further apart
// than the bucket takes to fill from there, it cannot overflow, so what it
// admitted between them is exactly what it refilled in that time plus
// what it held at the first, less what it held at the second. Consecutive
// such pairs make a stretch (what the bucket held at the denials between
// cancels). Denials further apart, where the drive sent too little for the
// bucket to stay empty (the machine stalled it), end a stretch, and the
// time between them is Skipped, not judged. So the figure is the
// limiter's own, on its own clock, whatever the machine did to the
// requests; a stalled machine only leaves less of the run judged.
func JudgeBucket(ds []Decided, l algos.Limit) BucketRate {
	fill := (l.Capacity() - l.Unit) / l.Refill // µs from one request's worth short to full
	// held bounds what a denial with RetryAfter ra leaves in the bucket:
	// ra = ⌈(Unit - held) / Refill⌉ µs.
	held := func(ra int64) (lo, hi int64) {
		if ra <= 0 || ra > (l.Unit+l.Refill-1)/l.Refill {
			return 0, l.Unit - 1 // says nothing we can use: less than one request
		}
		return max(0, l.Unit-ra*l.Refill), l.Unit - (ra-1)*l.Refill - 1
	}
	b := BucketRate{Decisions: len(ds)}
	var (
		last             Decided
		admits           int
		open             bool     // a stretch runs from start to last
		startLo, startHi int64    // what the bucket held at its first denial
		end              [2]int64 // and at its last so far
	)
	closeStretch := func() {
		if open {
			b.HeldLo += startLo - end[1]
			b.HeldHi += startHi - end[0]
		}
		open = false
	}
	for _, d := range ds {
		if d.Allowed {
			admits++
			continue
		}
		if b.Denied++; b.Denied > 1 {
			if gap := d.Told - last.Told; gap <= fill {
				if !open {
					startLo, startHi = held(last.RetryAfter)
					b.Stretches++
					open = true
				}
				end[0], end[1] = held(d.RetryAfter)
				b.Admitted += admits
				b.Span += gap
			} else {
				closeStretch()
				b.Skipped += gap
			}
		}
		last, admits = d, 0
	}
	closeStretch()
	return b
}

// WindowShortfall is one fixed window in which a limiter denied a request
// yet admitted fewer than its limit.
type WindowShortfall struct {
	Start    int64 // µs on the limiter's clock
	Admitted int
}

// JudgeWindows reads a fixed window limiter under l from its decisions,
// each at the time it was counted at. A window in which the limit was
// reached (it refused a request, or decided at least l.Rate) must have
// admitted at least l.Rate: a refusal means it had counted l.Rate admits.
// It returns how many windows reached the limit, and those of them that
// admitted fewer than l.Rate. A window the drive sent fewer than l.Rate,
// all admitted, says nothing either way.
func JudgeWindows(ds []Decided, l algos.Limit) (judged int, short []WindowShortfall) {
	type window struct {
		admits, decided int
		denied          bool
	}
	byStart := map[int64]*window{}
	var order []int64
	for _, d := range ds {
		start := algos.AlignedWindowStart(d.Told, l.Window)
		w, ok := byStart[start]
		if !ok {
			w = &window{}
			byStart[start] = w
			order = append(order, start)
		}
		w.decided++
		if d.Allowed {
			w.admits++
		} else {
			w.denied = true
		}
	}
	for _, start := range order {
		if w := byStart[start]; w.denied || int64(w.decided) >= l.Rate {
			judged++
			if int64(w.admits) < l.Rate {
				short = append(short, WindowShortfall{Start: start, Admitted: w.admits})
			}
		}
	}
	return judged, short
}
