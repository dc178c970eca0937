package replay

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A library's script does not say when it ran or in which order, so a live
// run of any limiter learns both from Redis itself: MONITOR streams every
// command Redis runs, in the order it runs them, each stamped with the
// store's clock and the address of the connection that sent it. Each node
// has a connection of its own, and a hook on it counts the commands each
// call to the limiter sends, so that the node's lines split into its calls.

// monitored is one command of a node, as MONITOR showed it.
type monitored struct {
	at   int64 // the store's clock, in µs of Unix time, when Redis showed it
	seq  int64 // its place among every command MONITOR showed
	addr string
	// clock is when the script it ran called TIME, as MONITOR showed that
	// call (0 if it called none): the instant a store-clock limiter read,
	// where at can be tens of µs before or after it.
	clock int64
}

// monitor is a MONITOR connection and the lines it has read.
type monitor struct {
	conn  net.Conn
	addrs map[string]bool // the nodes' addresses, as Redis sees them
	mark  string          // the ECHO argument that ends the recording

	// innerAfter is true when Redis shows a script's own commands after
	// the script's line (Redis 7.0 does), false when before it.
	innerAfter bool

	mu    sync.Mutex
	lines []monitored
	done  chan error // receives once: nil when mark was seen
}

// startMonitor opens a MONITOR connection to the Redis store reaches
// (authenticated as store says), keeping the lines of the connections whose
// addresses (CLIENT INFO's addr) are given. It first runs a script through
// probe, to learn on which side of a script's line Redis shows the
// script's own commands.
func startMonitor(ctx context.Context, store *redis.Options, nodeAddrs []string, probe *redis.Client) (*monitor, error) {
	conn, err := dialStore(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("MONITOR: %w", err)
	}
	m := &monitor{conn: conn, addrs: make(map[string]bool), done: make(chan error, 1)}
	for _, a := range nodeAddrs {
		m.addrs[a] = true
	}
	m.mark = fmt.Sprintf("overshoot-monitor-end-%016x", rand.Uint64())
	rd := bufio.NewReader(conn)
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	var auth []string
	switch {
	case store.Username != "":
		auth = []string{"AUTH", store.Username, store.Password}
	case store.Password != "":
		auth = []string{"AUTH", store.Password}
	}
	if auth != nil {
		if err := roundTrip(conn, rd, auth...); err != nil {
			conn.Close()
			return nil, fmt.Errorf("MONITOR: AUTH: %w", err)
		}
	}
	if err := roundTrip(conn, rd, "MONITOR"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("MONITOR: %w", err)
	}
	if err := m.learnOrder(ctx, rd, probe); err != nil {
		conn.Close()
		return nil, fmt.Errorf("MONITOR: %w", err)
	}
	go m.read(rd)
	return m, nil
}

