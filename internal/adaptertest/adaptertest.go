package adaptertest

import "github.com/overshoot-go/overshoot/algos"

// Expected is one call at Now on one key and the decision it must get. It is
// an alias of an unnamed struct, not a named type, so that the adapters'
// tables may list their steps unkeyed, {now, decision}, as they read best:
// vet's composites check asks for keys on named structs of other packages
// only.
type Expected = struct {
	Now  int64
	Want algos.Decision
}

// Admit is an admit leaving remaining, full again in reset µs.
func Admit(remaining, reset int64) algos.Decision {
	return algos.Decision{Allowed: true, Remaining: remaining, Reset: reset}
}

// Deny is a denial whose retry is retry µs away, full again in reset µs.
func Deny(retry, reset int64) algos.Decision {
	return algos.Decision{RetryAfter: retry, Reset: reset}
}

// Burst is n admits at now from an idle key, one every interval µs of the
// limit: the i-th leaves Remaining n-i and Reset i·interval (for a token
// bucket of n, the time to earn back the i spent; for GCRA, TAT moved to
// now + i·interval).
func Burst(now, n, interval int64) []Expected {
	var steps []Expected
	for i := int64(1); i <= n; i++ {
		steps = append(steps, Expected{now, Admit(n-i, i*interval)})
	}
	return steps
}

// Limits are the limits the adapters compare their libraries with their
// algos twins on: integer and fractional emission intervals (3/7 s), bursts
// of 1 and more, from a minute down to a millisecond. Each call makes a
// new slice, which a caller may extend.
func Limits() []algos.Limit {
	return []algos.Limit{
		algos.MustLimit(10, algos.Second, 20),
		algos.MustLimit(7, 3*algos.Second, 5),
		algos.MustLimit(1000, algos.Second, 1),
		algos.MustLimit(3, 1000, 4),
		algos.MustLimit(1, 60*algos.Second, 3),
	}
}
