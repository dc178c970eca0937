package model

// minHeap is a binary min-heap of T, ordered by T's before, written out
// for the two operations the runner needs: container/heap's Push and Pop
// box every element in an interface, an allocation each, on the
// simulator's hottest path. The store's events and the closed-loop
// clients' pending sends are such heaps; each orders its elements totally,
// so what comes out does not depend on how the heap is laid out.
type minHeap[T interface{ before(T) bool }] []T

func (h *minHeap[T]) push(x T) {
	*h = append(*h, x)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].before(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *minHeap[T]) pop() T {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].before(s[l]) {
			m = r
		}
		if !s[m].before(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
