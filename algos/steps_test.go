package algos_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
)

// step is one call and the decision it must get, in the style of
// golang.org/x/time/rate's tests. Steps run in order on one key's state; a
// step's t may go backwards to play a node whose clock is behind.
type step struct {
	t          int64
	allowed    bool
	remaining  int64
	retryAfter int64
	reset      int64
}

// run plays the steps on a fresh key and reports every field that differs.
func run(t *testing.T, algo algos.Algorithm, l algos.Limit, steps []step) {
	t.Helper()
	var s algos.State
	for i, st := range steps {
		d := algo.Decide(&s, st.t, l)
		want := algos.Decision{Allowed: st.allowed, Remaining: st.remaining, RetryAfter: st.retryAfter, Reset: st.reset}
		if d != want {
			t.Errorf("step %d at t=%dµs: got %+v, want %+v", i, st.t, d, want)
		}
	}
}

const hour = 3600 * algos.Second

// lim2per10 is 2 per 10 µs with a burst of 2: one request is 5 µs of refill,
// small enough to work every step out by hand.
var lim2per10 = algos.MustLimit(2, 10, 2)

func TestTokenBucketSteps(t *testing.T) {
	run(t, algos.TokenBucket, lim2per10, []step{
		{t: 100, allowed: true, remaining: 1, reset: 5},
		{t: 100, allowed: true, remaining: 0, reset: 10}, // same µs
		{t: 100, retryAfter: 5, reset: 10},
		{t: 104, retryAfter: 1, reset: 6},
		{t: 105, allowed: true, remaining: 0, reset: 10}, // exactly at retry-after
		{t: 115, allowed: true, remaining: 1, reset: 5},  // exactly W later: full, not more
		{t: 115 + hour, allowed: true, remaining: 1, reset: 5},
	})
}

// The token bucket's weakness: a call from a node whose clock is behind
// moves last back, and the next call on a true clock is refilled for the
// same interval again.
func TestTokenBucketBehindRefillsTwice(t *testing.T) {
	run(t, algos.TokenBucket, lim2per10, []step{
		{t: 0, allowed: true, remaining: 1, reset: 5},
		{t: 0, allowed: true, remaining: 0, reset: 10},
		{t: 10, allowed: true, remaining: 1, reset: 5}, // refilled [0, 10]
		{t: 10, allowed: true, remaining: 0, reset: 10},
		{t: 10, retryAfter: 5, reset: 10},
		{t: 0, retryAfter: 5, reset: 10},               // behind by 10: last = 0 again
		{t: 10, allowed: true, remaining: 1, reset: 5}, // [0, 10] refilled a second time
		{t: 10, allowed: true, remaining: 0, reset: 10},
	})
}

// meterSteps are the leaky bucket's decisions at 2 per 10 µs on a true
// clock, and GCRA's: GCRA is the leaky bucket as a meter (its TAT is the
// time the bucket drains empty), so both must give these same steps.
var meterSteps = []step{
	{t: 100, allowed: true, remaining: 1, reset: 5},
	{t: 100, allowed: true, remaining: 0, reset: 10},
	{t: 100, retryAfter: 5, reset: 10},
	{t: 104, retryAfter: 1, reset: 6},
	{t: 105, allowed: true, remaining: 0, reset: 10},
	{t: 115, allowed: true, remaining: 1, reset: 5},
	{t: 115 + hour, allowed: true, remaining: 1, reset: 5},
}

// meterBehindSteps are the leaky bucket's decisions, and GCRA's (the same
// meter), when a node whose clock is behind calls between true-clock calls:
// it waits the gap too, and the true clock is not credited twice.
var meterBehindSteps = []step{
	{t: 0, allowed: true, remaining: 1, reset: 5},
	{t: 0, allowed: true, remaining: 0, reset: 10},
	{t: 10, allowed: true, remaining: 1, reset: 5},
	{t: 10, allowed: true, remaining: 0, reset: 10},
	{t: 0, retryAfter: 15, reset: 20}, // behind by 10: waits the gap too
	{t: 10, retryAfter: 5, reset: 10}, // no second drain of [0, 10]
	{t: 15, allowed: true, remaining: 0, reset: 10},
}

func TestLeakyBucketSteps(t *testing.T) {
	run(t, algos.LeakyBucket, lim2per10, meterSteps)
}

