package simredis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSimredisPipeIsAConn: memPipe carries bytes both ways at once, in
// order, whatever the sizes of reads and writes; a close, a deadline and
// their errors are net.Pipe's (a Read after the other end closed reads
// what was written first, then io.EOF); a deadline moved or a close wakes
// a waiting Read.
func TestSimredisPipeIsAConn(t *testing.T) {
	a, b := memPipe()
	r := rand.New(rand.NewPCG(3, 4))
	data := [2][]byte{make([]byte, 1<<20), make([]byte, 1<<20)}
	for i := range data {
		for j := range data[i] {
			data[i][j] = byte(r.Uint32())
		}
	}
	var wg sync.WaitGroup
	got := [2][]byte{}
	for i, c := range []net.Conn{a, b} {
		wg.Add(2)
		go func() { // writes in random pieces
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 9))
			for rest := data[i]; len(rest) > 0; {
				n := min(len(rest), 1+r.IntN(5000))
				if m, err := c.Write(rest[:n]); m != n || err != nil {
					t.Errorf("Write: %d %v", m, err)
					return
				}
				rest = rest[n:]
			}
		}()
		go func() { // reads the other's, in random pieces
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for len(got[i]) < len(data[1-i]) {
				buf := make([]byte, 1+r.IntN(7000))
				n, err := c.Read(buf)
				if err != nil {
					t.Errorf("Read: %v", err)
					return
				}
				got[i] = append(got[i], buf[:n]...)
			}
		}()
	}
	wg.Wait()
	if !bytes.Equal(got[0], data[1]) || !bytes.Equal(got[1], data[0]) {
		t.Fatal("the bytes read are not the bytes written")
	}

	// Deadlines.
	timeout := func(what string, err error) {
		t.Helper()
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("%s: %v, want a timeout", what, err)
		}
	}
	a.SetReadDeadline(time.Now().Add(-time.Second))
	_, err := a.Read(make([]byte, 1))
	timeout("a Read past its deadline", err)
	start := time.Now()
	a.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	_, err = a.Read(make([]byte, 1))
	timeout("a Read that waits past its deadline", err)
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("a Read timed out after %v, before its deadline", waited)
	}
	a.SetWriteDeadline(time.Now().Add(-time.Second))
	_, err = a.Write([]byte("x"))
	timeout("a Write past its deadline", err)
	a.SetDeadline(time.Time{})
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatalf("a Write without a deadline: %v", err)
	}
	buf := make([]byte, 4)
	if n, err := b.Read(buf); n != 1 || err != nil {
		t.Fatalf("Read: %d %v", n, err)
	}
	// A waiting Read sees its deadline lifted, then the bytes.
	b.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	done := make(chan error, 1)
	go func() {
		n, err := b.Read(buf)
		if err == nil && string(buf[:n]) != "late" {
			err = fmt.Errorf("read %q", buf[:n])
		}
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	b.SetReadDeadline(time.Time{})
	time.Sleep(80 * time.Millisecond)
	a.Write([]byte("late"))
	if err := <-done; err != nil {
		t.Fatalf("a Read whose deadline was lifted: %v", err)
	}

	// Closing.
	a.Write([]byte("last"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if n, err := io.ReadFull(b, buf); n != 4 || err != nil || string(buf) != "last" {
		t.Fatalf("after the other end closed: read %q %v, want what it wrote", buf[:n], err)
	}
	if _, err := b.Read(buf); err != io.EOF {
		t.Fatalf("a Read after the other end closed: %v, want io.EOF", err)
	}
	if _, err := b.Write(buf); err != io.ErrClosedPipe {
		t.Fatalf("a Write to a closed end: %v, want io.ErrClosedPipe", err)
	}
	if _, err := a.Read(buf); err != io.ErrClosedPipe {
		t.Fatalf("a Read on a closed end: %v, want io.ErrClosedPipe", err)
	}
	if _, err := a.Write(buf); err != io.ErrClosedPipe {
		t.Fatalf("a Write on a closed end: %v, want io.ErrClosedPipe", err)
	}
	if err := a.SetDeadline(time.Now()); err != io.ErrClosedPipe {
		t.Fatalf("SetDeadline on a closed end: %v", err)
	}
	// A Read waiting is woken by either end closing.
	for _, local := range []bool{true, false} {
		c, d := memPipe()
		c.SetReadDeadline(time.Now().Add(time.Minute))
		done := make(chan error, 1)
		go func() { _, err := c.Read(buf); done <- err }()
		time.Sleep(10 * time.Millisecond)
		want := io.EOF
		if local {
			c.Close()
			want = io.ErrClosedPipe
		} else {
			d.Close()
		}
		if err := <-done; err != want {
			t.Fatalf("a waiting Read, local close %v: %v, want %v", local, err, want)
		}
	}
	if a.LocalAddr().Network() != "pipe" || a.RemoteAddr().String() != "pipe" {
		t.Fatalf("addresses %v %v", a.LocalAddr(), a.RemoteAddr())
	}
}

// TestSimredisDial: a client of Dial runs commands, a pipeline of 2000
// large writes (whose replies come back while it is still writing), a
// blocking command that times out, and fails once the server is closed.
func TestSimredisDial(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Dialer: s.Dial, DisableIdentity: true, MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	if got, err := c.Ping(ctx).Result(); got != "PONG" || err != nil {
		t.Fatalf("PING: %q %v", got, err)
	}
	big := strings.Repeat("v", 4096)
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 2000 {
			p.Set(ctx, fmt.Sprint("k", i), big, 0)
			p.StrLen(ctx, fmt.Sprint("k", i))
		}
		return nil
	})
	if err != nil || len(cmds) != 4000 || cmds[3999].(*redis.IntCmd).Val() != 4096 {
		t.Fatalf("a pipeline of 4000 commands: %d replies, %v", len(cmds), err)
	}
	start := time.Now()
	if err := c.Do(ctx, "BLPOP", "empty", "0.1").Err(); err != redis.Nil {
		t.Fatalf("BLPOP on an empty list: %v, want redis.Nil", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Fatalf("BLPOP returned after %v", waited)
	}
	s.Close()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("PING after Close: no error")
	}
	if _, err := s.Dial(ctx, "", ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("Dial after Close: %v", err)
	}
}
