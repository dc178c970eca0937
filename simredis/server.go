package simredis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// MaxClock is the latest clock SetClock accepts, about the year 2262: the
// most µs a time.Duration can count, so that any move of the clock is one.
const MaxClock int64 = math.MaxInt64 / 1000

// Databases is how many numbered databases (SELECT 0 to Databases-1) have
// their expiries kept exactly on the clock, as Redis's default of 16.
const Databases = 16

// ErrClockBackwards is the error SetClock returns for a time before the
// current clock. A store's clock that steps back is StepBack, said aloud.
var ErrClockBackwards = errors.New("simredis: the clock cannot go backwards")

// ErrClosed is returned by every clock method after Close.
var ErrClosed = errors.New("simredis: server closed")

// Server is an in-process Redis (miniredis) whose clock is set by the caller
// and nothing else: it never reads the machine's clock. It is safe for
// concurrent use, but a command that runs while SetClock, StepBack or Wipe
// is in progress may see the store half-way through the change, so the
// caller sets the clock between commands, as a simulator does.
//
// Each SetClock and StepBack visits every key of every database (see
// normalize): cheap for a simulation's few keys, linear in their number.
// A key whose expiry was set since the previous SetClock has it rewritten
// there, which miniredis counts as a change of the key: a client that
// WATCHed such a key across a SetClock sees its EXEC refused, where Redis
// would run it.
type Server struct {
	mu      sync.Mutex
	m       *miniredis.Miniredis
	clock   int64 // µs of Unix time
	closed  bool
	scripts *scriptShim
}

// Start starts a server listening on 127.0.0.1 at a free port, with no keys,
// no scripts and its clock at 0 µs (the Unix epoch): TIME answers 0 0 until
// SetClock moves it.
func Start() (*Server, error) {
	m := miniredis.NewMiniRedis()
	m.SetTime(time.UnixMicro(0))
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("simredis: %w", err)
	}
	s := &Server{m: m}
	s.scripts = newScriptShim(m)
	m.Server().SetPreHook(s.scripts.hook)
	return s, nil
}

// Addr is the server's host:port on 127.0.0.1, for any Redis client.
func (s *Server) Addr() string { return s.m.Addr() }

// Dial connects to the server in process, over an in-memory pipe (a
// buffered net.Pipe, see memPipe) and not TCP: a connection as good as one
// to Addr, without the system calls. Its
// signature is go-redis's Options.Dialer (network and addr are ignored),
// so that a client built with it never touches the network. It fails with
// ErrClosed after Close, which closes the connections it made.
func (s *Server) Dial(_ context.Context, _, _ string) (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	client, server := memPipe()
	s.m.Server().ServeConn(server)
	return client, nil
}

// Close stops the server and closes its connections. It may be called more
// than once; the clock methods fail with ErrClosed after it.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.m.Close()
}

// Clock is the store's clock, in µs of Unix time: what TIME answers.
func (s *Server) Clock() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock
}

// SetClock moves the store's clock to us µs of Unix time, forward or to the
// same value (which changes nothing). From then on TIME answers exactly us
// (seconds, and microseconds within the second), and keys expire exactly as
// Redis 7 expires them on a clock reading us: a key whose expiry is T ms
// (PEXPIRETIME) is there, with PTTL T - ⌊us/1000⌋, while ⌊us/1000⌋ ≤ T,
// and gone from the µs (T+1)·1000 on. A time before the clock is
// ErrClockBackwards and changes nothing; so is a time below 0 or above
// MaxClock (an error, not ErrClockBackwards).
func (s *Server) SetClock(us int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(us); err != nil {
		return err
	}
	if us < s.clock {
		return fmt.Errorf("%w: %d µs is before the clock, %d µs", ErrClockBackwards, us, s.clock)
	}
	s.normalize()
	if us > s.clock {
		s.m.SetTime(time.UnixMicro(us))
		s.m.FastForward(time.Duration(us-s.clock) * time.Microsecond)
		s.clock = us
	}
	return nil
}

// StepBack moves the store's clock back to us (at or before the clock), as
// an operator stepping a Redis host's wall clock back would: TIME answers
// us, and every key keeps the absolute expiry it had (its PEXPIRETIME), so
// its PTTL grows by the step. A time after the clock is an error and changes
// nothing.
func (s *Server) StepBack(us int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(us); err != nil {
		return err
	}
	if us > s.clock {
		return fmt.Errorf("simredis: StepBack to %d µs is after the clock, %d µs; use SetClock", us, s.clock)
	}
	s.normalize()
	if us < s.clock {
		s.m.SetTime(time.UnixMicro(us))
		s.m.FastForward(-time.Duration(s.clock-us) * time.Microsecond)
		s.clock = us
	}
	return nil
}

func (s *Server) check(us int64) error {
	switch {
	case s.closed:
		return ErrClosed
	case us < 0 || us > MaxClock:
		return fmt.Errorf("simredis: clock %d µs is not within 0 and MaxClock", us)
	}
	return nil
}

// Wipe drops every key of every database and every cached script, as a
// Redis restarted without persistence has neither; EVALSHA then answers
// NOSCRIPT until the script is loaded again (go-redis's Script.Run falls
// back to EVAL by itself). The clock and the connections stay.
func (s *Server) Wipe() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.m.FlushAll()
	s.scripts.flush()
}

// normalize keeps miniredis's expiries on Redis's rule. miniredis keeps a
// key's expiry as a duration that FastForward counts down, and drops the key
// when it reaches 0: the instant clock+duration, to the ns. Redis keeps an
// absolute time T in ms and drops the key once its ms clock is past T, that
// is at (T+1)·1000 µs. A duration set by PEXPIRE p (or SET PX p) at clock c
// ends at c+p ms, which is within ms T = ⌊c/1000⌋+p but up to 1 ms before
// Redis drops the key; one set by PEXPIREAT T ends at T ms exactly, a whole
// ms early. Every expiry is therefore moved, before the clock moves, to the
// last ns of its ms: PTTL (truncated to the ms) and PEXPIRETIME (the ms of
// the end) read as before, and FastForward drops the key exactly when the
// clock reaches (T+1)·1000 µs. Expiries already there are left alone.
func (s *Server) normalize() {
	now := time.UnixMicro(s.clock)
	for i := range Databases {
		db := s.m.DB(i)
		for _, k := range db.Keys() {
			ttl := db.TTL(k)
			if ttl <= 0 { // no expiry (a set one is never 0 between commands)
				continue
			}
			end := now.Add(ttl)
			last := time.UnixMilli(end.UnixMilli() + 1).Add(-time.Nanosecond)
			if !end.Equal(last) {
				db.SetTTL(k, last.Sub(now))
			}
		}
	}
}