// A node behind cannot rewind the leaky bucket's last: its wait includes
// the gap, and the next true-clock call is not drained again.
func TestLeakyBucketBehindDoesNotRefillTwice(t *testing.T) {
	run(t, algos.LeakyBucket, lim2per10, meterBehindSteps)
	// Behind but with room: admitted, and last stays where it was.
	run(t, algos.LeakyBucket, lim2per10, []step{
		{t: 115, allowed: true, remaining: 1, reset: 5},
		{t: 110, allowed: true, remaining: 0, reset: 15},
		{t: 110, retryAfter: 10, reset: 15},
		{t: 115, retryAfter: 5, reset: 10},
		{t: 120, allowed: true, remaining: 0, reset: 10},
	})
}

func TestGCRASteps(t *testing.T) {
	run(t, algos.GCRA, lim2per10, meterSteps)
}

// GCRA with an emission interval of 10/3 µs: TAT carries a third of a µs,
// and every wait is rounded up to the first whole µs that is admitted.
func TestGCRAFractionalInterval(t *testing.T) {
	run(t, algos.GCRA, algos.MustLimit(3, 10, 3), []step{
		{t: 100, allowed: true, remaining: 2, reset: 4},  // TAT 103⅓
		{t: 100, allowed: true, remaining: 1, reset: 7},  // TAT 106⅔
		{t: 100, allowed: true, remaining: 0, reset: 10}, // TAT 110
		{t: 100, retryAfter: 4, reset: 10},               // TAT - tau = 103⅓
		{t: 103, retryAfter: 1, reset: 7},
		{t: 104, allowed: true, remaining: 0, reset: 10}, // TAT 113⅓
	})
}

// TAT only moves forward: a node behind is told to wait the gap, and the
// true clock is not refilled twice.
func TestGCRABehindDoesNotRefillTwice(t *testing.T) {
	run(t, algos.GCRA, lim2per10, meterBehindSteps)
}

func TestFixedWindowSteps(t *testing.T) {
	run(t, algos.FixedWindow, lim2per10, []step{
		{t: 5, allowed: true, remaining: 1, reset: 5},
		{t: 5, allowed: true, remaining: 0, reset: 5},
		{t: 9, retryAfter: 1, reset: 1},
		{t: 10, allowed: true, remaining: 1, reset: 10}, // window edge: a new count
		{t: 19, allowed: true, remaining: 0, reset: 1},
		{t: 19, retryAfter: 1, reset: 1},
		{t: 20, allowed: true, remaining: 1, reset: 10}, // 4 admits within 2 µs, 2 per window
		{t: 20 + hour + 3, allowed: true, remaining: 1, reset: 7},
	})
}

// The fixed window's weakness: a node behind at a window edge restarts the
// previous window, and the next true-clock call restarts the current one.
func TestFixedWindowBehindRestarts(t *testing.T) {
	run(t, algos.FixedWindow, lim2per10, []step{
		{t: 15, allowed: true, remaining: 1, reset: 5},
		{t: 15, allowed: true, remaining: 0, reset: 5},
		{t: 20, allowed: true, remaining: 1, reset: 10},
		{t: 19, allowed: true, remaining: 1, reset: 1},  // behind: [10, 20) counted again from 0
		{t: 20, allowed: true, remaining: 1, reset: 10}, // and [20, 30) too
	})
}

func TestSlidingLogSteps(t *testing.T) {
	run(t, algos.SlidingLog, lim2per10, []step{
		{t: 0, allowed: true, remaining: 1, reset: 10},
		{t: 0, allowed: true, remaining: 0, reset: 10},
		{t: 9, retryAfter: 1, reset: 1},
		{t: 10, allowed: true, remaining: 1, reset: 10}, // exactly W after both: they are out
		{t: 19, allowed: true, remaining: 0, reset: 10},
		{t: 19, retryAfter: 1, reset: 10},
		{t: 20, allowed: true, remaining: 0, reset: 10}, // 10 is out, 19 is in
		{t: 15, retryAfter: 14, reset: 15},              // behind: sees 19 and 20 as live
		{t: 20 + hour, allowed: true, remaining: 1, reset: 10},
	})
}

