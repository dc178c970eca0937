package simredis

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// memPipe is an in-memory, full-duplex connection, as net.Pipe's but
// buffered: a Write copies its bytes and returns, without waiting for the
// other end to read them (net.Pipe's Write waits, one goroutine handoff per
// Write), and a deadline costs no timer until a Read has to wait. What it
// answers otherwise is net.Pipe's: a Read on a closed end is
// io.ErrClosedPipe; a Read whose other end closed reads what was written
// and then io.EOF; a Write to or from a closed end is io.ErrClosedPipe; a
// deadline passed is os.ErrDeadlineExceeded (a net.Error whose Timeout is
// true); errors but io.EOF and io.ErrClosedPipe come in a *net.OpError.
func memPipe() (net.Conn, net.Conn) {
	a, b := newStream(), newStream()
	return &memConn{rd: a, wr: b}, &memConn{rd: b, wr: a}
}

// stream is one direction of a memPipe: what its writer wrote and its
// reader has not read yet.
type stream struct {
	mu  sync.Mutex
	buf []byte
	off int // buf[off:] is unread
	// wclosed: the writing end closed (the reader reads the rest, then EOF);
	// rclosed: the reading end closed.
	wclosed, rclosed bool
	readBy           time.Time // the reading end's read deadline
	// waiting counts the Reads waiting on wake, which is signalled (never
	// blocking) on every change they must see: a write, a close, a new
	// deadline; and only then, so that no stale signal wakes a later Read.
	waiting int
	wake    chan struct{}
}

func newStream() *stream { return &stream{wake: make(chan struct{}, 1)} }

// signal wakes a waiting Read; the caller holds mu.
func (s *stream) signal() {
	if s.waiting == 0 {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// memConn is one end of a memPipe: it reads rd and writes wr.
type memConn struct {
	rd, wr *stream

	wmu     sync.Mutex
	writeBy time.Time // the write deadline

	timer *time.Timer // a waiting Read's deadline; used by one Read at a time
	tmu   sync.Mutex
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// Read reads what the other end wrote, waiting for it.
func (c *memConn) Read(b []byte) (int, error) {
	n, err := c.read(b)
	if err != nil && err != io.EOF && err != io.ErrClosedPipe {
		err = &net.OpError{Op: "read", Net: "pipe", Err: err}
	}
	return n, err
}

func (c *memConn) read(b []byte) (int, error) {
	s := c.rd
	for {
		s.mu.Lock()
		switch {
		case s.rclosed:
			s.mu.Unlock()
			return 0, io.ErrClosedPipe
		case s.off < len(s.buf):
			n := copy(b, s.buf[s.off:])
			s.off += n
			if s.off == len(s.buf) {
				s.buf, s.off = s.buf[:0], 0
			} else {
				s.signal() // for another Read waiting
			}
			s.mu.Unlock()
			return n, nil
		case s.wclosed:
			s.mu.Unlock()
			return 0, io.EOF
		}
		by := s.readBy
		if by.IsZero() {
			s.waiting++
			s.mu.Unlock()
			<-s.wake
		} else {
			wait := time.Until(by)
			if wait <= 0 {
				s.mu.Unlock()
				return 0, os.ErrDeadlineExceeded
			}
			s.waiting++
			s.mu.Unlock()
			c.wait(wait)
		}
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}
}

// wait waits for the stream read to change or for d to pass.
func (c *memConn) wait(d time.Duration) {
	c.tmu.Lock()
	t := c.timer
	c.timer = nil
	c.tmu.Unlock()
	if t == nil {
		t = time.NewTimer(d)
	} else {
		t.Reset(d)
	}
	select {
	case <-c.rd.wake:
	case <-t.C:
	}
	t.Stop()
	c.tmu.Lock()
	c.timer = t
	c.tmu.Unlock()
}

// Write copies b for the other end to read; it never waits.
func (c *memConn) Write(b []byte) (int, error) {
	n, err := c.write(b)
	if err != nil && err != io.ErrClosedPipe {
		err = &net.OpError{Op: "write", Net: "pipe", Err: err}
	}
	return n, err
}

func (c *memConn) write(b []byte) (int, error) {
	c.wmu.Lock()
	by := c.writeBy
	c.wmu.Unlock()
	s := c.wr
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.wclosed || s.rclosed:
		return 0, io.ErrClosedPipe
	case !by.IsZero() && !time.Now().Before(by):
		return 0, os.ErrDeadlineExceeded
	}
	s.buf = append(s.buf, b...)
	s.signal()
	return len(b), nil
}

// Close closes this end: its Reads and Writes fail from then on, and the
// other end reads what was written before, then io.EOF.
func (c *memConn) Close() error {
	for _, s := range []*stream{c.rd, c.wr} {
		s.mu.Lock()
		if s == c.rd {
			s.rclosed = true
		} else {
			s.wclosed = true
		}
		s.signal()
		s.mu.Unlock()
	}
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return pipeAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return pipeAddr{} }

// SetDeadline sets both deadlines.
func (c *memConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the time after which a Read (one waiting too)
// fails with os.ErrDeadlineExceeded; the zero time, never.
func (c *memConn) SetReadDeadline(t time.Time) error {
	s := c.rd
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rclosed || s.wclosed {
		return io.ErrClosedPipe
	}
	s.readBy = t
	s.signal()
	return nil
}

// SetWriteDeadline sets the time from which a Write fails with
// os.ErrDeadlineExceeded; the zero time, never.
func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wr.mu.Lock()
	closed := c.wr.wclosed || c.wr.rclosed
	c.wr.mu.Unlock()
	if closed {
		return io.ErrClosedPipe
	}
	c.writeBy = t
	return nil
}
