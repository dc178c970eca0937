package simredis

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"
)

// This file holds the fast paths of a script call: each gives exactly what
// the slower path it stands for gives (fast_test.go compares them), with
// fewer allocations and no fmt or RESP round trip.

// typeNames are type()'s answers, each boxed once: gopher-lua's type
// boxes a new string on every call.
var typeNames = func() []lua.LValue {
	names := make([]lua.LValue, lua.LTChannel+1)
	for t := range names {
		names[t] = lua.LString(lua.LValueType(t).String())
	}
	return names
}()

// luaType is the base library's type, without the allocation.
func luaType(l *lua.LState) int {
	l.Push(typeNames[l.CheckAny(1).Type()])
	return 1
}

// newTonumber is tonumber as the compatibility prelude defines it (what
// gopher-lua's tonumber reads, and a string it cannot read by str2num, the
// prelude's strtod), in Go, so that the common call costs no Lua frame:
// raw is gopher-lua's tonumber, str2num the prelude's function.
func newTonumber(raw lua.LGFunction, str2num *lua.LFunction) lua.LGFunction {
	return func(l *lua.LState) int {
		if l.Get(2) == lua.LNil {
			if s, ok := l.Get(1).(lua.LString); ok {
				raw(l)
				if l.Get(-1) != lua.LNil {
					return 1
				}
				l.Pop(1)
				l.Push(str2num)
				l.Push(s)
				l.Call(1, 1)
				return 1
			}
		}
		return raw(l)
	}
}

// fastFormat is the prelude's string.format for its commonest call, one
// number formatted by "%d", "%i", "%f" or "%.<n>f" (text without a % on
// either side): what gopher-lua's format writes for it, by strconv instead
// of fmt (gopher-lua hands a number to fmt through a Formatter that builds
// a format string again for every argument). It answers nothing (nil) for
// any other call, which the prelude then formats as before.
func fastFormat(l *lua.LState) int {
	if l.GetTop() != 2 {
		l.Push(lua.LNil)
		return 1
	}
	f, ok1 := l.Get(1).(lua.LString)
	x, ok2 := l.Get(2).(lua.LNumber)
	if !ok1 || !ok2 {
		l.Push(lua.LNil)
		return 1
	}
	if s, ok := formatOne(string(f), float64(x)); ok {
		l.Push(lua.LString(s))
		return 1
	}
	l.Push(lua.LNil)
	return 1
}

// formatOne formats x by f when f is text, one conversion %d, %i, %f or
// %.<n>f (n at most 2 digits), and text, with no other %, and x is finite
// (and, for %d and %i, within int64): what fmt.Sprintf(f, lua.LNumber(x))
// writes, as gopher-lua's string.format calls it. ok is false otherwise.
func formatOne(f string, x float64) (string, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "", false
	}
	p := strings.IndexByte(f, '%')
	if p < 0 || p+1 >= len(f) {
		return "", false
	}
	i := p + 1
	prec := -1
	if f[i] == '.' {
		i++
		prec = 0
		for n := 0; i < len(f) && f[i] >= '0' && f[i] <= '9'; n++ {
			if n == 2 {
				return "", false
			}
			prec = prec*10 + int(f[i]-'0')
			i++
		}
	}
	if i >= len(f) || strings.IndexByte(f[i+1:], '%') >= 0 {
		return "", false
	}
	buf := make([]byte, 0, len(f)+24)
	buf = append(buf, f[:p]...)
	switch f[i] {
	case 'f':
		if prec < 0 {
			prec = 6
		}
		buf = strconv.AppendFloat(buf, x, 'f', prec, 64)
	case 'd', 'i':
		// fmt's %.<n>d pads with zeros; not here.
		if prec >= 0 || x >= 1<<63 || x < -(1<<63) {
			return "", false
		}
		buf = strconv.AppendInt(buf, int64(x), 10)
	default:
		return "", false
	}
	buf = append(buf, f[i+1:]...)
	return string(buf), true
}

// numArg is a number given to redis.call as an argument, as
// lua.LNumber.String writes it (fmt.Sprint of the int64 or the float64),
// by strconv for an integer.
func numArg(n lua.LNumber) string {
	if float64(n) == float64(int64(n)) { // gopher-lua's isInteger
		return strconv.FormatInt(int64(n), 10)
	}
	return n.String()
}

// errProtocol is miniredis's server.ErrProtocol's words.
var errProtocol = server.ErrProtocol.Error()

// replyToLua reads the first reply in b, as miniredis's server.ParseReply
// reads it from a reader holding b, and returns it as redisToLua makes it
// a Lua value; or, where ParseReply fails, its error's words and ok false
// (an error reply's words; "EOF" for a reply cut short; "invalid request"
// for what it cannot read, as miniredis names them).
func replyToLua(l *lua.LState, b []byte) (v lua.LValue, msg string, ok bool) {
	v, _, msg, ok = parseReply(l, b, true)
	return v, msg, ok
}

