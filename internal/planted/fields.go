package planted

import "github.com/overshoot-go/overshoot/algos"

// The planted decisions are written as algos.FieldsFunc, each with a
// Decide made of it, and registered with algos (algos.RegisterFields), so
// that the simulator decides a planted bug as fast as the six: a hunt
// spends most of its time deciding, and a Decision returned through a
// call is stored and copied again in moves the processor cannot forward.

// decision is a planted decision being made: an algos.Decision without
// Delay (the planted decisions hold no request), whose four fields the
// compiler keeps in registers where it keeps a Decision's five in memory.
type decision struct {
	Allowed                      bool
	Remaining, RetryAfter, Reset int64
}

// fields is d as a FieldsFunc returns it.
func (d decision) fields() (bool, int64, int64, int64) {
	return d.Allowed, d.Remaining, d.RetryAfter, d.Reset
}

// decisionOf is the decision a FieldsFunc returned.
func decisionOf(allowed bool, remaining, retryAfter, reset int64) decision {
	return decision{Allowed: allowed, Remaining: remaining, RetryAfter: retryAfter, Reset: reset}
}

// decideBy is f's decision as a DecideFunc returns it.
func decideBy(f algos.FieldsFunc, s *algos.State, now int64, l *algos.Limit) algos.Decision {
	allowed, remaining, retryAfter, reset := f(s, now, l)
	return algos.Decision{Allowed: allowed, Remaining: remaining, RetryAfter: retryAfter, Reset: reset}
}

// gcraFields and tokenBucketFields are GCRA's and the token bucket's
// decisions as fields, for the planted bugs that change one of GCRA's
// answers and the planted limiters that keep token buckets.
var gcraFields, tokenBucketFields = algos.GCRA.Fields(), algos.TokenBucket.Fields()

// fieldsOf pairs each planted decision with the FieldsFunc it is made of.
var fieldsOf = []struct {
	decide algos.DecideFunc
	fields algos.FieldsFunc
}{
	{decidePlantedUncappedTokenBucket, plantedUncappedTokenBucket},
	{decidePlantedLeakyBucketRewinds, plantedLeakyBucketRewinds},
	{decidePlantedGCRAWideTolerance, plantedGCRAWideTolerance},
	{decidePlantedFixedWindowOffByOne, plantedFixedWindowOffByOne},
	{decidePlantedSlidingLogTrimsTooMuch, plantedSlidingLogTrimsTooMuch},
	{decidePlantedTokenBucketNegativeRefill, plantedTokenBucketNegativeRefill},
	{decidePlantedFixedWindowShifted, plantedFixedWindowShifted},
	{decidePlantedTokenBucketBurstOneShort, plantedTokenBucketBurstOneShort},
	{decidePlantedGCRARetryAfterFloored, plantedGCRARetryAfterFloored},
	{decidePlantedSlidingCounterWrongWeight, plantedSlidingCounterWrongWeight},
	{decidePlantedGCRAResetWholeSeconds, plantedGCRAResetWholeSeconds},
	{decidePlantedGCRAResetPlusTolerance, plantedGCRAResetPlusTolerance},
	{decidePlantedTokenBucketRemainingBeforeTake, plantedTokenBucketRemainingBeforeTake},
	{decidePlantedFixedWindowResetFromStart, plantedFixedWindowResetFromStart},
}

func init() {
	for _, f := range fieldsOf {
		algos.RegisterFields(f.decide, f.fields)
	}
}
