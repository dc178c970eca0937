package traffic

import (
	"slices"
	"sync"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// Scratch is memory a seed's requests are made in, again for each seed:
// each client's part, and the merged requests. A hunt's worker makes a
// seed's requests, plays every suspect on them and moves on, so that the
// next seed's are made in the same memory, warm in the worker's cache,
// instead of in fresh pages for every seed. The zero Scratch is ready to
// use; it is for one goroutine at a time.
type Scratch struct {
	parts  [7][]record.Request // the five open-loop clients', then the edge prober's two
	list   [][]record.Request
	merged []record.Request
}

// Make returns one seed's requests of the open-loop clients (OpenLoop's)
// and, with edge, of the edge prober too (EdgeProbes'), merged once in
// time order, ties in key order (the edge prober's key is the last): the
// requests OpenLoop and EdgeProbes return, merged as each of them is. It
// refuses what CheckOpenLoop refuses. They are made in sc's memory, valid
// until sc makes the next ones; requests to keep need a Scratch each.
func (sc *Scratch) Make(seed uint64, limit algos.Limit, duration int64, edge bool) ([]record.Request, error) {
	parts, err := sc.openLoopParts(seed, limit, duration)
	if err != nil {
		return nil, err
	}
	if edge {
		e, err := edgeParts(seed, limit, duration, sc.parts[5], sc.parts[6])
		if err != nil {
			return nil, err
		}
		parts = append(parts, e...)
	}
	copy(sc.parts[:], parts) // keep what the parts grew to
	sc.list = parts
	sc.merged = mergeBySentThenKey(sc.merged, parts...)
	return sc.merged, nil
}

// mergeBySentThenKey returns the requests of parts, each sorted by (Sent,
// Key), as one slice sorted by (Sent, Key), equal ones in the order of
// parts and then of each part: what a stable sort of their concatenation
// by (Sent, Key) gives. A part out of order is sorted with the rest, as
// such a sort would.
//
// The result is appended to dst[:0], which a nil dst leaves to be made.
func mergeBySentThenKey(dst []record.Request, parts ...[]record.Request) []record.Request {
	n := 0
	sorted := true
	for _, p := range parts {
		n += len(p)
		sorted = sorted && slices.IsSortedFunc(p, cmpSentThenKey)
	}
	out := slices.Grow(dst[:0], n)
	if !sorted {
		for _, p := range parts {
			out = append(out, p...)
		}
		slices.SortStableFunc(out, cmpSentThenKey)
		return out
	}
	// Merged in pairs of neighbours, level by level, each pair in one tight
	// pass whose ties go to the left one: the earlier parts' requests stay
	// first among equals, and each request is copied once a level (three
	// levels for a hunt's seven parts), where picking the least of every
	// part's next request would compare it with all of them. A level is
	// written into the buffer its parts are not in, the last into out.
	level := parts
	bufs := mergeBufs.Get().(*[2][]record.Request)
	defer mergeBufs.Put(bufs)
	for b := 0; len(level) > 2; b ^= 1 {
		buf := slices.Grow(bufs[b][:0], n)
		var next [][]record.Request
		for k := 0; k < len(level); k += 2 {
			from := len(buf)
			if k+1 == len(level) {
				buf = append(buf, level[k]...) // the odd one, into this level's buffer too
			} else {
				buf = mergeTwo(buf, level[k], level[k+1])
			}
			next = append(next, buf[from:])
		}
		bufs[b], level = buf, next
	}
	if len(level) == 1 {
		return append(out, level[0]...)
	}
	return mergeTwo(out, level[0], level[1])
}

// mergeBufs are the buffers of mergeBySentThenKey's inner levels, kept
// from one merge to the next (a hunt merges a seed's traffic once).
var mergeBufs = sync.Pool{New: func() any { return new([2][]record.Request) }}

// mergeTwo appends a and b, each sorted by (Sent, Key), to dst as one run
// sorted by (Sent, Key), a's first among equals.
func mergeTwo(dst, a, b []record.Request) []record.Request {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if x, y := a[i], b[j]; y.Sent < x.Sent || (y.Sent == x.Sent && y.Key < x.Key) {
			dst = append(dst, y)
			j++
		} else {
			dst = append(dst, x)
			i++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

func cmpSentThenKey(a, b record.Request) int {
	if a.Sent != b.Sent {
		if a.Sent < b.Sent {
			return -1
		}
		return 1
	}
	return a.Key - b.Key
}
