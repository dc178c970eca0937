package properties

import (
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"pgregory.net/rapid"
)

// KeysIsolated claims that a key's answers depend on its own calls alone:
// a key's calls, decided on a fresh limiter alone and again on another
// fresh limiter among another key's calls, get the same answers. The other
// key is 1024 or 65536 above it, so the two fall into one slot of a table
// indexed by a key's number (a fixed array of buckets, a hash reduced
// modulo a power of two): the way a limiter folds keys into shared state.
// The calls are merged in time order, so a store-clock limiter sees its
// store's clock move forward only.
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
				t.Fatalf("%s: key %d's call at %d answered %v alone, %v among key %d's %d calls before it%s",
					r.who(), key, now, alone[k], together[k], other, j, trace(together))
			}
		}
	}
}
