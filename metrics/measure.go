package metrics

import (
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/record"
)

// second is one second in µs (algos.Second, restated so that this package
// imports only package record of the module).
const second int64 = 1_000_000

// MaxTime is the latest request time, and the longest window, in µs, that
// Measure accepts (2^61 µs, some 73,000 years): with both below it, no sum
// of a time and a window overflows.
const MaxTime int64 = 1 << 61

// StateSample is the size of the limiter's state, in cells (the integers or
// entries its store holds, over all keys), at one instant.
type StateSample struct {
	At    int64
	Cells int64
}

// Options says how to read the records of a run.
type Options struct {
	// Keys names the keys, in the order Run.Keys reports them: a record's
	// Key must be one of them, and every key named appears in Run.Keys,
	// including keys that sent nothing. When Keys is nil, the keys are the
	// records' own, in the order of each one's first record.
	Keys []string
	// Window is the length, in µs, of the aligned windows of the histogram
	// and the timeline: window i is [i·Window, (i+1)·Window), so a request
	// at t falls in window ⌊t/Window⌋. It must be positive and at most
	// MaxTime.
	Window int64
	// StateSamples, optional, are samples of the limiter's state size, in
	// any order; Run.State reports their peak.
	StateSamples []StateSample
}

// Run is what a run did to its traffic, in total; Keys breaks it down per
// key. Measure fills every field; nothing in it depends on anything but
// the records and the options.
type Run struct {
	// Requests = Accepted + Rejected + Errors. An error is a request the
	// limiter failed on: counted here, but neither accepted nor rejected,
	// so it is left out of every ratio, rate and maximum below.
	Requests, Accepted, Rejected, Errors int64
	// AcceptRatio is Accepted / (Accepted + Rejected), the share of the
	// decided requests that were admitted; NaN when nothing was decided.
	AcceptRatio float64
	// Start and End bound the run's span, [Start, End): from the start of
	// the aligned window holding the first request to the end of the one
	// holding the last. The span is a whole number of windows, never empty
	// unless the run is (then both are 0).
	Start, End int64
	// Window is Options.Window, in µs.
	Window int64
	// AcceptedPerSecond is Accepted per second of the span, the mean of
	// the timeline scaled to one second; 0 for an empty run.
	AcceptedPerSecond float64
	// MaxAccepted1s and MaxAccepted10s are the most requests admitted in
	// any interval [t, t+1s) and [t, t+10s), for every t, not only at
	// window boundaries: exact, by a sliding two-pointer over the admitted
	// times.
	MaxAccepted1s, MaxAccepted10s int64
	// TimeToFirstRejection is the µs from the first request to the first
	// rejection, or -1 when nothing was rejected.
	TimeToFirstRejection int64
	// KeysDecided is the number of keys with at least one decided
	// (accepted or rejected) request: the keys that have an accept ratio,
	// over which Jain, Gini and Worst are taken.
	KeysDecided int
	// Jain is Jain's fairness index over those keys' accept ratios x:
	// (Σx)² / (n·Σx²), from 1/n (one key got everything) to 1 (all
	// equal). When no key was decided, or every ratio is 0, every key was
	// treated alike and Jain is 1.
	Jain float64
	// Gini is the Gini coefficient over the same ratios, Σᵢ Σⱼ |xᵢ − xⱼ| /
	// (2n·Σx): 0 when all are equal, (n−1)/n when one key got everything
	// and the others nothing, always below 1. It is 0 when no key was
	// decided or every ratio is 0.
	Gini float64
	// Worst is the index of the worst-starved key, the one with the lowest
	// accept ratio (the lowest index among equals), or -1 when no key was
	// decided.
	Worst int
	// RetryAfter summarises the Retry-After of every rejection.
	RetryAfter Percentiles
	// Held is how many admitted requests were held before they were let
	// through (a Delay above 0 in their answer).
	Held int64
	// Wait summarises the Delay of every admitted request, the held and
	// the ones let through at once, when at least one was held: the
	// latency the limiter added to what it let through. When none was
	// held, N is 0 and so is every other field, as for a limiter that
	// never holds a request.
	Wait Percentiles
	// State is the peak of Options.StateSamples.
	State StatePeak
	// PerWindow counts the span's windows by how many requests each
	// admitted.
	PerWindow Histogram
	// Timeline lists the windows of the span that admitted anything, in
	// time order; every other window of the span admitted nothing. Series
	// turns it into points for a chart.
	Timeline []WindowCount
	// Keys holds one entry per name in Options.Keys, in key order.
	Keys []KeyStats
}

