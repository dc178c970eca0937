package httpcheck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// The header names of the contract, the same as package httplimit's.
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderRetryAfter = "Retry-After"
)

const (
	defaultHeader  = "X-API-Key"
	defaultMaxWait = 10 * time.Second
	defaultTimeout = 10 * time.Second
	// unknownLimitBurst is the burst when no limit is given or advertised:
	// enough to pass most per-second limits, and a headers breach anyway.
	unknownLimitBurst = 100
	// maxDefaultBurst keeps a huge advertised limit from turning the
	// default burst into a load test; Options.Requests can go further.
	maxDefaultBurst = 100_000
	// bodyLimit is how much of a body is read so that the connection is
	// reused; a larger body is cut off with its connection.
	bodyLimit = 1 << 20
)

// Options say what to check and how. Only Window is required.
type Options struct {
	// Header is the request header that carries the key; "" is X-API-Key.
	Header string
	// Key is the key driven past its limit; "" is a fresh random one per
	// check, so that reruns never share a key's state.
	Key string
	// Method and Path are the request sent; "" is GET and "/". Path is
	// appended to the base URL and may carry a query. Body, when not
	// empty, is sent with every request, as ContentType ("" is
	// application/json). "{key}" in Path or Body is replaced by the key.
	Method, Path      string
	Body, ContentType string
	// Nodes are more base URLs of the same service (its other instances):
	// the requests go to the base URL and these in turn, as a round-robin
	// load balancer would send them, so that limiters that do not share
	// their state are seen admitting a limit each.
	Nodes []string
	// Window is the time the limit is stated over: Remaining may refill by
	// at most Limit per Window (a bucket of burst B refilling r per w is
	// B per B·w/r). It must be positive.
	Window time.Duration
	// Limit is the X-RateLimit-Limit every response must carry; 0 takes
	// the first response's.
	Limit int64
	// Requests is the size of the burst; 0 is 2×Limit+5. It must go past
	// the limit. A burst that meets a 429 but ends on an admit goes on
	// until it ends on a 429, by at most as many requests again.
	Requests int
	// MaxWait is the longest Retry-After the check waits; 0 is 10 s. A
	// longer one is reported as a retry-honoured breach, not waited.
	MaxWait time.Duration
	// Client sends the requests; nil is a client of its own with a 10 s
	// timeout.
	Client *http.Client
}

// Check drives one key of the server at baseURL past its limit and
// reports every breach of the contract. It returns an error, and no
// report, only when it cannot run: bad options, a request that gets no
// response (an unreachable server, a timeout), or ctx done.
func Check(ctx context.Context, baseURL string, o Options) (*Report, error) {
	targets, err := prepare(baseURL, &o)
	if err != nil {
		return nil, err
	}
	client := o.Client
	if client == nil {
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment}
		if def, ok := http.DefaultTransport.(*http.Transport); ok {
			tr = def.Clone()
		}
		defer tr.CloseIdleConnections()
		client = &http.Client{Transport: tr, Timeout: defaultTimeout}
	}
	c := &checker{o: o, client: client, targets: targets, rep: &Report{
		Method: o.Method, URL: targets[0], Nodes: targets[1:], Header: o.Header, Key: o.Key,
		Limit: o.Limit, Window: o.Window,
	}}
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	c.rep.judge(o.Limit, o.MaxWait)
	return c.rep, nil
}