func TestSlidingCounterSteps(t *testing.T) {
	run(t, algos.SlidingCounter, lim2per10, []step{
		{t: 5, allowed: true, remaining: 1, reset: 15},
		{t: 5, allowed: true, remaining: 0, reset: 15},
		{t: 5, retryAfter: 6, reset: 15},  // at 11: 2·9/10 = 1.8 < 2
		{t: 10, retryAfter: 1, reset: 10}, // window edge: previous 2·10/10 = 2
		{t: 11, allowed: true, remaining: 0, reset: 19},
		{t: 15, retryAfter: 1, reset: 15}, // 2·5/10 + 1 = 2
		{t: 16, allowed: true, remaining: 0, reset: 14},
		{t: 30, allowed: true, remaining: 1, reset: 20}, // two windows on: nothing carried
		{t: 25, allowed: true, remaining: 1, reset: 15}, // behind across an edge: restarts [20, 30)
		{t: 25 + hour, allowed: true, remaining: 1, reset: 15},
	})
}

// TestFieldsDecideAsDecide holds each algorithm's FieldsFunc to its Decide
// (the six, the first-hit window, and the planted bugs, which register
// theirs: a hunt judges the bug the FieldsFunc makes, the properties the
// one Decide makes), call for call on two states fed the same seeded times
// (some behind the last, as a skewed node's), under limits whose unit is
// and is not a whole number of µs; and checks that a decision nobody
// registered has none.
func TestFieldsDecideAsDecide(t *testing.T) {
	limits := []algos.Limit{algos.MustLimit(100, algos.Second, 100), algos.MustLimit(7, algos.Second, 3)}
	for _, a := range append(append(algos.All(), algos.FirstHitWindow), planted.All()...) {
		f := a.Fields()
		if f == nil {
			t.Fatalf("%s has no FieldsFunc", a.Name)
		}
		for _, l := range limits {
			var s1, s2 algos.State
			now, x := int64(1_000_000), uint64(1)
			for i := range 20_000 {
				x = x*6364136223846793005 + 1442695040888963407
				now += int64(x>>33)%4000 - 500 // up to 0.5 ms behind the last
				d := a.Decide(&s1, now, l)
				allowed, remaining, retryAfter, reset := f(&s2, now, &l)
				got := algos.Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retryAfter, Reset: reset}
				if got != d {
					t.Fatalf("%s under %v, call %d at %d: Fields %+v, Decide %+v", a.Name, l, i, now, got, d)
				}
			}
		}
	}
	mine := algos.TokenBucket
	mine.Decide = func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		return algos.TokenBucket.Decide(s, now, l)
	}
	q, err := algos.QueueingGCRA(algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []algos.Algorithm{mine, q, {Name: "none"}} {
		if a.Fields() != nil {
			t.Errorf("%q has a FieldsFunc, want nil: it is not one of the package's own decisions", a.Name)
		}
	}
}

// decideRegistered is a decision of "another package" for
// TestRegisterFields: the token bucket's, through its Decide.
func decideRegistered(s *algos.State, now int64, l algos.Limit) algos.Decision {
	return algos.TokenBucket.Decide(s, now, l)
}

// A decision registered with its FieldsFunc is recognized by its code,
// whatever its algorithm is named, and once only; a closure's code is
// every closure's, so a Decide replaced by one is still decided by its
// Decide.
func TestRegisterFields(t *testing.T) {
	fields := algos.TokenBucket.Fields()
	algos.RegisterFields(decideRegistered, fields)
	a := algos.Algorithm{Name: "mine", Decide: decideRegistered}
	if got := a.Fields(); got == nil {
		t.Fatal("a registered decision has no FieldsFunc")
	}
	for _, again := range []func(){
		func() { algos.RegisterFields(decideRegistered, fields) },
		func() { algos.RegisterFields(algos.TokenBucket.Decide, fields) },
		func() { algos.RegisterFields(nil, fields) },
		func() { algos.RegisterFields(decideRegistered, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("RegisterFields of a registered decision, one of the package's own or nil did not panic")
				}
			}()
			again()
		}()
	}
	replaced := a
	replaced.Decide = func(s *algos.State, now int64, l algos.Limit) algos.Decision { return decideRegistered(s, now, l) }
	if replaced.Fields() != nil {
		t.Error("a Decide replaced by a closure has the registered FieldsFunc")
	}
}
