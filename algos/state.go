package algos

import "slices"

// State is one key's stored state. The zero State is an absent key, which is
// also what a wiped store holds. Ints are the algorithm's stored integers,
// in the order its script stores them; Log is the sliding log's admitted
// times, sorted, live from index Head (non-nil once set).
//
// Code that keeps, copies or ships a state (a store, a script's driver)
// moves Ints whole, in that order, and never interprets one. An
// algorithm reads and writes them through the view that names them, so
// that its arithmetic reads in its own words: the buckets through Bucket
// and SetBucket (BucketState), the GCRA through GCRA and SetGCRA
// (GCRAState), the aligned windows through Window and SetWindow
// (WindowState), the first-hit window through FirstHit and SetFirstHit
// (FirstHitState); a view's State method makes a fresh key that holds it
// (*s = BucketState{Level: capacity, Last: now}.State()). Each algorithm's
// "Stored:" line names its view. A limiter of one's own may use one of
// these views or Ints itself.
//
// The views are values of two or three integers, and their conversions
// are inlined: reading or writing a key through one costs what naming the
// integers directly does.
type State struct {
	Set  bool
	Ints [3]int64
	Log  []int64
	Head int
}

// Clone returns a State that shares no memory with s, as a value read over
// the network would.
func (s State) Clone() State {
	if s.Log != nil {
		s.Log = slices.Clone(s.Log[s.Head:])
		s.Head = 0
	}
	return s
}

// Stored lists the values the store holds for this key, in the order the
// Lua scripts return them, for comparing Go with Redis: the three Ints, or
// the sliding log's live times.
func (s State) Stored() []int64 {
	if !s.Set {
		return nil
	}
	if s.Log != nil {
		return slices.Clone(s.Log[s.Head:])
	}
	return []int64{s.Ints[0], s.Ints[1], s.Ints[2]}
}

// BucketState is what the token bucket and the leaky bucket store (Ints
// 0 and 1; the third is 0).
type BucketState struct {
	// Level is the bucket's content in scaled units (a request is l.Unit,
	// a µs of refill or drain is l.Refill): the tokens left in a token
	// bucket, the water in a leaky bucket.
	Level int64
	// Last is the µs the level is as of: the last refill, or drain.
	Last int64
}

// Bucket reads s as a bucket's state.
func (s *State) Bucket() BucketState { return BucketState{Level: s.Ints[0], Last: s.Ints[1]} }

// SetBucket writes b into s's integers, leaving the rest of s as it is: a
// decision's write-back to the key it read.
func (s *State) SetBucket(b BucketState) { s.Ints[0], s.Ints[1] = b.Level, b.Last }

// State is the key that holds b alone: set, its third integer 0, no log.
func (b BucketState) State() State { return State{Set: true, Ints: [3]int64{b.Level, b.Last, 0}} }

// GCRAState is what the GCRA stores (Ints 0 and 1; the third is 0): its
// theoretical arrival time, TAT + Frac/l.Refill µs. The emission interval
// W/L is rarely a whole number of µs, so the TAT is kept exactly, as a
// whole part and a fraction.
type GCRAState struct {
	// TAT is the theoretical arrival time's whole µs.
	TAT int64
	// Frac is the rest of it, in 1/l.Refill µs (0 ≤ Frac < l.Refill).
	Frac int64
}

// GCRA reads s as the GCRA's state.
func (s *State) GCRA() GCRAState { return GCRAState{TAT: s.Ints[0], Frac: s.Ints[1]} }

// SetGCRA writes g into s's integers, leaving the rest of s as it is: a
// decision's write-back to the key it read.
func (s *State) SetGCRA(g GCRAState) { s.Ints[0], s.Ints[1] = g.TAT, g.Frac }

// State is the key that holds g alone: set, its third integer 0, no log.
func (g GCRAState) State() State { return State{Set: true, Ints: [3]int64{g.TAT, g.Frac, 0}} }

// WindowState is what the aligned windows store, the fixed window and the
// sliding counter (Ints 0, 1 and 2).
type WindowState struct {
	// Index is the window counted in, ⌊t/W⌋ for its µs t.
	Index int64
	// Count is the admits counted in that window.
	Count int64
	// Prev is the admits counted in the window before it: the sliding
	// counter's, always 0 for the fixed window.
	Prev int64
}

// Window reads s as an aligned window's state.
func (s *State) Window() WindowState {
	return WindowState{Index: s.Ints[0], Count: s.Ints[1], Prev: s.Ints[2]}
}

// SetWindow writes w into s's integers, leaving the rest of s as it is: a
// decision's write-back to the key it read.
func (s *State) SetWindow(w WindowState) { s.Ints[0], s.Ints[1], s.Ints[2] = w.Index, w.Count, w.Prev }

// State is the key that holds w alone: set, no log.
func (w WindowState) State() State { return State{Set: true, Ints: [3]int64{w.Index, w.Count, w.Prev}} }

// FirstHitState is what the first-hit window stores (Ints 0 and 1; the
// third is 0).
type FirstHitState struct {
	// Start is the µs the window started at: its first hit.
	Start int64
	// Count is the admits counted in the window.
	Count int64
}

// FirstHit reads s as the first-hit window's state.
func (s *State) FirstHit() FirstHitState { return FirstHitState{Start: s.Ints[0], Count: s.Ints[1]} }

// SetFirstHit writes f into s's integers, leaving the rest of s as it is:
// a decision's write-back to the key it read.
func (s *State) SetFirstHit(f FirstHitState) { s.Ints[0], s.Ints[1] = f.Start, f.Count }

// State is the key that holds f alone: set, its third integer 0, no log.
func (f FirstHitState) State() State { return State{Set: true, Ints: [3]int64{f.Start, f.Count, 0}} }
