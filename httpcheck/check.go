package httpcheck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
)

// The header names of the contract, the same as package httplimit's: the
// ones package live reads first (it reads the IETF fields too).
const (
	HeaderLimit      = live.HeaderLimit
	HeaderRemaining  = live.HeaderRemaining
	HeaderReset      = live.HeaderReset
	HeaderRetryAfter = live.HeaderRetryAfter
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
	// noTimeout bounds a request sent by a client of the caller's that has
	// no timeout of its own: a check still ends.
	noTimeout = 24 * time.Hour
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
	// until it ends on a 429, by at most as many requests again. A burst
	// that met no 429 but took so long that a limit of Limit per Window
	// may have admitted it all (Limit·(⌊span/Window⌋+2) or more: a machine
	// that answered slowly) goes on too, by at most three times as many
	// requests, until it meets one or outruns that bound.
	Requests int
	// MaxWait is the longest Retry-After the check waits; 0 is 10 s. A
	// longer one is reported as a retry-honoured breach, not waited.
	MaxWait time.Duration
	// Reset is how X-RateLimit-Reset is read (live.ResetAuto, the default,
	// reads a value of at least 10⁹ as Unix seconds and any other as
	// seconds; live.ResetMillis reads milliseconds). The IETF RateLimit
	// fields are read too, when X-RateLimit-* are absent.
	Reset live.ResetUnit
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
	if err := c.run(ctx, baseURL); err != nil {
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
	if o.Reset > live.ResetEpoch {
		return nil, fmt.Errorf("httpcheck: unknown Reset unit live.ResetUnit(%d)", o.Reset)
	}
	o.Path = path
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
	rep     *Report
}

// run sends the burst and the retry through live's driver (one key, a
// closed-loop client of plan's, the nodes in turn), recording every
// exchange with the headers as they came.
func (c *checker) run(ctx context.Context, baseURL string) error {
	var mu sync.Mutex
	var heads []Exchange // each response's status and headers, in order
	target := live.HTTP{
		Nodes: append([]string{baseURL}, c.o.Nodes...), Method: c.o.Method, Path: c.o.Path, Body: c.o.Body,
		KeyHeader: c.o.Header, Reset: c.o.Reset, Client: c.client,
		Response: func(_, status int, h http.Header) {
			mu.Lock()
			defer mu.Unlock()
			heads = append(heads, Exchange{Status: status, Limit: h.Get(HeaderLimit), Remaining: h.Get(HeaderRemaining),
				Reset: h.Get(HeaderReset), RetryAfter: h.Get(HeaderRetryAfter), Date: h.Get("Date")})
		},
	}
	if c.o.Body != "" {
		target.Header = http.Header{"Content-Type": {c.o.ContentType}}
	}
	timeout := c.client.Timeout
	if timeout <= 0 {
		timeout = noTimeout
	}
	p := &plan{o: &c.o, limit: c.rep.Limit}
	c.rep.Start = time.Now()
	recs, err := live.Drive(ctx, target, live.Load{Keys: []string{c.o.Key}, Loop: func() record.Client { return p },
		Duration: noTimeout * 365, Timeout: timeout, MaxInFlight: 1})
	mu.Lock()
	defer mu.Unlock()
	for i, r := range recs {
		if r.Err != nil && r.Status == 0 || i >= len(heads) {
			if ctx.Err() != nil {
				return fmt.Errorf("httpcheck: request %d: %w", i+1, ctx.Err())
			}
			return fmt.Errorf("httpcheck: request %d got no response: %w", i+1, r.Err)
		}
		e := heads[i]
		e.N, e.Method, e.URL, e.KeyHeader, e.Key = i+1, c.o.Method, c.targets[r.Node], c.o.Header, c.o.Key
		e.Sent, e.Received = time.Duration(r.Sent)*time.Microsecond, time.Duration(r.Answered)*time.Microsecond
		e.Record = r
		c.rep.Exchanges = append(c.rep.Exchanges, e)
	}
	switch {
	case err != nil:
		return fmt.Errorf("httpcheck: %w", err)
	case p.err != nil:
		return p.err
	case len(recs) == 0:
		return errors.New("httpcheck: no request was sent")
	}
	c.rep.Limit = p.limit
	c.rep.Burst = p.burst
	burst := c.rep.Exchanges[:p.burst]
	c.rep.BurstTime = burst[len(burst)-1].Received - burst[0].Sent
	for _, e := range burst {
		switch {
		case e.Status == http.StatusTooManyRequests:
			c.rep.Denied++
		case admitted(e.Status):
			c.rep.Admitted++
		}
	}
	return nil
}

// plan is the check's requests as a closed-loop client of live's: a burst
// of n back to back (n from the options, or from the limit the first
// response advertises), carried on until it ends on a 429, by at most n
// more; then, when that last 429's Retry-After can be honoured and is at
// most MaxWait, one more request that long after the 429 arrived. (The
// last, not the first: the promise of a Retry-After is for a client that
// sends nothing meanwhile.)
type plan struct {
	o              *Options
	limit          int64 // Options.Limit, or the first response's
	n              int   // the burst's size, once the first response is in
	answers, burst int
	denied         bool  // the burst met a 429
	firstSent      int64 // when the burst's first request was sent
	err            error
}

// Next is when the check sends its next request, if it does: see plan.
func (p *plan) Next(last *record.Record) (int64, bool) {
	if last == nil {
		return 0, true
	}
	p.answers++
	if last.Status == 0 || p.burst > 0 { // no response, or the retry's: done
		return 0, false
	}
	if p.answers == 1 {
		p.firstSent = last.Sent
		if p.limit == 0 && last.Known.Has(record.FieldLimit) && last.Limit > 0 {
			p.limit = last.Limit
		}
		p.n = p.o.Requests
		switch {
		case p.n == 0 && p.limit == 0:
			p.n = unknownLimitBurst
		case p.n == 0 && p.limit > (maxDefaultBurst-5)/2:
			p.err = fmt.Errorf("httpcheck: the advertised limit %d is too large for the default burst; set Options.Requests", p.limit)
			return 0, false
		case p.n == 0:
			p.n = int(2*p.limit + 5)
		case int64(p.n) <= p.limit:
			p.err = fmt.Errorf("httpcheck: Requests (%d) does not go past the advertised limit %d", p.n, p.limit)
			return 0, false
		}
	}
	refused := last.Status == http.StatusTooManyRequests
	p.denied = p.denied || refused
	// The burst goes on to n, then, once it met a 429, until it ends on
	// one: the retry must follow the key's last request, or a later admit
	// could spend what the first refusal's Retry-After promised.
	if p.answers < p.n || p.denied && !refused && p.answers < 2*p.n {
		return last.Answered, true
	}
	// A burst too slow to have gone past the limit goes on: a correct
	// limiter owes it a 429 only once it outruns the refill.
	if !p.denied && p.limit > 0 && p.answers < 4*p.n && int64(p.answers) <= mostAdmits(p.limit, time.Duration(last.Answered-p.firstSent)*time.Microsecond, p.o.Window) {
		return last.Answered, true
	}
	p.burst = p.answers
	if !refused || !last.Known.Has(record.FieldRetryAfter) || last.RetryAfter < algos.Second ||
		time.Duration(last.RetryAfter)*time.Microsecond > p.o.MaxWait {
		return 0, false // judged by retry-after or retry-honoured
	}
	return last.Answered + last.RetryAfter, true
}

func admitted(status int) bool { return status >= 200 && status < 300 }