// KeyStats is what a run did to one key's traffic. Its fields mean what the
// Run fields of the same names mean, restricted to the key's requests; the
// rate and the histogram are over the run's span, so that the keys' rates
// add up to the run's and their histograms count the same windows.
type KeyStats struct {
	Key                           int
	Name                          string
	Requests                      int64
	Accepted, Rejected, Errors    int64
	AcceptRatio                   float64 // NaN when nothing was decided
	AcceptedPerSecond             float64
	MaxAccepted1s, MaxAccepted10s int64
	// TimeToFirstRejection is the µs from the key's first request to its
	// first rejection, or -1 when the key saw none.
	TimeToFirstRejection int64
	RetryAfter           Percentiles
	PerWindow            Histogram
}

// Percentiles are nearest-rank percentiles of a set of µs: Pp is the
// smallest value such that at least p% of the values are at or below it
// (the value of rank ⌈p·N/100⌉ in ascending order), so it is always one of
// the values. With N = 0 all are 0.
type Percentiles struct {
	N                  int64
	P50, P90, P99, Max int64
}

// StatePeak is the largest state sample: Cells at At, the earliest of equal
// peaks. Samples is how many samples there were; with none, Cells and At
// are 0.
type StatePeak struct {
	Samples int
	Cells   int64
	At      int64
}

// Histogram counts windows by how many requests each admitted.
type Histogram struct {
	// Windows is the number of windows counted: all those of the span,
	// the empty ones included.
	Windows int64
	// Max is the most admitted in one window.
	Max int64
	// Bins holds, in ascending order of Accepted, each count that occurs
	// and how many windows admitted exactly that many; their Windows add
	// up to Windows.
	Bins []Bin
}

// Bin is one bar of a Histogram: Windows windows admitted Accepted each.
type Bin struct {
	Accepted, Windows int64
}

// WindowCount is one aligned window, [Start, Start+Run.Window), and how many
// requests it admitted.
type WindowCount struct {
	Start    int64
	Accepted int64
}

