package simredis

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2/server"
)

// compatLua is the Lua 5.1 compatibility prelude (see wrapScript).
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

// wrapMark starts every wrapped script, so that a wrapped script handed back
// to the command table is not wrapped twice.
const wrapMark = "local __simredis_wrapped = 1 "

const wrapEnd = "\nend local __simredis_ok, __simredis_res = xpcall(__simredis_main, __simredis_handler) " +
	"if __simredis_ok then return __simredis_res end return redis.error_reply(__simredis_res)"

// wrapScript returns the script miniredis runs for src: the compatibility
// prelude and src (printed again by fixAssignments when it has a multiple
// assignment), wrapped in a function called through xpcall, so that an
// error it raises becomes the error reply Redis 7 gives ("<error> script:
// <SHA-1 of src>, on @user_script:<line>."), all on src's own lines (the
// prelude and the head of the function are on line 1, before src's line
// 1). A script that starts with "#!" (a shebang, which Redis reads as
// script flags), or that gopher-lua cannot parse, is left as it is.
//
// What the prelude changes, inside the script only (miniredis runs every
// script in a fresh Lua state): tostring, string.format and table.concat
// write numbers as Lua 5.1 does in Redis ("%.14g": 1700000000123456 is
// "1.7000000001235e+15", 1/0 is "inf"); string.format also gives %g its
// default precision of 6, %q Lua's quoting, %x of a negative number its
// 64-bit two's complement, and a missing argument an error; tonumber reads
// every decimal string strtod reads (gopher-lua's returns nil for "1e+08",
// which miniredis writes for a score of 100 s in µs); redis.call raises a
// failed command's error as Redis does, without a position, and with
// Redis's words for a wrong number of arguments and an unknown command.
func wrapScript(src string) string {
	if strings.HasPrefix(src, "#!") || strings.HasPrefix(src, wrapMark) {
		return src
	}
	body, err := fixAssignments(src)
	if err != nil {
		return src // miniredis's own compile error, about the script as sent
	}
	prelude := strings.NewReplacer("__SHA__", sha1Hex(src), "__LINES__", strconv.Itoa(strings.Count(src, "\n")+1)).Replace(compatLine)
	return wrapMark + prelude +
		" local __simredis_main = function() " + body + wrapEnd
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// scriptShim is the command hook that puts wrapScript between the clients
// and miniredis's script commands: EVAL runs the wrapped script, SCRIPT LOAD
// loads it and answers the SHA-1 of the script as sent, EVALSHA and SCRIPT
// EXISTS take that SHA-1 for the wrapped script's. Every other command goes
// to miniredis untouched.
type scriptShim struct {
	srv *server.Server
	mu  sync.Mutex
	// multi holds the clients between MULTI and EXEC or DISCARD, whose
	// TTL and EXPIRETIME are queued, so that the hook cannot round them.
	multi map[*server.Peer]bool
	// wrapped maps the SHA-1 of each script seen as sent to the SHA-1 of
	// its wrapped form, the one miniredis caches. An entry outlives SCRIPT
	// FLUSH harmlessly: miniredis no longer has the wrapped script either.
	wrapped map[string]string
	// sources maps the same SHA-1 to the wrapped script itself.
	sources map[string]string
}

func newScriptShim(srv *server.Server) *scriptShim {
	return &scriptShim{srv: srv, wrapped: map[string]string{}, sources: map[string]string{}, multi: map[*server.Peer]bool{}}
}

// remember returns the wrapped form of src, and maps src's SHA-1 to it.
// Each script is wrapped (parsed, and printed again if it must be) once.
func (sh *scriptShim) remember(src string) string {
	sha := sha1Hex(src)
	sh.mu.Lock()
	w, ok := sh.sources[sha]
	sh.mu.Unlock()
	if !ok {
		w = wrapScript(src)
	}
	sh.mu.Lock()
	sh.sources[sha] = w
	sh.wrapped[sha] = sha1Hex(w)
	sh.mu.Unlock()
	return w
}

func (sh *scriptShim) lookup(sha string) string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if w, ok := sh.wrapped[strings.ToLower(sha)]; ok {
		return w
	}
	return sha
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
		sh.mu.Lock()
		queued := sh.multi[c]
		sh.mu.Unlock()
		if len(args) != 1 || queued {
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
	case "EVAL", "EVAL_RO":
		if len(args) == 0 || strings.HasPrefix(args[0], wrapMark) {
			return false
		}
		w := sh.remember(args[0])
		if w == args[0] {
			return false
		}
		sh.srv.Dispatch(c, append([]string{cmd, w}, args[1:]...))
		return true
	case "EVALSHA", "EVALSHA_RO":
		if len(args) == 0 {
			return false
		}
		w := sh.lookup(args[0])
		if w == args[0] {
			return false
		}
		sh.srv.Dispatch(c, append([]string{cmd, w}, args[1:]...))
		return true
	case "SCRIPT":
		if len(args) == 0 {
			return false
		}
		switch strings.ToUpper(args[0]) {
		case "LOAD":
			if len(args) != 2 || strings.HasPrefix(args[1], wrapMark) {
				return false
			}
			w := sh.remember(args[1])
			// Load the wrapped script on a side peer, and answer the
			// SHA-1 of the script as sent when miniredis answers that of
			// the wrapped one; anything else (an error, QUEUED) as is.
			wsha := sha1Hex(w)
			if reply := sh.side(c, "SCRIPT", "LOAD", w); reply == bulk(wsha) {
				c.WriteBulk(sha1Hex(args[1]))
			} else {
				c.WriteRaw(reply)
			}
			return true
		case "EXISTS":
			out, changed := []string{"SCRIPT", args[0]}, false
			for _, sha := range args[1:] {
				w := sh.lookup(sha)
				changed = changed || w != sha
				out = append(out, w)
			}
			if !changed {
				return false
			}
			sh.srv.Dispatch(c, out)
			return true
		}
	}
	return false
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

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// flush empties miniredis's script cache, as SCRIPT FLUSH does.
func (sh *scriptShim) flush() {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	sh.srv.Dispatch(server.NewPeer(bw), []string{"SCRIPT", "FLUSH"})
	sh.mu.Lock()
	sh.wrapped = map[string]string{}
	sh.mu.Unlock()
}
