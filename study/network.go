package study

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/overshoot-go/overshoot/redis/conn"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Path is a way from the workers to Redis: straight over loopback, or
// through an in-process toxiproxy that holds every byte for a fixed time on
// the way up (client to Redis) and on the way down. The delay is real: it is
// the wall-clock time the bytes wait, and Redis sees the requests late.
type Path struct {
	// Name is the nominal round trip the toxics add ("loopback" for none).
	Name string
	// Addr is where a worker connects: Redis itself, or the proxy.
	Addr string
	// Up and Down are the latency toxics' delays on each leg.
	Up, Down time.Duration
	// RTT is the round trip measured through this path with PING (the
	// median of RTTSamples), which is what the report shows.
	RTT time.Duration

	upstream *redis.Options // the Redis behind the path: its credentials
	proxy    *toxiproxy.Proxy
}

// Options are go-redis options that reach Redis through the path: Addr is
// the path's, and the credentials (Username, Password, DB) are those the
// path was made with. The caller may change the pool settings.
func (p *Path) Options() *redis.Options { return conn.Options(p.upstream, p.Addr) }

// upstreamOptions is a copy of opt (never nil), so that a path keeps the
// credentials it was made with whatever the caller does to opt later.
func upstreamOptions(opt *redis.Options) *redis.Options {
	if opt == nil {
		return &redis.Options{}
	}
	c := *opt
	return &c
}

// RTTSamples is how many PINGs a Path's RTT is the median of.
const RTTSamples = 50

// Direct is the path straight to the Redis of opt (its Addr on loopback,
// logging in with its credentials), with its RTT measured.
func Direct(ctx context.Context, opt *redis.Options) (*Path, error) {
	p := &Path{Name: "loopback", Addr: opt.Addr, upstream: upstreamOptions(opt)}
	rtt, err := MeasureRTT(ctx, p.Options(), RTTSamples)
	if err != nil {
		return nil, err
	}
	p.RTT = rtt
	return p, nil
}

// Delayed starts a proxy on a free 127.0.0.1 port in front of the Redis
// that upstream reaches (its Addr, logging in with its credentials), with a
// latency toxic of up on the upstream leg and down on the downstream leg
// (whole milliseconds: the toxic's unit), and measures the RTT through it.
// Path.Options reaches Redis through it with upstream's credentials. Close
// stops the proxy and drops its connections.
func Delayed(ctx context.Context, upstream *redis.Options, up, down time.Duration) (*Path, error) {
	opt := upstreamOptions(upstream)
	redisAddr := opt.Addr
	if !strings.HasPrefix(redisAddr, "127.0.0.1:") && !strings.HasPrefix(redisAddr, "localhost:") && !strings.HasPrefix(redisAddr, "[::1]:") {
		// The study sends load in bulk; it stays on this machine.
		return nil, fmt.Errorf("study: the proxy only fronts a loopback Redis, not %s", redisAddr)
	}
	for _, d := range []time.Duration{up, down} {
		if d < 0 || d%time.Millisecond != 0 {
			return nil, fmt.Errorf("study: a latency toxic delays by whole milliseconds, not %v", d)
		}
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	name := fmt.Sprintf("redis-%v-%v", up, down)
	proxy := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", redisAddr)
	if err := proxy.Start(); err != nil {
		return nil, fmt.Errorf("study: starting toxiproxy: %w", err)
	}
	p := &Path{Name: rttName(up + down), Addr: proxy.Listen, Up: up, Down: down, upstream: opt, proxy: proxy}
	for _, leg := range []struct {
		stream string
		d      time.Duration
	}{{"upstream", up}, {"downstream", down}} {
		if leg.d == 0 {
			continue
		}
		spec := fmt.Sprintf(`{"name":"latency_%s","type":"latency","stream":%q,"toxicity":1,"attributes":{"latency":%d,"jitter":0}}`,
			leg.stream, leg.stream, leg.d.Milliseconds())
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
			proxy.Stop()
			return nil, fmt.Errorf("study: adding the %s latency toxic: %w", leg.stream, err)
		}
	}
	rtt, err := MeasureRTT(ctx, p.Options(), RTTSamples)
	if err != nil {
		proxy.Stop()
		return nil, err
	}
	p.RTT = rtt
	return p, nil
}

// Close stops the path's proxy, if it has one.
func (p *Path) Close() {
	if p.proxy != nil {
		p.proxy.Stop()
	}
}

// MeasureRTT is the median of n PING round trips on one fresh connection to
// the Redis of opt (its Addr, logging in with its credentials; the
// connection is opened, and warmed by one PING, first).
func MeasureRTT(ctx context.Context, opt *redis.Options, n int) (time.Duration, error) {
	addr := opt.Addr
	c := redis.NewClient(conn.Options(opt, ""))
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return 0, fmt.Errorf("study: PING %s: %w", addr, err)
	}
	rtts := make([]time.Duration, n)
	for i := range rtts {
		t0 := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			return 0, fmt.Errorf("study: PING %s: %w", addr, err)
		}
		rtts[i] = time.Since(t0)
	}
	slices.Sort(rtts)
	return rtts[n/2], nil
}

func rttName(d time.Duration) string {
	if d == 0 {
		return "proxy"
	}
	return fmt.Sprintf("+%vms", d.Milliseconds())
}
