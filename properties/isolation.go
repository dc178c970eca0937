package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// KeysIsolated claims that a key's answers depend on its own calls alone:
// a key's calls, decided on a fresh limiter alone and again on another
// fresh limiter among another key's calls, get the same answers. The keys
// are a family of three, i (0-7), i+1024 and i+65536: the key i among the
// calls of i+1024 or of i+65536 (drawn), then the third of them among the
// same calls. As numbers the three fall into one slot of a table indexed
// by a key's number (a fixed array of buckets, a hash reduced modulo a
// power of two). As names (limiter.KeyName, which a limiter that stores
// string keys is handed, as adapters/redislib does) all three fall in one
// Redis Cluster slot (CRC16 mod 16384) and i+1024 and i+65536, each over
// 256 bytes, share their first limiter.KeyNameShared bytes and differ in
// non-ASCII bytes only, so the second pair folds in a store that truncates
// keys or mangles non-ASCII bytes, which the first pair, whose key i is a
// short ASCII name, cannot show. The calls are merged in time order, so a
// store-clock limiter sees its store's clock move forward only.
func KeysIsolated(spec limiter.Spec, opts ...Option) func(*rapid.T) {
	c := configure(opts)
	return func(t *rapid.T) {
		l := c.limits.Draw(t, "limit")
		r := newRun(t, spec, l)
		key := rapid.IntRange(0, 7).Draw(t, "key")
		other := key + rapid.SampledFrom([]int{1024, 65536}).Draw(t, "other key above it by")
		mine := Arrivals(l).Draw(t, "arrivals")
		theirs := Arrivals(l).Draw(t, "other key's arrivals")
		if len(mine) == 0 || len(theirs) == 0 {
			return
		}
		// The other key's calls start within 3W of the first, so that they
		// overlap whatever the two lists drew as their start.
		shift := mine[0] + rapid.Int64Range(0, 3*l.Window).Draw(t, "other key starts after the first by") - theirs[0]
		amongOther(r, key, other, mine, theirs, shift)
		// The third of the family among the same calls: i+1024 and i+65536,
		// two long names sharing their first 256 bytes. A limiter that folds
		// numbers modulo 1024 fails this pair on exactly the cases it fails
		// the first on, and the first runs first: its counterexample stays
		// the first pair's, word for word.
		amongOther(r, key+1024+65536-(other-key), other, mine, theirs, shift)
	}
}

// amongOther fails the case when key's calls at mine answer otherwise on a
// fresh limiter alone than on another fresh limiter among other's calls at
// theirs moved by shift.
func amongOther(r run, key, other int, mine, theirs []int64, shift int64) {
	alone := r.replay(r.open(), key, mine, nil)
	lim := r.open()
	together := make([]call, 0, len(mine))
	j := 0
	for _, now := range mine {
		for ; j < len(theirs) && min(algos.MaxTime, theirs[j]+shift) < now; j++ {
			r.allow(lim, other, min(algos.MaxTime, theirs[j]+shift), nil)
		}
		together = append(together, call{now, r.allow(lim, key, now, together)})
		if k := len(together) - 1; together[k].d != alone[k].d {
			r.t.Fatalf("%s: key %d's call at %d answered %v alone, %v among key %d's %d calls before it%s",
				r.who(), key, now, alone[k], together[k], other, j, trace(together))
		}
	}
}
