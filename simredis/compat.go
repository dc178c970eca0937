package simredis

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// compatLua is the Lua 5.1 compatibility prelude, run once in each Lua
// state (see lua.go).
//
//go:embed compat.lua
var compatLua string

// compatLine is compatLua without its comment lines, joined into one line.
var compatLine = func() string {
	var parts []string
	for _, l := range strings.Split(compatLua, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--") {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}()

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// scriptShim is the command hook that answers the script commands (EVAL,
// EVALSHA, their _RO forms, SCRIPT LOAD, EXISTS and FLUSH) in place of
// miniredis, with compiled scripts and pooled Lua states (lua.go), and
// fixes TTL and EXPIRETIME. A script runs under miniredis's lock, so that
// no other command interleaves it, as in Redis. What it leaves to
// miniredis, for miniredis's own reply: a command with the wrong number of
// arguments, a script that does not compile, and any script command from
// inside a script (refused). In a MULTI a script command is queued as a
// miniredis EVAL of trampolineSrc, which runs it at EXEC. Every other
// command goes to miniredis untouched.
type scriptShim struct {
	m   *miniredis.Miniredis
	srv *server.Server
	mu  sync.Mutex
	// multi holds the clients between MULTI and EXEC or DISCARD, whose
	// commands are queued, so that the hook neither rounds a TTL nor runs
	// a script then.
	multi map[*server.Peer]bool
	// loaded are the scripts this server knows (EVAL or SCRIPT LOAD since
	// the last flush), by the SHA-1 of the script as sent.
	loaded map[string]*compiled
}

func newScriptShim(m *miniredis.Miniredis) *scriptShim {
	sh := &scriptShim{m: m, srv: m.Server(), loaded: map[string]*compiled{}, multi: map[*server.Peer]bool{}}
	must(sh.srv.Register(captureCmd, capture))
	must(sh.srv.Register(execCmd, sh.execQueued))
	nestedCtx(sh.srv, 0) // learns miniredis's context type before any client
	return sh
}

// hook is the server's pre-hook: it runs before every command, from a
// client or from a script, and returns true when it has answered itself.
func (sh *scriptShim) hook(c *server.Peer, cmd string, args ...string) bool {
	switch cmd {
	case "MULTI":
		sh.mu.Lock()
		if !sh.multi[c] {
			sh.multi[c] = true
			c.OnDisconnect(func() {
				sh.mu.Lock()
				delete(sh.multi, c)
				sh.mu.Unlock()
			})
		}
		sh.mu.Unlock()
	case "EXEC", "DISCARD":
		sh.mu.Lock()
		delete(sh.multi, c)
		sh.mu.Unlock()
	case "TTL", "EXPIRETIME":
		// miniredis truncates a TTL to the second, and EXPIRETIME too;
		// Redis rounds both, (ms+500)/1000. Ask for the ms and round.
		if len(args) != 1 || sh.queued(c) {
			return false
		}
		ms := map[string]string{"TTL": "PTTL", "EXPIRETIME": "PEXPIRETIME"}[cmd]
		reply := sh.side(c, ms, args[0])
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"), 10, 64)
		if !strings.HasPrefix(reply, ":") || err != nil {
			c.WriteRaw(reply)
			return true
		}
		if n >= 0 {
			n = (n + 500) / 1000
		}
		c.WriteInt(int(n))
		return true
	case "EVAL", "EVAL_RO", "EVALSHA", "EVALSHA_RO", "SCRIPT":
		if !sh.ours(cmd, args) {
			return false
		}
		db, isNested := ctxOf(c)
		if isNested {
			return false // miniredis refuses it, in Redis's words
		}
		if sh.queued(c) {
			sh.srv.Dispatch(c, append([]string{"EVAL", trampolineSrc, "0", cmd}, args...))
			return true
		}
		ctx := nestedCtx(sh.srv, db)
		sh.m.Lock()
		defer sh.m.Unlock()
		return sh.exec(c, ctx, cmd, args)
	}
	return false
}

func (sh *scriptShim) queued(c *server.Peer) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.multi[c]
}

// ours reports whether the hook answers a script command: one with the
// arguments it needs, whose script (for EVAL and SCRIPT LOAD) compiles.
func (sh *scriptShim) ours(cmd string, args []string) bool {
	if cmd != "SCRIPT" {
		if len(args) < 2 || args[0] == captureSrc || args[0] == trampolineSrc {
			return false
		}
		if cmd == "EVAL" || cmd == "EVAL_RO" {
			_, err := compile(args[0])
			return err == nil
		}
		return true
	}
	if len(args) == 0 {
		return false
	}
	switch strings.ToUpper(args[0]) {
	case "LOAD":
		if len(args) != 2 {
			return false
		}
		_, err := compile(args[1])
		return err == nil
	case "EXISTS":
		return len(args) > 1
	case "FLUSH":
		return len(args) == 1 || len(args) == 2 && (strings.EqualFold(args[1], "SYNC") || strings.EqualFold(args[1], "ASYNC"))
	}
	return false
}

// execQueued is execCmd, which trampolineSrc calls at EXEC with a script
// command queued in a MULTI: it runs under miniredis's lock already, on a
// script's connection.
func (sh *scriptShim) execQueued(c *server.Peer, _ string, args []string) {
	if _, isNested := ctxOf(c); !isNested || len(args) == 0 {
		c.WriteError(fmt.Sprintf("ERR unknown command '%s'", execCmd))
		return
	}
	sh.exec(c, c.Ctx, strings.ToUpper(args[0]), args[1:])
}

// exec answers a script command that ours accepted, on c, the script's
// commands running with context ctx. The caller holds miniredis's lock.
func (sh *scriptShim) exec(c *server.Peer, ctx any, cmd string, args []string) bool {
	if cmd == "SCRIPT" {
		switch strings.ToUpper(args[0]) {
		case "LOAD":
			s, err := compile(args[1])
			if err != nil { // only from a trampoline
				c.WriteError(fmt.Sprintf("ERR Error compiling script (new function): %v", err))
				return true
			}
			sh.mu.Lock()
			sh.loaded[s.sha] = s
			sh.mu.Unlock()
			c.WriteBulk(s.sha)
		case "EXISTS":
			sh.mu.Lock()
			c.WriteLen(len(args) - 1)
			for _, sha := range args[1:] {
				if sh.loaded[strings.ToLower(sha)] != nil {
					c.WriteInt(1)
				} else {
					c.WriteInt(0)
				}
			}
			sh.mu.Unlock()
		case "FLUSH":
			sh.flush()
			c.WriteOK()
		}
		return true
	}
	numkeys, err := strconv.Atoi(args[1])
	switch {
	case err != nil:
		c.WriteError("ERR value is not an integer or out of range")
		return true
	case numkeys > len(args)-2:
		c.WriteError("ERR Number of keys can't be greater than number of args")
		return true
	case numkeys < 0:
		c.WriteError("ERR Number of keys can't be negative")
		return true
	}
	var s *compiled
	if cmd == "EVAL" || cmd == "EVAL_RO" {
		if s, err = compile(args[0]); err != nil { // only from a trampoline
			c.WriteError(fmt.Sprintf("ERR Error compiling script (new function): %v", err))
			return true
		}
		sh.mu.Lock()
		sh.loaded[s.sha] = s
		sh.mu.Unlock()
	} else {
		sh.mu.Lock()
		s = sh.loaded[strings.ToLower(args[0])]
		sh.mu.Unlock()
		if s == nil {
			c.WriteError("NOSCRIPT No matching script. Please use EVAL.")
			return true
		}
	}
	st := statePool.Get().(*luaState)
	if st.exec(c, sh.srv, ctx, s, strings.HasSuffix(cmd, "_RO"), args[2:2+numkeys], args[2+numkeys:]) {
		statePool.Put(st)
	} else {
		st.l.Close()
	}
	return true
}

// side runs a command for c on a side connection that shares c's state
// (its database, its MULTI, whether it is a script's), and returns the raw
// reply instead of sending it.
func (sh *scriptShim) side(c *server.Peer, args ...string) string {
	var buf bytes.Buffer
	p := server.NewPeer(bufio.NewWriter(&buf))
	p.Ctx, p.Resp3 = c.Ctx, c.Resp3
	sh.srv.Dispatch(p, args)
	p.Flush()
	return buf.String()
}

// flush forgets every script, as SCRIPT FLUSH does.
func (sh *scriptShim) flush() {
	sh.mu.Lock()
	sh.loaded = map[string]*compiled{}
	sh.mu.Unlock()
}