// readLine is bufio.Reader.ReadString('\n') on b: the line with its '\n'
// and what follows, or false (io.EOF) when b has no '\n'.
func readLine(b []byte) (line, rest []byte, ok bool) {
	i := indexByte(b, '\n')
	if i < 0 {
		return nil, nil, false
	}
	return b[:i+1], b[i+1:], true
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// parseReply is one step of replyToLua: a status is a table {ok = ...} at
// the top and a string within an array, as redisToLua has it.
func parseReply(l *lua.LState, b []byte, top bool) (v lua.LValue, rest []byte, msg string, ok bool) {
	line, rest, ok := readLine(b)
	if !ok {
		return nil, nil, "EOF", false
	}
	if len(line) < 3 {
		return nil, nil, errProtocol, false
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		if !top {
			return lua.LString(body), rest, "", true
		}
		t := l.CreateTable(0, 1) // NewTable's room for 32 and 32 costs 3 kB
		t.RawSetString("ok", lua.LString(body))
		return t, rest, "", true
	case '-':
		return nil, nil, string(body), false
	case ':':
		if len(body) == 0 {
			return lua.LNumber(0), rest, "", true
		}
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return nil, nil, errProtocol, false
		}
		return lua.LNumber(n), rest, "", true
	case '$':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return nil, nil, err.Error(), false
		}
		if n < 0 {
			return lua.LFalse, rest, "", true
		}
		if len(rest) < n+2 {
			return nil, nil, "EOF", false
		}
		return lua.LString(rest[:n]), rest[n+2:], "", true
	case '*':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return nil, nil, errProtocol, false
		}
		if n < 0 {
			return lua.LFalse, rest, "", true
		}
		t := l.CreateTable(min(n, len(rest)/3), 0)
		for ; n > 0; n-- {
			var e lua.LValue
			e, rest, msg, ok = parseReply(l, rest, false)
			if !ok {
				return nil, nil, msg, false
			}
			t.Append(e)
		}
		return t, rest, "", true
	}
	return nil, nil, errProtocol, false
}

// errNotPlain stops appendReply at a table with a metatable, whose reading
// may run Lua (an __index): luaToRedis writes that reply.
var errNotPlain = errors.New("simredis: a table with a metatable")

// appendReply appends to buf what luaToRedis writes for v to a peer
// (RESP3 when resp3), for a reply whose tables have no metatable, where
// reading t[j] is rawget: the same bytes in one write, without a closure
// and a format per element.
func appendReply(buf []byte, v lua.LValue, resp3 bool) ([]byte, error) {
	switch t := v.(type) {
	case nil, *lua.LNilType:
		return appendNull(buf, resp3), nil
	case lua.LBool:
		if t {
			return append(buf, ":1\r\n"...), nil
		}
		return appendNull(buf, resp3), nil
	case lua.LNumber:
		buf = append(buf, ':')
		buf = strconv.AppendInt(buf, int64(int(t)), 10)
		return append(buf, "\r\n"...), nil
	case lua.LString:
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(t)), 10)
		buf = append(buf, "\r\n"...)
		buf = append(buf, t...)
		return append(buf, "\r\n"...), nil
	case *lua.LTable:
		if t.Metatable != lua.LNil {
			return buf, errNotPlain
		}
		if s := t.RawGetString("err"); s.Type() != lua.LTNil {
			return appendLine(buf, '-', s.String()), nil
		}
		if s := t.RawGetString("ok"); s.Type() != lua.LTNil {
			return appendLine(buf, '+', s.String()), nil
		}
		n := 0
		for j := 1; rawIndex(t, j).Type() != lua.LTNil; j++ {
			n++
		}
		buf = append(buf, '*')
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, "\r\n"...)
		var err error
		for j := 1; j <= n; j++ {
			if buf, err = appendReply(buf, rawIndex(t, j), resp3); err != nil {
				return buf, err
			}
		}
		return buf, nil
	default:
		return appendLine(buf, '-', "ERR a script cannot return a "+v.Type().String()), nil
	}
}

// rawIndex is t[j] read by rawget.
func rawIndex(t *lua.LTable, j int) lua.LValue {
	if j < lua.MaxArrayIndex {
		return t.RawGetInt(j)
	}
	return t.RawGet(lua.LNumber(j))
}

func appendNull(buf []byte, resp3 bool) []byte {
	if resp3 {
		return append(buf, "_\r\n"...)
	}
	return append(buf, "$-1\r\n"...)
}

// appendLine is miniredis's WriteError (c '-') or WriteInline (c '+'),
// its toInline included.
func appendLine(buf []byte, c byte, s string) []byte {
	buf = append(buf, c)
	buf = append(buf, strings.Map(inlineSpace, s)...)
	return append(buf, "\r\n"...)
}

// inlineSpace is miniredis's toInline's mapping: every space a ' '.
func inlineSpace(r rune) rune {
	if unicode.IsSpace(r) {
		return ' '
	}
	return r
}
