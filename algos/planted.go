package algos

// PLANTED BUGS. Each variable below is a copy of one of the six decisions
// with exactly one line changed, the way a real author gets it wrong. They
// exist so that the properties and the simulator can show they catch such a
// bug; none of them is in All(), ByName or Names, and every name starts with
// "planted-". Never use them to limit anything.

// PlantedUncappedTokenBucket is the token bucket without the cap.
//
// PLANTED BUG: the refill line is `tokens := s.A + max(0, now-s.B)*l.Refill`
// instead of `tokens := refill(s.A, now-s.B, l)`. An author writes it because
// under steady traffic the bucket never fills, so the cap looks redundant;
// after an idle spell the bucket holds more than Burst and a whole idle
// period's worth of requests is admitted at once.
var PlantedUncappedTokenBucket = Algorithm{
	Name:       "planted-uncapped-token-bucket",
	Decide:     decidePlantedUncappedTokenBucket,
	Promise:    BucketPromise,
	StateDoc:   "tokens (scaled integer), last refill time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedUncappedTokenBucket(s *State, now int64, l Limit) Decision {
	capacity := l.Capacity()
	if !s.Set {
		*s = State{Set: true, A: capacity, B: now}
	}
	tokens := s.A + max(0, now-s.B)*l.Refill // PLANTED: no cap at capacity
	s.B = now
	d := Decision{}
	if tokens >= l.Unit {
		tokens -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = ceilDiv(l.Unit-tokens, l.Refill)
	}
	s.A = tokens
	d.Remaining = tokens / l.Unit
	d.Reset = ceilDiv(capacity-tokens, l.Refill)
	return d
}

// PlantedLeakyBucketRewinds is the leaky bucket storing last = now.
//
// PLANTED BUG: `s.B = now` instead of `s.B = max(s.B, now)`. An author copies
// the line from the token bucket. On a true clock nothing changes; a node
// whose clock is behind moves last back and the next node drains the same
// interval twice. Mirrored, this is decision for decision the token bucket,
// so only the leaky bucket's own claim (no double refill) tells them apart.
var PlantedLeakyBucketRewinds = Algorithm{
	Name:       "planted-leaky-bucket-rewinds",
	Decide:     decidePlantedLeakyBucketRewinds,
	Promise:    BucketPromise,
	StateDoc:   "level (scaled integer), last drain time",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedLeakyBucketRewinds(s *State, now int64, l Limit) Decision {
	capacity := l.Capacity()
	if !s.Set {
		*s = State{Set: true, A: 0, B: now}
	}
	level := drain(s.A, now-s.B, l)
	s.B = now // PLANTED: was max(s.B, now)
	behind := s.B - now
	d := Decision{}
	if level+l.Unit <= capacity {
		level += l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = behind + ceilDiv(level+l.Unit-capacity, l.Refill)
	}
	s.A = level
	d.Remaining = (capacity - level) / l.Unit
	d.Reset = behind + ceilDiv(level, l.Refill)
	return d
}

// PlantedGCRAWideTolerance is GCRA with a tolerance one interval too wide.
//
// PLANTED BUG: `tauTicks := l.Burst * l.Unit` instead of
// `(l.Burst - 1) * l.Unit`. "Burst times the emission interval" reads like
// the definition of tau; it admits Burst+1 at one instant.
var PlantedGCRAWideTolerance = Algorithm{
	Name:       "planted-gcra-wide-tolerance",
	Decide:     decidePlantedGCRAWideTolerance,
	Promise:    BucketPromise,
	StateDoc:   "theoretical arrival time (µs and a remainder)",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedGCRAWideTolerance(s *State, now int64, l Limit) Decision {
	if !s.Set {
		*s = State{Set: true, A: now, B: 0}
	}
	r := l.Refill
	tauTicks := l.Burst * l.Unit // PLANTED: was (l.Burst - 1) * l.Unit
	allowAt := s.A - tauTicks/r
	if s.B > tauTicks%r {
		allowAt++
	}
	d := Decision{}
	if now < allowAt {
		d.RetryAfter = allowAt - now
		d.Reset = gcraReset(s, now)
		return d
	}
	d.Allowed = true
	if s.A < now {
		s.A, s.B = now, 0
	}
	s.B += l.Unit % r
	s.A += l.Unit/r + s.B/r
	s.B %= r
	ahead := (s.A-now)*r + s.B
	d.Remaining = max(0, (l.Burst*l.Unit-ahead)/l.Unit)
	d.Reset = gcraReset(s, now)
	return d
}

// PlantedFixedWindowOffByOne is the fixed window admitting L+1 per window.
//
// PLANTED BUG: `if s.B <= l.Rate` instead of `if s.B < l.Rate`. The author
// thinks of the count after the increment ("allow while count <= limit")
// but compares the count before it.
var PlantedFixedWindowOffByOne = Algorithm{
	Name:       "planted-fixed-window-off-by-one",
	Decide:     decidePlantedFixedWindowOffByOne,
	Promise:    AlignedWindowPromise,
	StateDoc:   "window index, count",
	StateInts:  two,
	ExactRetry: true,
}

func decidePlantedFixedWindowOffByOne(s *State, now int64, l Limit) Decision {
	idx := floorDiv(now, l.Window)
	if !s.Set || s.A != idx {
		*s = State{Set: true, A: idx, B: 0}
	}
	end := (idx+1)*l.Window - now
	d := Decision{Reset: end}
	if s.B <= l.Rate { // PLANTED: was s.B < l.Rate
		s.B++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	d.Remaining = l.Rate - s.B
	return d
}

// PlantedSlidingLogTrimsTooMuch is the sliding log dropping times 1 µs early.
//
// PLANTED BUG: it drops entries `<= now-l.Window+1` instead of
// `<= now-l.Window`. ZREMRANGEBYSCORE's bounds are inclusive, and the author
// "corrects" for that in the wrong direction; two admits W-1 µs apart then
// no longer share a window.
var PlantedSlidingLogTrimsTooMuch = Algorithm{
	Name:       "planted-sliding-log-trims-too-much",
	Decide:     decidePlantedSlidingLogTrimsTooMuch,
	Promise:    SlidingWindowPromise,
	StateDoc:   "every admitted time within the window",
	StateInts:  func(l Limit) int64 { return l.Rate },
	ExactRetry: true,
}

func decidePlantedSlidingLogTrimsTooMuch(s *State, now int64, l Limit) Decision {
	if !s.Set || s.Log == nil {
		*s = State{Set: true, Log: make([]int64, 0, 16)}
	}
	for s.Head < len(s.Log) && s.Log[s.Head] <= now-l.Window+1 { // PLANTED: was now-l.Window
		s.Head++
	}
	if s.Head == len(s.Log) {
		s.Log, s.Head = s.Log[:0], 0
	}
	live := int64(len(s.Log) - s.Head)
	d := Decision{}
	if live < l.Rate {
		insertSorted(s, now)
		live++
		d.Allowed = true
	} else {
		d.RetryAfter = s.Log[len(s.Log)-int(l.Rate)] + l.Window - now
	}
	d.Remaining = max(0, l.Rate-live)
	if live > 0 {
		d.Reset = max(0, s.Log[len(s.Log)-1]+l.Window-now)
	}
	return d
}