// Measure computes what a run did to its traffic from the record of each of
// its requests (package record), read one at a time, so that a run too
// large to hold as records can be measured from a sequence that makes each
// one as it is asked for (slices.Values(records) measures a slice).
//
// How a record is read:
//
//   - its time is Decided when its producer saw the decision
//     (record.SeenDecided: the simulator, capacity), and Sent otherwise (a
//     live client's records, which live.Drive returns in Sent order): the
//     time the request was offered, which every producer knows, while the
//     decision lay somewhere in [Sent, Answered];
//   - its Key is a name of Options.Keys (or, with none, a key of its own);
//   - a record with an Err is an error, neither admitted nor rejected,
//     whatever its answer says; otherwise Allowed says which it was;
//   - a rejection's Retry-After is read when the answer stated it
//     (record.FieldRetryAfter), a negative one as 0 (retry at once); an
//     admit's Delay is how long a queueing limiter held it.
//
// The records must be in time order, at times in [0, MaxTime], and an
// admit's Delay must not be negative, nor a state sample's Cells; Options
// must name each key once. Anything else is reported as an error naming
// the record (counted from 0), never a panic. No records (a nil sequence
// too) is a valid, empty run.
func Measure(records iter.Seq[record.Record], opts Options) (Run, error) {
	if err := validate(opts); err != nil {
		return Run{}, err
	}
	w := opts.Window
	r := Run{Window: w, TimeToFirstRejection: -1, Worst: -1, Keys: make([]KeyStats, 0, len(opts.Keys))}
	index := make(map[string]int, len(opts.Keys))
	for _, name := range opts.Keys {
		index[name] = len(r.Keys)
		r.Keys = append(r.Keys, KeyStats{Key: len(r.Keys), Name: name, TimeToFirstRejection: -1})
	}
	var firstAt []int64 // each key's first request
	var admitted, retries []int64
	// The admits' delays: the held ones, and how many were let through at
	// once (a count, not a slice of zeros: most runs hold nothing).
	var held []int64
	var atOnce int64
	var keyAdmitted, keyRetries [][]int64
	grow := func() {
		for len(firstAt) < len(r.Keys) {
			firstAt = append(firstAt, 0)
			keyAdmitted = append(keyAdmitted, nil)
			keyRetries = append(keyRetries, nil)
		}
	}
	grow()
	var first, last int64 // the first and the last record's time
	var err error
	n := 0
	if records == nil {
		records = func(func(record.Record) bool) {} // none: an empty run
	}
	for rec := range records {
		at := rec.Sent
		if rec.Seen.Has(record.SeenDecided) {
			at = rec.Decided
		}
		k, named := index[rec.Key]
		switch {
		case at < 0 || at > MaxTime:
			err = fmt.Errorf("metrics: record %d is at %d µs, outside [0, MaxTime]", n, at)
		case n > 0 && at < last:
			err = fmt.Errorf("metrics: records are not in time order: record %d at %d µs comes after one at %d µs", n, at, last)
		case !named && opts.Keys != nil:
			err = fmt.Errorf("metrics: record %d has key %q, which Options.Keys does not name", n, rec.Key)
		case rec.Err == nil && rec.Allowed && rec.Delay < 0:
			err = fmt.Errorf("metrics: record %d is an admit held a negative %d µs", n, rec.Delay)
		}
		if err != nil {
			break
		}
		if !named {
			k = len(r.Keys)
			index[rec.Key] = k
			r.Keys = append(r.Keys, KeyStats{Key: k, Name: rec.Key, TimeToFirstRejection: -1})
			grow()
		}
		if n == 0 {
			first = at
		}
		last = at
		n++
		ks := &r.Keys[k]
		if ks.Requests == 0 {
			firstAt[k] = at
		}
		r.Requests++
		ks.Requests++
		switch {
		case rec.Err != nil:
			r.Errors++
			ks.Errors++
		case rec.Allowed:
			r.Accepted++
			ks.Accepted++
			admitted = append(admitted, at)
			keyAdmitted[k] = append(keyAdmitted[k], at)
			if rec.Delay > 0 {
				r.Held++
				held = append(held, rec.Delay)
			} else {
				atOnce++
			}
		default:
			r.Rejected++
			ks.Rejected++
			if r.TimeToFirstRejection < 0 {
				r.TimeToFirstRejection = at - first
			}
			if ks.TimeToFirstRejection < 0 {
				ks.TimeToFirstRejection = at - firstAt[k]
			}
			if rec.Known.Has(record.FieldRetryAfter) {
				retry := max(rec.RetryAfter, 0)
				retries = append(retries, retry)
				keyRetries[k] = append(keyRetries[k], retry)
			}
		}
	}
	if err != nil {
		return Run{}, err
	}
	if n > 0 {
		r.Start = first / w * w
		r.End = (last/w + 1) * w
	}
	windows := (r.End - r.Start) / w

	r.AcceptRatio = ratio(r.Accepted, r.Rejected)
	r.AcceptedPerSecond = perSecond(r.Accepted, r.End-r.Start)
	r.MaxAccepted1s = maxInAny(admitted, second)
	r.MaxAccepted10s = maxInAny(admitted, 10*second)
	r.RetryAfter = percentiles(retries, 0)
	if r.Held > 0 {
		r.Wait = percentiles(held, atOnce)
	}
	r.PerWindow, r.Timeline = histogram(admitted, w, windows)

	var ratios []float64
	for k := range r.Keys {
		ks := &r.Keys[k]
		ks.AcceptRatio = ratio(ks.Accepted, ks.Rejected)
		ks.AcceptedPerSecond = perSecond(ks.Accepted, r.End-r.Start)
		ks.MaxAccepted1s = maxInAny(keyAdmitted[k], second)
		ks.MaxAccepted10s = maxInAny(keyAdmitted[k], 10*second)
		ks.RetryAfter = percentiles(keyRetries[k], 0)
		ks.PerWindow, _ = histogram(keyAdmitted[k], w, windows)
		if ks.Accepted+ks.Rejected > 0 {
			ratios = append(ratios, ks.AcceptRatio)
			if r.Worst < 0 || ks.AcceptRatio < r.Keys[r.Worst].AcceptRatio {
				r.Worst = k
			}
		}
	}
	r.KeysDecided = len(ratios)
	r.Jain = jain(ratios)
	r.Gini = gini(ratios)
	r.State = statePeak(opts.StateSamples)
	return r, nil
}

// validate reports the first thing wrong with opts.
func validate(opts Options) error {
	if opts.Window <= 0 || opts.Window > MaxTime {
		return fmt.Errorf("metrics: the window must be a positive number of µs up to MaxTime, got %d", opts.Window)
	}
	seen := make(map[string]bool, len(opts.Keys))
	for _, name := range opts.Keys {
		if seen[name] {
			return fmt.Errorf("metrics: Options.Keys names key %q twice", name)
		}
		seen[name] = true
	}
	for i, s := range opts.StateSamples {
		if s.Cells < 0 {
			return fmt.Errorf("metrics: state sample %d has %d cells; a state has none or more", i, s.Cells)
		}
	}
	return nil
}

