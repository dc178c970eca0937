package algos

// Envelope is the judge's other half: where Check says whether a run's
// admits kept a promise, an Envelope follows the admits as they happen and
// says whether one more, at a given time, would still keep it. A refusal
// where it would is an honest request turned away, unless the limiter
// declared itself conservative (a sliding counter's estimate refuses what
// its aligned windows would allow).
//
// It belongs to the checker (checker.go's rule holds here: no arithmetic
// shared with the algorithms), and agrees with it: Allows(t) is true
// exactly when CheckAdmits of the admits so far and t finds nothing new.
// TestEnvelopeAgreesWithCheck holds it to that on seeded runs.
type Envelope struct {
	kind  promiseKind
	limit Limit

	last  int64 // the latest admit, for every kind
	count int64 // admits so far

	// bucket: the meter's level after the latest admit (checkBucket's).
	scale bucketScale
	level int64
	// aligned and anchored: the current window's start and its admits.
	start, inWindow int64
	// sliding: the latest L admits, oldest first (a ring).
	recent []int64
	head   int
}

// Envelope returns an empty envelope of p, and whether p has one: the four
// built-in promises do; a promise of a user's own (NewPromise) does not,
// since its check can only judge a whole run.
func (p Promise) Envelope() (*Envelope, bool) {
	switch p.kind {
	case bucketPromise, alignedWindowPromise, slidingWindowPromise, anchoredWindowPromise:
	default:
		return nil, false
	}
	if l := p.limit; l.Rate <= 0 || l.Window <= 0 || l.Burst <= 0 {
		return nil, false
	}
	e := &Envelope{kind: p.kind, limit: p.limit}
	if p.kind == bucketPromise {
		e.scale = newBucketScale(p.limit)
	}
	return e, true
}

// Allows reports whether an admit at t, after every admit so far, keeps the
// promise. t must not be before the latest admit.
func (e *Envelope) Allows(t int64) bool {
	l := e.limit
	switch e.kind {
	case bucketPromise:
		level := int64(0)
		if e.count > 0 {
			level = e.scale.afterGap(e.level, t-e.last)
		}
		return level+e.scale.perAdmit <= e.scale.capacity
	case alignedWindowPromise:
		if e.count == 0 || alignedWindowStart(t, l.Window) != e.start {
			return 1 <= l.Rate
		}
		return e.inWindow+1 <= l.Rate
	case anchoredWindowPromise:
		if e.count == 0 || t-e.start >= l.Window {
			return 1 <= l.Rate
		}
		return e.inWindow+1 <= l.Rate
	case slidingWindowPromise:
		// The L-th admit back must be at least W before t.
		if int64(len(e.recent)) < l.Rate {
			return true
		}
		return t-e.recent[e.head] >= l.Window
	}
	return false
}

// Admit records an admit at t (not before the latest). An admit the
// envelope did not allow is recorded too: the run goes on from what the
// limiter did, not from what it should have done.
func (e *Envelope) Admit(t int64) {
	l := e.limit
	switch e.kind {
	case bucketPromise:
		if e.count > 0 {
			e.level = e.scale.afterGap(e.level, t-e.last)
		}
		e.level += e.scale.perAdmit
	case alignedWindowPromise:
		if s := alignedWindowStart(t, l.Window); e.count == 0 || s != e.start {
			e.start, e.inWindow = s, 0
		}
		e.inWindow++
	case anchoredWindowPromise:
		if e.count == 0 || t-e.start >= l.Window {
			e.start, e.inWindow = t, 0
		}
		e.inWindow++
	case slidingWindowPromise:
		if int64(len(e.recent)) < l.Rate {
			e.recent = append(e.recent, t)
		} else {
			e.recent[e.head] = t
			e.head = (e.head + 1) % len(e.recent)
		}
	}
	e.last = t
	e.count++
}
