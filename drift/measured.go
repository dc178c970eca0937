package drift

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
)

// Probe is how Measure reaches a live service.
type Probe struct {
	// Base is the service's base URL (http:// or https://); each
	// operation's path is appended to it.
	Base string
	// KeyHeader carries the key each operation is probed under, a fresh
	// random one per operation; "" is "X-API-Key".
	KeyHeader string
	// Params fills the path's parameters ("{id}"); one not named is
	// "drift".
	Params map[string]string
	// Max bounds the requests sent to one operation (default 10,000): an
	// operation that denies none of them is measured as unlimited.
	Max int64
	// Timeout bounds each request (default 5 s).
	Timeout time.Duration
	// Client sends the requests; nil is a client with keep-alive that
	// follows no redirect.
	Client *http.Client
}

// Measurement is what one operation admitted to a fresh key, probed one
// request at a time until its first denial.
type Measurement struct {
	// Admitted is the admits before the first denial.
	Admitted int64
	// Limited is whether a denial came (within Probe.Max requests).
	Limited bool
	// Span is the µs from the first request's send to the last admit's
	// answer: the limiter can have refilled for at most that long, which
	// the gate allows for (Allowance).
	Span int64
	// Advertised is the quota the answers stated (X-RateLimit-Limit, or
	// the IETF fields), 0 when none did.
	Advertised int64
	// Records are the requests as the client saw them, in order.
	Records []record.Record
}

// String is the measurement as the table prints it: "100 at once", or
// "none of N denied" when no request was.
func (m Measurement) String() string {
	if !m.Limited {
		return fmt.Sprintf("none of %d denied", m.Admitted)
	}
	return fmt.Sprintf("%d at once", m.Admitted)
}

// Allowance is the most admits p's refill can add during the probe:
// ⌊Quota·Span/Window⌋. The probe's decisions all fell within Span, so a
// limiter that keeps p (a bucket, GCRA, a sliding log, a window anchored
// at the first request) admits a fresh key at most Burst + Allowance
// before its first denial, however slowly the machine ran the probe, and
// at least Burst. A window aligned to the clock can admit more when the
// probe crosses its boundary; its probe should be much shorter than the
// window.
func (m Measurement) Allowance(p Policy) int64 {
	if p.Window <= 0 || m.Span <= 0 {
		return 0
	}
	// Quota·Span can overflow for long spans of large quotas: divide first.
	whole, rest := m.Span/p.Window, m.Span%p.Window
	return whole*p.Quota + p.Quota*rest/p.Window
}

var param = regexp.MustCompile(`\{[^/{}]+\}`)

// Measure probes each of ops on the live service: under a fresh random
// key it sends one request at a time, each after the last one's answer,
// until the first 429, and records every request (record.Record, its
// answer parsed by live.Parse). The admits before that denial are the
// most the service admits a fresh key at once, give or take what its
// limiter refilled during the probe, which the recorded Span bounds. An
// answer neither 2xx nor 429, or a request that fails, is an error naming
// the operation.
func Measure(ctx context.Context, probe Probe, ops []Operation) (map[Operation]Measurement, error) {
	u, err := url.Parse(probe.Base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("drift: the base %q is not an http:// or https:// URL", probe.Base)
	}
	if probe.KeyHeader == "" {
		probe.KeyHeader = "X-API-Key"
	}
	if probe.Max == 0 {
		probe.Max = 10_000
	}
	if probe.Max < 0 || probe.Timeout < 0 {
		return nil, errors.New("drift: a negative Max or Timeout")
	}
	if probe.Timeout == 0 {
		probe.Timeout = 5 * time.Second
	}
	if probe.Client == nil {
		probe.Client = &http.Client{
			Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	out := make(map[Operation]Measurement, len(ops))
	for _, op := range ops {
		m, err := measure(ctx, probe, op)
		if err != nil {
			return nil, fmt.Errorf("drift: measuring %s: %w", op, err)
		}
		out[op] = m
	}
	return out, nil
}

func measure(ctx context.Context, probe Probe, op Operation) (Measurement, error) {
	path := param.ReplaceAllStringFunc(op.Path, func(p string) string {
		v, ok := probe.Params[strings.Trim(p, "{}")]
		if !ok {
			v = "drift"
		}
		return url.PathEscape(v)
	})
	target := strings.TrimSuffix(probe.Base, "/") + path
	b := make([]byte, 6)
	rand.Read(b)
	key := "drift-" + hex.EncodeToString(b)

	var m Measurement
	start := time.Now()
	since := func() int64 { return time.Since(start).Microseconds() }
	for range probe.Max {
		r := record.Record{Key: key, Sent: since()}
		a, status, err := send(ctx, probe, op.Method, target, key)
		r.Answered, r.Answer, r.Status, r.Err = since(), a, status, err
		m.Records = append(m.Records, r)
		if err != nil {
			return m, fmt.Errorf("request %d: %w", len(m.Records), err)
		}
		if a.Known.Has(record.FieldLimit) && m.Advertised == 0 {
			m.Advertised = a.Limit
		}
		if !a.Allowed {
			m.Limited = true
			break
		}
		m.Admitted++
		m.Span = r.Answered - m.Records[0].Sent
	}
	return m, nil
}

// send makes one request and parses its answer.
func send(ctx context.Context, probe Probe, method, target, key string) (record.Answer, int, error) {
	ctx, cancel := context.WithTimeout(ctx, probe.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return record.Answer{}, 0, err
	}
	req.Header.Set(probe.KeyHeader, key)
	resp, err := probe.Client.Do(req)
	if err != nil {
		return record.Answer{}, 0, err
	}
	at := time.Now()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	a, err := live.Parse(resp.StatusCode, resp.Header, at, live.ResetAuto)
	return a, resp.StatusCode, err
}