// ratio is accepted/(accepted+rejected), NaN when nothing was decided: a
// key that sent nothing has no accept ratio rather than a ratio of 0.
func ratio(accepted, rejected int64) float64 {
	if accepted+rejected == 0 {
		return math.NaN()
	}
	return float64(accepted) / float64(accepted+rejected)
}

// perSecond is n per second of a span of µs, 0 for an empty span.
func perSecond(n, span int64) float64 {
	if span <= 0 {
		return 0
	}
	return float64(n) * float64(second) / float64(span)
}

// maxInAny is the most of the ascending times in any interval [t, t+length),
// over every t. The best interval can be taken to start at one of the times,
// so a two-pointer finds it: for each time as the last one in, the first one
// in is the earliest less than length before it.
func maxInAny(times []int64, length int64) int64 {
	best, first := 0, 0
	for i, t := range times {
		for t-times[first] >= length {
			first++
		}
		best = max(best, i-first+1)
	}
	return int64(best)
}

// histogram counts the windows of the span by how many of the ascending
// admitted times each holds, and lists the windows that hold any. The empty
// windows are the span's others, so they are counted, not walked: a long
// span of short windows costs nothing.
func histogram(times []int64, window, windows int64) (Histogram, []WindowCount) {
	var timeline []WindowCount
	for _, t := range times {
		start := t / window * window
		if n := len(timeline); n > 0 && timeline[n-1].Start == start {
			timeline[n-1].Accepted++
		} else {
			timeline = append(timeline, WindowCount{Start: start, Accepted: 1})
		}
	}
	counts := make([]int64, len(timeline))
	for i, wc := range timeline {
		counts[i] = wc.Accepted
	}
	slices.Sort(counts)
	h := Histogram{Windows: windows}
	if empty := windows - int64(len(counts)); empty > 0 {
		h.Bins = append(h.Bins, Bin{Accepted: 0, Windows: empty})
	}
	for _, c := range counts {
		if n := len(h.Bins); n > 0 && h.Bins[n-1].Accepted == c {
			h.Bins[n-1].Windows++
		} else {
			h.Bins = append(h.Bins, Bin{Accepted: c, Windows: 1})
		}
		h.Max = c
	}
	return h, timeline
}

// percentiles sorts xs (each ≥ 0) in place and reads the nearest-rank
// percentiles of xs and zeros more values of 0, which come first in
// ascending order.
func percentiles(xs []int64, zeros int64) Percentiles {
	n := int64(len(xs)) + zeros
	if n == 0 {
		return Percentiles{}
	}
	slices.Sort(xs)
	rank := func(p int64) int64 { // the value of rank ⌈p·n/100⌉, 1-based
		if k := (p*n + 99) / 100; k > zeros {
			return xs[k-zeros-1]
		}
		return 0
	}
	return Percentiles{N: n, P50: rank(50), P90: rank(90), P99: rank(99), Max: rank(100)}
}

// jain is Jain's fairness index of xs (each ≥ 0). Equal values, zero
// included, are exactly 1 rather than whatever rounding makes of (nx)²/(n·nx²),
// and the result is kept in [1/n, 1] for the same reason.
func jain(xs []float64) float64 {
	n := float64(len(xs))
	if len(xs) == 0 || allEqual(xs) {
		return 1
	}
	var sum, squares float64
	for _, x := range xs {
		sum += x
		squares += x * x
	}
	return min(1, max(1/n, sum*sum/(n*squares)))
}

// gini is the Gini coefficient of xs (each ≥ 0), computed from the gaps
// between sorted neighbours: the gap between the m-th and (m+1)-th smallest
// lies between m·(n−m) pairs, so Σ_{i<j} (x₍ⱼ₎ − x₍ᵢ₎) = Σ gapₘ·m·(n−m). Every
// term is ≥ 0 and equal values give gaps of exactly 0, so the coefficient
// is never negative and exactly 0 when all are equal.
func gini(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	n := len(sorted)
	var sum, pairs float64
	for m, x := range sorted {
		sum += x
		if m > 0 {
			pairs += (x - sorted[m-1]) * float64(m) * float64(n-m)
		}
	}
	if sum == 0 {
		return 0
	}
	return pairs / (float64(n) * sum)
}

func allEqual(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// statePeak is the largest sample, the earliest of equal ones.
func statePeak(samples []StateSample) StatePeak {
	p := StatePeak{Samples: len(samples)}
	for i, s := range samples {
		if i == 0 || s.Cells > p.Cells || s.Cells == p.Cells && s.At < p.At {
			p.Cells, p.At = s.Cells, s.At
		}
	}
	return p
}
