package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// ErrInFlight is the Err of a request the driver did not send because
// Load.MaxInFlight requests were already waiting for answers: an open loop
// keeps its schedule rather than wait, and records what it dropped.
var ErrInFlight = errors.New("live: not sent: the in-flight bound was reached")

// Target is what Drive sends requests to: a Func, an Observer or an HTTP.
type Target interface {
	// open checks the target and returns its node count and its call.
	open(maxInFlight int) (nodes int, call caller, err error)
}

// caller sends one request for r.Key to r.Node and fills in r what came
// back: its answer and status, and what an Observer target saw.
type caller func(ctx context.Context, r *record.Record) error

// Func is a target in this process: a limiter called as a function, one
// node. Its decision states every count but the quota (Known is
// record.FieldsDecision); an error is recorded as an error, never as a
// denial.
type Func func(ctx context.Context, key string) (algos.Decision, error)

func (f Func) open(int) (int, caller, error) {
	if f == nil {
		return 0, nil, errors.New("live: a nil Func target")
	}
	return 1, func(ctx context.Context, r *record.Record) error {
		d, err := f(ctx, r.Key)
		r.Answer = record.Answer{Decision: d, Known: record.FieldsDecision, Delta: record.FieldReset | record.FieldRetryAfter}
		return err
	}, nil
}

// Observation is what an Observer target saw of one request: its answer, stating
// the fields the target knows (Answer.Known), and, on the drive's clock
// (µs since its time 0), when it was decided and the time its limiter was
// told, and its place in the target's order (any count that grows with
// each decision the target makes, such as a store's sequence of
// commands), each as Has says.
type Observation struct {
	Answer               record.Answer
	Decided, Told, Order int64
	Has                  record.Seen
}

// Observer is a target in this process that sees more of each decision than
// a client on the wire can: a limiter whose reply carries the store's
// clock and its order (a Lua script that reads TIME and counts its calls,
// that clock mapped to this machine's), or a harness that tells it the
// time. Nodes (at least 1) are its instances, requests sent to each in
// turn (a Plan's to the node it names). Its records claim what it saw, and
// nothing more: Decided only for a decision (a span that does not hold it,
// its clock mapped a few µs off, is widened to hold it), Told, and Order,
// which Drive turns into ranks from 1 by Decided, then Order (record.Record.Order).
type Observer struct {
	Nodes int
	Call  func(ctx context.Context, key string, node int) (Observation, error)
}

func (o Observer) open(int) (int, caller, error) {
	switch {
	case o.Call == nil:
		return 0, nil, errors.New("live: an Observer target without a Call")
	case o.Nodes < 1:
		return 0, nil, fmt.Errorf("live: an Observer target needs at least one node, got %d", o.Nodes)
	}
	return o.Nodes, func(ctx context.Context, r *record.Record) error {
		seen, err := o.Call(ctx, r.Key, r.Node)
		r.Answer = seen.Answer
		if seen.Has.Has(record.SeenTold) {
			r.Told, r.Seen = seen.Told, r.Seen|record.SeenTold
		}
		if err == nil && seen.Has.Has(record.SeenDecided) {
			r.Decided, r.Seen = seen.Decided, r.Seen|record.SeenDecided
			if seen.Has.Has(record.SeenOrder) {
				r.Order, r.Seen = seen.Order, r.Seen|record.SeenOrder
			}
		}
		return err
	}, nil
}

// HTTP is a service behind one or more nodes, each request sent to the
// next node in turn, carrying its key in KeyHeader (and wherever "{key}"
// appears in Path or Body).
type HTTP struct {
	// Nodes are the nodes' base URLs (http:// or https://), at least one.
	Nodes []string
	// Method defaults to GET.
	Method string
	// Path is appended to each node's URL; it defaults to "/".
	Path string
	// Body is sent with each request, "{key}" replaced by its key; empty
	// sends none.
	Body string
	// KeyHeader carries the key; it defaults to "X-API-Key". "-" sends
	// none (a key in the Path or Body only).
	KeyHeader string
	// Header is added to every request.
	Header http.Header
	// Reset is how X-RateLimit-Reset is read (ResetAuto by default).
	Reset ResetUnit
	// Response, when set, is given each response's node, status and
	// header as they came, from the goroutine that sent the request, once
	// Parse has read them: for a caller that keeps the headers as sent
	// (httpcheck's report).
	Response func(node, status int, h http.Header)
	// Client sends the requests; nil is a client with keep-alive, no
	// proxy, no redirects followed (a 3xx is an error) and as many idle
	// connections per node as Load.MaxInFlight.
	Client *http.Client
}

func (h HTTP) open(maxInFlight int) (int, caller, error) {
	if len(h.Nodes) == 0 {
		return 0, nil, errors.New("live: an HTTP target needs at least one node URL")
	}
	for _, n := range h.Nodes {
		u, err := url.Parse(n)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return 0, nil, fmt.Errorf("live: node %q is not an http:// or https:// URL", n)
		}
	}
	method, path, keyHeader := h.Method, h.Path, h.KeyHeader
	if method == "" {
		method = http.MethodGet
	}
	if path == "" {
		path = "/"
	}
	if keyHeader == "" {
		keyHeader = "X-API-Key"
	}
	if h.Reset > ResetEpoch {
		return 0, nil, fmt.Errorf("live: unknown ResetUnit(%d)", h.Reset)
	}
	client := h.Client
	if client == nil {
		client = &http.Client{
			Transport: &http.Transport{
				Proxy:               nil,
				MaxIdleConns:        maxInFlight * len(h.Nodes),
				MaxIdleConnsPerHost: maxInFlight,
				IdleConnTimeout:     30 * time.Second,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	nodes := make([]string, len(h.Nodes))
	for i, n := range h.Nodes {
		nodes[i] = strings.TrimSuffix(n, "/")
	}
	return len(nodes), func(ctx context.Context, r *record.Record) error {
		key, node := r.Key, r.Node
		var body io.Reader
		if h.Body != "" {
			body = strings.NewReader(strings.ReplaceAll(h.Body, "{key}", key))
		}
		req, err := http.NewRequestWithContext(ctx, method, nodes[node]+strings.ReplaceAll(path, "{key}", url.PathEscape(key)), body)
		if err != nil {
			return err
		}
		for k, vs := range h.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
		if keyHeader != "-" {
			req.Header.Set(keyHeader, key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		at := time.Now()
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) // so the connection is kept
		resp.Body.Close()
		a, err := Parse(resp.StatusCode, resp.Header, at, h.Reset)
		if h.Response != nil {
			h.Response(node, resp.StatusCode, resp.Header)
		}
		r.Answer, r.Status = a, resp.StatusCode
		return err
	}, nil
}
