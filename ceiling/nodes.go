package ceiling

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
)

// Nodes is N HTTP servers listening on 127.0.0.1.
type Nodes struct {
	servers []*httptest.Server
}

// Start serves node(i)'s handler on server i, for i in [0, n). If any
// node's handler cannot be made, the servers already started are closed.
func Start(n int, node func(i int) (http.Handler, error)) (*Nodes, error) {
	if n <= 0 {
		return nil, fmt.Errorf("ceiling: Start needs at least one node, got %d", n)
	}
	if node == nil {
		return nil, errors.New("ceiling: no handler for the nodes")
	}
	f := &Nodes{}
	for i := range n {
		h, err := node(i)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("ceiling: node %d: %w", i, err)
		}
		f.servers = append(f.servers, httptest.NewServer(h))
	}
	return f, nil
}

// URLs are the nodes' base URLs, in node order.
func (f *Nodes) URLs() []string {
	urls := make([]string, len(f.servers))
	for i, s := range f.servers {
		urls[i] = s.URL
	}
	return urls
}

// Close stops every node.
func (f *Nodes) Close() {
	for _, s := range f.servers {
		s.Close()
	}
	f.servers = nil
}
