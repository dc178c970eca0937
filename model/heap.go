package model

// The runner's two binary min-heaps, the store's events (eventHeap) and
// the closed-loop clients' pending sends (sendHeap), written out for the
// two operations it needs. container/heap's Push and Pop box every element
// in an interface, an allocation each, and a heap generic in its element
// calls the element's order through a dictionary, an indirect call per
// comparison, on the simulator's hottest path for closed-loop clients.
// Each orders its elements totally, so what comes out does not depend on
// how the heap is laid out.

// eventHeap is a binary min-heap of events by (t, ord).
type eventHeap []event

func (h *eventHeap) push(x event) {
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

func (h *eventHeap) pop() event {
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

// sendHeap is the pending sends, a binary min-heap by (time, client).
// Each client has at most one pending send, so (time, client) orders them
// totally.
type sendHeap []pendingSend

func (h *sendHeap) push(x pendingSend) {
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

func (h *sendHeap) pop() pendingSend {
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
