package planted

import "github.com/overshoot-go/overshoot/algos"

// The planted Resets: three of the algorithms with their admits untouched
// and only the Reset they answer wrong, for the tests of the judge of
// records (package judge) and of live's drives to catch by the Reset rules
// alone. They are not in All, the hunt's list.

// withReset is a, named name, its Reset rewritten by reset from the
// decision and the limit: a planted bug in the Reset alone, the admits
// a's.
func withReset(a algos.Algorithm, name string, reset func(d algos.Decision, l algos.Limit) int64) algos.Algorithm {
	decide := a.Decide
	a.Name, a.Decide = name, func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		d := decide(s, now, l)
		d.Reset = reset(d, l)
		return d
	}
	return a
}

var (
	// ResetInMillis answers its Reset in milliseconds where µs are
	// read: a thousandth of the wait, shorter than its own Retry-After, and
	// a key asked then is not idle.
	ResetInMillis = withReset(algos.TokenBucket, "planted-token-bucket-reset-in-ms", func(d algos.Decision, _ algos.Limit) int64 { return d.Reset / 1000 })
	// ResetHalf names half the wait to idle: asked then, the bucket
	// is half empty.
	ResetHalf = withReset(algos.LeakyBucket, "planted-leaky-bucket-half-reset", func(d algos.Decision, _ algos.Limit) int64 { return d.Reset / 2 })
	// ResetNextButOneEdge is the window anchored at the key's first hit
	// naming the edge after its window's end.
	ResetNextButOneEdge = withReset(algos.FirstHitWindow, "planted-first-hit-window-next-but-one-edge", func(d algos.Decision, l algos.Limit) int64 { return d.Reset + l.Window })
)