// dialStore opens a raw connection to the Redis store reaches: through its
// Dialer when it has one, else over its Network (default tcp), in TLS when
// it has a TLSConfig.
func dialStore(ctx context.Context, store *redis.Options) (net.Conn, error) {
	if store.Dialer != nil {
		return store.Dialer(ctx, cmp.Or(store.Network, "tcp"), store.Addr)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, cmp.Or(store.Network, "tcp"), store.Addr)
	if err != nil || store.TLSConfig == nil {
		return conn, err
	}
	tc := tls.Client(conn, store.TLSConfig)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// roundTrip sends one command and reads its reply, which must be +OK.
func roundTrip(conn net.Conn, rd *bufio.Reader, args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	if reply := strings.TrimSpace(line); reply != "+OK" {
		return fmt.Errorf("the store answered %s", strings.TrimPrefix(reply, "-"))
	}
	return nil
}

// learnOrder runs a script whose one command echoes a tag no other client
// sends, and reads MONITOR until it has shown both that command (from
// "lua") and the script's own line (from the probe's connection, the tag
// its argument), in one order or the other. A shared store runs other
// clients' scripts beside the probe, whose commands come between: no line
// is taken for the probe's unless it carries the tag.
func (m *monitor) learnOrder(ctx context.Context, rd *bufio.Reader, probe *redis.Client) error {
	tag := m.mark + "-probe"
	if err := probe.Eval(ctx, "return redis.call('ECHO', ARGV[1])", nil, tag).Err(); err != nil {
		return err
	}
	sawScript, sawInner := false, false
	for !sawScript || !sawInner {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		_, addr, ok := parseMonitorLine(line)
		switch {
		case !ok:
			return fmt.Errorf("a MONITOR line this reader does not understand: %q", line)
		case !strings.Contains(line, tag):
		case addr == "lua":
			sawInner, m.innerAfter = true, sawScript
		default:
			sawScript = true
		}
	}
	return nil
}

// isTime reports whether a MONITOR line shows the TIME command.
func isTime(line string) bool {
	_, cmd, _ := strings.Cut(line, "] ")
	return strings.EqualFold(strings.TrimSpace(cmd), `"TIME"`)
}

// read keeps the nodes' lines until it sees the mark, or the connection
// fails.
func (m *monitor) read(rd *bufio.Reader) {
	var seq int64
	// A script's TIME belongs to the line after it (innerAfter false) or
	// to the line before it, if that was a node's and nothing came between.
	pending, open := int64(0), false
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			m.done <- err
			return
		}
		seq++
		at, addr, ok := parseMonitorLine(line)
		switch {
		case !ok:
			m.done <- fmt.Errorf("a MONITOR line this reader does not understand: %q", line)
			return
		case strings.Contains(line, m.mark):
			m.done <- nil
			return
		case addr == "lua":
			if !isTime(line) {
				continue
			}
			m.mu.Lock()
			switch {
			case !m.innerAfter && pending == 0:
				pending = at
			case m.innerAfter && open && m.lines[len(m.lines)-1].clock == 0:
				m.lines[len(m.lines)-1].clock = at
			}
			m.mu.Unlock()
			continue
		case m.addrs[addr]:
			m.mu.Lock()
			m.lines = append(m.lines, monitored{at: at, seq: seq, addr: addr, clock: pending})
			m.mu.Unlock()
			open = true
		default:
			open = false
		}
		pending = 0
	}
}

// parseMonitorLine reads `+<s>.<µs> [<db> <addr>] "<command>" ...`.
func parseMonitorLine(line string) (at int64, addr string, ok bool) {
	line = strings.TrimPrefix(line, "+")
	stamp, rest, ok := strings.Cut(line, " [")
	if !ok {
		return 0, "", false
	}
	secs, micros, ok := strings.Cut(stamp, ".")
	if !ok || len(micros) != 6 {
		return 0, "", false
	}
	s, err1 := strconv.ParseInt(secs, 10, 64)
	us, err2 := strconv.ParseInt(micros, 10, 64)
	inside, _, ok := strings.Cut(rest, "]")
	if err1 != nil || err2 != nil || !ok {
		return 0, "", false
	}
	_, addr, ok = strings.Cut(inside, " ")
	return s*1_000_000 + us, addr, ok
}

// stop sends the mark through c, waits until MONITOR has shown it (so every
// command before it has been read) and returns the nodes' lines in order.
func (m *monitor) stop(ctx context.Context, c *redis.Client) ([]monitored, error) {
	defer m.conn.Close()
	if err := c.Echo(ctx, m.mark).Err(); err != nil {
		return nil, fmt.Errorf("MONITOR: %w", err)
	}
	wait := time.NewTimer(5 * time.Second)
	defer wait.Stop()
	select {
	case err := <-m.done:
		if err != nil {
			return nil, fmt.Errorf("MONITOR: %w", err)
		}
	case <-wait.C:
		return nil, errors.New("MONITOR: the end mark did not come back within 5 s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lines, nil
}

// commandCounter is a go-redis hook counting the commands a client sends
// (each command of a pipeline counts) and the connections it dials.
type commandCounter struct {
	commands, dials atomic.Int64
}

func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