// CheckHandler is Check of h, served on a loopback port (127.0.0.1) for
// the check's duration.
func CheckHandler(ctx context.Context, h http.Handler, o Options) (*Report, error) {
	if h == nil {
		return nil, errors.New("httpcheck: no handler")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("httpcheck: serving the handler: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: defaultTimeout}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed once Close is called
	}()
	defer func() {
		_ = srv.Close()
		<-done
	}()
	return Check(ctx, "http://"+ln.Addr().String(), o)
}

// Assert checks baseURL as Check does and fails t with the written report
// when anything breaches, or with the error and the key used when the
// check cannot run. It marks t failed (Errorf) rather than stopping it.
func Assert(t testing.TB, baseURL string, o Options) {
	t.Helper()
	if o.Key == "" {
		o.Key = newKey()
	}
	r, err := Check(t.Context(), baseURL, o)
	if err != nil {
		t.Errorf("httpcheck: key %q: %v", o.Key, err)
		return
	}
	if !r.OK() {
		var b strings.Builder
		_ = r.Write(&b)
		t.Error(b.String())
	}
}

// prepare validates o, fills in its defaults and returns the URLs
// requested: the base URL's, then each node's.
func prepare(baseURL string, o *Options) ([]string, error) {
	switch {
	case o.Window <= 0:
		return nil, fmt.Errorf("httpcheck: Window must be positive (the time the limit is stated over), got %v", o.Window)
	case o.Limit < 0:
		return nil, fmt.Errorf("httpcheck: Limit must not be negative, got %d", o.Limit)
	case o.Requests < 0:
		return nil, fmt.Errorf("httpcheck: Requests must not be negative, got %d", o.Requests)
	case o.Requests > 0 && o.Limit > 0 && int64(o.Requests) <= o.Limit:
		return nil, fmt.Errorf("httpcheck: Requests (%d) must go past Limit (%d)", o.Requests, o.Limit)
	case o.MaxWait < 0:
		return nil, fmt.Errorf("httpcheck: MaxWait must not be negative, got %v", o.MaxWait)
	}
	if o.Header == "" {
		o.Header = defaultHeader
	}
	if o.Key == "" {
		o.Key = newKey()
	}
	if o.Method == "" {
		o.Method = http.MethodGet
	}
	if o.MaxWait == 0 {
		o.MaxWait = defaultMaxWait
	}
	path := strings.ReplaceAll(o.Path, "{key}", url.PathEscape(o.Key))
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if o.Body != "" && o.ContentType == "" {
		o.ContentType = "application/json"
	}
	var targets []string
	for i, base := range append([]string{baseURL}, o.Nodes...) {
		what := "base URL"
		if i > 0 {
			what = fmt.Sprintf("node %d", i)
		}
		u, err := url.Parse(base)
		if err != nil {
			return nil, fmt.Errorf("httpcheck: %s: %w", what, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("httpcheck: %s %q must be http:// or https:// and name a host", what, base)
		}
		target := strings.TrimSuffix(base, "/") + path
		if _, err := http.NewRequest(o.Method, target, nil); err != nil {
			return nil, fmt.Errorf("httpcheck: %w", err)
		}
		targets = append(targets, target)
	}
	return targets, nil
}

// newKey is a key no earlier check has used: crypto/rand, so that it
// shares no seed with anything that decides a verdict.
func newKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's contract since Go 1.24)
	return "httpcheck-" + hex.EncodeToString(b[:])
}

type checker struct {
	o       Options
	client  *http.Client
	targets []string // the base URL's, then each node's (round robin)
	start   time.Time
	rep     *Report
}

// run sends the burst and the retry, recording every exchange.
func (c *checker) run(ctx context.Context) error {
	c.start = time.Now()
	c.rep.Start = c.start
	first, err := c.send(ctx)
	if err != nil {
		return err
	}
	if c.rep.Limit == 0 {
		if v, ok := parseCount(first.Limit); ok && v > 0 {
			c.rep.Limit = v
		}
	}
	n := c.o.Requests
	switch {
	case n == 0 && c.rep.Limit == 0:
		n = unknownLimitBurst
	case n == 0 && c.rep.Limit > (maxDefaultBurst-5)/2:
		return fmt.Errorf("httpcheck: the advertised limit %d is too large for the default burst; set Options.Requests", c.rep.Limit)
	case n == 0:
		n = int(2*c.rep.Limit + 5)
	case int64(n) <= c.rep.Limit:
		return fmt.Errorf("httpcheck: Requests (%d) does not go past the advertised limit %d", n, c.rep.Limit)
	}
	for len(c.rep.Exchanges) < n {
		if _, err := c.send(ctx); err != nil {
			return err
		}
	}
	// The retry must follow the key's last request, or a later admit
	// could spend what the first refusal's Retry-After promised.
	denied := func(e Exchange) bool { return e.Status == http.StatusTooManyRequests }
	if slices.ContainsFunc(c.rep.Exchanges, denied) {
		for extra := 0; extra < n && !denied(c.rep.Exchanges[len(c.rep.Exchanges)-1]); extra++ {
			if _, err := c.send(ctx); err != nil {
				return err
			}
		}
	}
	c.rep.Burst = len(c.rep.Exchanges)
	burst := c.rep.Exchanges
	c.rep.BurstTime = burst[len(burst)-1].Received - burst[0].Sent
	for _, e := range burst {
		switch {
		case e.Status == http.StatusTooManyRequests:
			c.rep.Denied++
		case admitted(e.Status):
			c.rep.Admitted++
		}
	}

	last := burst[len(burst)-1]
	if !denied(last) {
		return nil
	}
	wait, ok := retryWait(last, c.start)
	if !ok || wait > c.o.MaxWait {
		return nil // judged by retry-after or retry-honoured
	}
	if err := sleepUntil(ctx, c.start.Add(last.Received+wait)); err != nil {
		return fmt.Errorf("httpcheck: waiting Retry-After: %w", err)
	}
	_, err = c.send(ctx)
	return err
}

// send makes one exchange and records it.
func (c *checker) send(ctx context.Context) (Exchange, error) {
	target := c.targets[len(c.rep.Exchanges)%len(c.targets)]
	var body io.Reader
	if c.o.Body != "" {
		body = strings.NewReader(strings.ReplaceAll(c.o.Body, "{key}", c.o.Key))
	}
	req, err := http.NewRequestWithContext(ctx, c.o.Method, target, body)
	if err != nil {
		return Exchange{}, fmt.Errorf("httpcheck: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", c.o.ContentType)
	}
	req.Header.Set(c.o.Header, c.o.Key)
	e := Exchange{
		N: len(c.rep.Exchanges) + 1, Method: c.o.Method, URL: target,
		KeyHeader: c.o.Header, Key: c.o.Key,
		Sent: time.Since(c.start),
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Exchange{}, fmt.Errorf("httpcheck: request %d: %w", e.N, ctx.Err())
		}
		return Exchange{}, fmt.Errorf("httpcheck: request %d got no response: %w", e.N, err)
	}
	e.Received = time.Since(c.start)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyLimit))
	_ = resp.Body.Close()
	e.Status = resp.StatusCode
	h := resp.Header
	e.Limit, e.Remaining, e.Reset = h.Get(HeaderLimit), h.Get(HeaderRemaining), h.Get(HeaderReset)
	e.RetryAfter, e.Date = h.Get(HeaderRetryAfter), h.Get("Date")
	c.rep.Exchanges = append(c.rep.Exchanges, e)
	return e, nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func admitted(status int) bool { return status >= 200 && status < 300 }
