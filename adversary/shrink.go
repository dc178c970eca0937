package adversary

import (
	"slices"

	"github.com/overshoot-go/overshoot/record"
)

// shrink is the search's own shrink, after rapid's: deterministic passes
// over the attack, each change kept only while the attack stays within the
// bounds and its measure still satisfies keep. A pass drops requests one
// at a time (the latest first, or the earliest: greedy drops end in
// different places, and the caller may try both), shifts the whole attack
// to an earlier, rounder start, moves each group of requests sent at the
// same instant to a rounder time, and sends each request to a lower node
// (when the attacker picks nodes); the passes repeat until one changes
// nothing. It ends: a drop shortens the attack, a shift makes its start
// strictly rounder, a move makes a group strictly rounder (or merges it),
// a node only goes down, and each of these is bounded. Since the last pass
// dropped nothing, no single request can be removed from the result.
func (s *searcher) shrink(reqs []record.Request, keep func(score) bool, latestFirst bool) ([]record.Request, error) {
	cur := slices.Clone(reqs)
	try := func(cand []record.Request) (bool, error) {
		if !s.env.Valid(cand) {
			return false, nil
		}
		_, sc, err := s.run(cand)
		return err == nil && keep(sc), err
	}
	for changed := true; changed; {
		changed = false
		// accept makes cand the attack when it still does what it must.
		accept := func(cand []record.Request) (bool, error) {
			ok, err := try(cand)
			if ok {
				cur, changed = cand, true
			}
			return ok, err
		}
		drop := func(i int) (bool, error) { return accept(slices.Delete(slices.Clone(cur), i, i+1)) }
		if latestFirst {
			for i := len(cur) - 1; i >= 0 && len(cur) > 1; i-- {
				if _, err := drop(i); err != nil {
					return nil, err
				}
			}
		} else {
			for i := 0; i < len(cur) && len(cur) > 1; {
				ok, err := drop(i)
				if err != nil {
					return nil, err
				}
				if !ok {
					i++
				}
			}
		}

		for _, at := range rounder(cur[0].Sent) {
			if at > cur[0].Sent {
				continue // a shift only moves earlier
			}
			cand := slices.Clone(cur)
			for i := range cand {
				cand[i].Sent += at - cur[0].Sent
			}
			ok, err := accept(cand)
			if err != nil {
				return nil, err
			}
			if ok {
				break
			}
		}

		for from := 0; from < len(cur); {
			to := from + 1
			for to < len(cur) && cur[to].Sent == cur[from].Sent {
				to++
			}
			for _, at := range rounder(cur[from].Sent) {
				cand := slices.Clone(cur)
				for i := from; i < to; i++ {
					cand[i].Sent = at
				}
				ok, err := accept(cand)
				if err != nil {
					return nil, err
				}
				if ok {
					break
				}
			}
			from = to
		}

		if s.cfg.Pinned {
			for i := range cur {
				for n := 0; n < cur[i].Node; n++ {
					cand := slices.Clone(cur)
					cand[i].Node = n
					ok, err := accept(cand)
					if err != nil {
						return nil, err
					}
					if ok {
						break
					}
				}
			}
		}
	}
	return cur, nil
}

// rounder lists the times rounder than t, roundest first: t rounded down
// and up to each power of ten larger than the largest that divides t. A
// time is rounder than another when a larger power of ten divides it (0 is
// the roundest of all).
func rounder(t int64) []int64 {
	if t == 0 {
		return nil
	}
	var units []int64
	for u := int64(10); u <= t && u <= 1e15; u *= 10 {
		if t%u != 0 {
			units = append(units, u)
		}
	}
	var out []int64
	for i := len(units) - 1; i >= 0; i-- {
		u := units[i]
		if down := t / u * u; down > 0 {
			out = append(out, down, down+u)
		} else {
			out = append(out, u)
		}
	}
	return append([]int64{0}, out...)
}
