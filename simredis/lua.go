package simredis

import (
	"bufio"
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"

	luajson "github.com/alicebob/miniredis/v2/gopher-json"
	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// This file runs scripts as miniredis's own EVAL does (the same libraries,
// cjson, redis.* functions, protected globals and reply conversions, read
// from miniredis v2.40.0's lua.go and cmd_scripting.go), but pays once what
// miniredis pays on every call: each script is compiled once per SHA-1
// (compiled), and the Lua states, with their libraries and the
// compatibility prelude, come from a pool (statePool), checked after every
// script for anything it changed that the next could see (luaState.clean).

// compiled is a script compiled once, and what its error replies name
// (its SHA-1 as sent, its number of lines). outer is the prototype of
//
//	function(xpcall, handler, finish) local main = function() <script>
//	end return finish(xpcall(main, handler)) end
//
// the script on its own lines, as a function of no arguments (so `...` is
// what it is in Redis's function), called through xpcall from the line
// after its last, as the prelude's wrapping always did: a position the
// prelude reads below the script (a tail call's) reads as that line.
type compiled struct {
	sha   string
	lines int
	outer *lua.FunctionProto
}

// protos holds every script compiled in the process, by the SHA-1 of the
// script as sent: prototypes are immutable, and shared by every state and
// server. A script that does not compile is not held.
var protos sync.Map // string → *compiled

// compile returns src compiled (fixAssignments applied, wrapped in a
// function so that `...` and the line numbers are what they were in the
// prelude's wrapping), or an error for a script gopher-lua cannot parse or
// that starts with "#!" (script flags, which miniredis does not read): such
// a script is left to miniredis, whose error reply it then gets.
func compile(src string) (*compiled, error) {
	sha := sha1Hex(src)
	if c, ok := protos.Load(sha); ok {
		return c.(*compiled), nil
	}
	if strings.HasPrefix(src, "#!") {
		return nil, fmt.Errorf("simredis: script flags")
	}
	body, err := fixAssignments(src)
	if err != nil {
		return nil, err
	}
	chunk, err := parse.Parse(strings.NewReader(wrapHead+body+wrapTail), "<string>")
	if err != nil {
		return nil, err
	}
	// The name "" makes positions read ":<line>:", as the prelude expects.
	proto, err := lua.Compile(chunk, "")
	if err != nil {
		return nil, err
	}
	if len(proto.FunctionPrototypes) != 1 || proto.FunctionPrototypes[0].NumUpvalues != 0 {
		return nil, fmt.Errorf("simredis: unexpected script shape")
	}
	c := &compiled{sha: sha, lines: strings.Count(src, "\n") + 1, outer: proto.FunctionPrototypes[0]}
	protos.Store(sha, c)
	return c, nil
}

const (
	wrapHead = "return function(__simredis_xpcall, __simredis_handler, __simredis_finish) local __simredis_main = function() "
	wrapTail = "\nend return __simredis_finish(__simredis_xpcall(__simredis_main, __simredis_handler)) end"
)

// statePool holds Lua states ready to run a script. A state is taken for
// one script, under the server's lock, and put back only if clean.
var statePool = sync.Pool{New: func() any { return newLuaState() }}

// luaState is one Lua state, set up as miniredis sets one up for each
// script, with the prelude run, and then sealed (see seal).
type luaState struct {
	l *lua.LState
	// The prelude's functions (see compat.lua), and the base library's
	// xpcall.
	handler, set, finish, xpcall *lua.LFunction
	// setUp are set's upvalues sha, lines, last and lastline, which exec
	// sets as calling set(sha, lines) would, without a call.
	setUp [4]*lua.Upvalue
	// str2num is the prelude's strtod, which tonumber calls (newTonumber).
	str2num *lua.LFunction
	globals *lua.LTable // the real globals, where KEYS and ARGV are set
	facade  *lua.LTable // what scripts see as the globals
	// What clean checks: every facade (empty, with its metatable), every
	// Lua function a script can reach (with its env), and the modules
	// require has loaded (none added after last).
	facades []kept
	funcs   []*lua.LFunction
	loaded  *lua.LTable
	last    lua.LValue

	// Set for each script.
	srv      *server.Server
	ctx      any // the nested connection context of the script's commands
	sha      string
	readOnly bool

	patterns patternCache // string.match's and string.find's

	buf   bytes.Buffer
	w     *bufio.Writer
	reply []byte // the script's reply, encoded (see appendReply)
}

// kept is a facade and its metatable.
type kept struct {
	t, meta *lua.LTable
}

func newLuaState() *luaState {
	st := &luaState{l: lua.NewState(lua.Options{SkipOpenLibs: true})}
	st.w = bufio.NewWriter(&st.buf)
	l := st.l
	for _, lib := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.CoroutineLibName, lua.OpenCoroutine},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.DebugLibName, lua.OpenDebug},
	} {
		must(l.CallByParam(lua.P{Fn: l.NewFunction(lib.f), Protect: true}, lua.LString(lib.n)))
	}
	l.SetGlobal("type", l.NewFunction(luaType))
	st.patterns = patternCache{}
	strlib := l.GetGlobal("string").(*lua.LTable)
	strlib.RawSetString("match", l.NewFunction(st.patterns.strMatch))
	strlib.RawSetString("find", l.NewFunction(st.patterns.strFind))
	rawTonumber := l.GetGlobal("tonumber").(*lua.LFunction).GFunction
	luajson.Preload(l)
	must(l.CallByParam(lua.P{Fn: l.GetGlobal("require"), NRet: 1, Protect: true}, lua.LString("json")))
	l.SetGlobal("cjson", l.Get(-1))
	l.Pop(1)

	mod := l.NewTable()
	for name, fn := range st.redisFuncs() {
		mod.RawSetString(name, l.NewFunction(fn))
	}
	for i, name := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		mod.RawSetString(name, lua.LNumber(i))
	}
	l.SetGlobal("redis", mod)
	l.SetGlobal("server", mod)
	l.RegisterModule("os", map[string]lua.LGFunction{
		// miniredis's os.clock: "an approximation of the CPU time".
		"clock": func(l *lua.LState) int { l.Push(lua.LNumber(42)); return 1 },
	})
	l.Pop(l.GetTop())

	st.xpcall = l.GetGlobal("xpcall").(*lua.LFunction)
	l.Push(load(l, compatLine))
	l.Push(l.NewFunction(fastFormat))
	must(l.PCall(1, 4, nil))
	st.handler, st.set, st.finish = l.Get(1).(*lua.LFunction), l.Get(2).(*lua.LFunction), l.Get(3).(*lua.LFunction)
	st.str2num = l.Get(4).(*lua.LFunction)
	l.Pop(4)
	l.SetGlobal("tonumber", l.NewFunction(newTonumber(rawTonumber, st.str2num)))
	st.setUp = upvaluesOf(st.set, "sha", "lines", "last", "lastline")
	l.Push(load(l, protectGlobals))
	must(l.PCall(0, 0, nil))

	st.seal()
	return st
}

// readOnly is the __newindex of every facade but the globals': Redis 7's
// words for a write to a library table.
const readOnlySrc = "return function() error('Attempt to modify a readonly table', 2) end"

// seal makes every table a script can reach read-only, as Redis 7 does,
// so that no script can leave anything for the next to see. Each table
// reachable from the globals and the string metatable is kept as it is and
// shown to scripts only through a facade: an empty table whose metatable
// (hidden behind __metatable) reads from it and refuses writes. A table
// value is replaced in place by its facade; the globals' facade refuses a
// write with miniredis's words (protectGlobals), the others with Redis's.
// Every function's env becomes the globals' facade, the state's globals
// too. What a script can still change is a facade (by rawset), a Lua
// function's env (by setfenv) and the modules require loaded: clean checks
// each after every script.
func (st *luaState) seal() {
	l := st.l
	st.globals = l.G.Global
	l.Push(load(l, readOnlySrc))
	must(l.PCall(0, 1, nil))
	ro := l.Get(-1)
	l.Pop(1)
	gmeta := st.globals.Metatable.(*lua.LTable)
	facades := map[*lua.LTable]*lua.LTable{}
	var funcs []*lua.LFunction
	var facade func(t *lua.LTable) *lua.LTable
	facade = func(t *lua.LTable) *lua.LTable {
		if f, ok := facades[t]; ok {
			return f
		}
		f, meta := l.CreateTable(0, 0), l.CreateTable(0, 3)
		facades[t] = f
		meta.RawSetString("__index", t)
		if t == st.globals {
			meta.RawSetString("__newindex", gmeta.RawGetString("__newindex"))
		} else {
			meta.RawSetString("__newindex", ro)
		}
		meta.RawSetString("__metatable", lua.LFalse)
		f.Metatable = meta
		st.facades = append(st.facades, kept{f, meta})
		var keys, tables []lua.LValue
		t.ForEach(func(k, v lua.LValue) {
			switch v := v.(type) {
			case *lua.LTable:
				keys, tables = append(keys, k), append(tables, v)
			case *lua.LFunction:
				funcs = append(funcs, v)
			}
		})
		for i, k := range keys {
			t.RawSet(k, facade(tables[i].(*lua.LTable)))
		}
		return f
	}
	st.facade = facade(st.globals)
	smeta := l.GetMetatable(lua.LString("")).(*lua.LTable)
	smeta.RawSetString("__metatable", facade(smeta))
	for _, m := range []*lua.LTable{gmeta} {
		m.ForEach(func(_, v lua.LValue) {
			if f, ok := v.(*lua.LFunction); ok {
				funcs = append(funcs, f)
			}
		})
	}
	funcs = append(funcs, st.handler, st.set, st.finish, ro.(*lua.LFunction))
	for _, f := range funcs {
		f.Env = st.facade
		if !f.IsG {
			st.funcs = append(st.funcs, f)
		}
	}
	l.Env, l.G.Global = st.facade, st.facade
	st.loaded = l.GetField(l.Get(lua.RegistryIndex), "_LOADED").(*lua.LTable)
	st.last = lua.LNil
	for k, _ := st.loaded.Next(lua.LNil); k != lua.LNil; k, _ = st.loaded.Next(k) {
		st.last = k
	}
}

// clean reports whether the state is as seal left it: the same globals,
// every facade empty with its metatable, every Lua function's env the
// globals' facade, no module loaded since. A state that is not is
// dropped, so that no script sees what another left.
func (st *luaState) clean() bool {
	l := st.l
	if l.Env != st.facade || l.G.Global != st.facade || l.GetTop() != 0 {
		return false
	}
	for _, k := range st.facades {
		if k.t.Metatable != lua.LValue(k.meta) {
			return false
		}
		if key, _ := k.t.Next(lua.LNil); key != lua.LNil {
			return false
		}
	}
	for _, f := range st.funcs {
		if f.Env != st.facade {
			return false
		}
	}
	if k, _ := st.loaded.Next(st.last); k != lua.LNil {
		return false
	}
	return true
}

// load compiles src as miniredis compiles a script, named "" (so that a
// position in it reads ":<line>:").
func load(l *lua.LState, src string) *lua.LFunction {
	chunk, err := parse.Parse(strings.NewReader(src), "<string>")
	must(err)
	proto, err := lua.Compile(chunk, "")
	must(err)
	return l.NewFunctionFromProto(proto)
}

func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("simredis: setting up a Lua state: %v", err))
	}
}

// protectGlobals is what miniredis runs in every state, and Redis enforces:
// a script may neither create a global nor read one that does not exist
// (Lua's own C functions may). It also drops debug, which a script has no
// business with. The words are miniredis's, which the prelude's handler
// turns into Redis's.
const protectGlobals = `
local dbg = debug
local mt = {}
setmetatable(_G, mt)
mt.__newindex = function(t, n, v)
  if dbg.getinfo(2) then
    local w = dbg.getinfo(2, "S").what
    if w ~= "C" then
      error("Script attempted to create global variable '" .. tostring(n) .. "'", 2)
    end
  end
  rawset(t, n, v)
end
mt.__index = function(t, n)
  if dbg.getinfo(2) and dbg.getinfo(2, "S").what ~= "C" then
    error("Script attempted to access nonexistent global variable '" .. tostring(n) .. "'", 2)
  end
  return rawget(t, n)
end
debug = nil
`

// exec runs script c with keys and argv, its commands dispatched to srv on
// a connection with context ctx (a nested one: see nestedCtx), and writes
// the reply to out. The caller holds the store's lock. It reports whether
// the state may be used again.
func (st *luaState) exec(out *server.Peer, srv *server.Server, ctx any, c *compiled, readOnly bool, keys, argv []string) (reuse bool) {
	l := st.l
	st.srv, st.ctx, st.sha, st.readOnly = srv, ctx, c.sha, readOnly
	defer func() {
		st.srv, st.ctx = nil, nil
		if r := recover(); r != nil {
			out.WriteError(fmt.Sprintf("ERR Error running script: %v", r))
			reuse = false
		}
	}()
	st.globals.RawSetString("KEYS", strTable(l, keys))
	st.globals.RawSetString("ARGV", strTable(l, argv))
	st.setUp[0].SetValue(lua.LString(c.sha))
	st.setUp[1].SetValue(lua.LNumber(c.lines))
	st.setUp[2].SetValue(lua.LNil)
	st.setUp[3].SetValue(lua.LNil)
	l.Push(l.NewFunctionFromProto(c.outer))
	l.Push(st.xpcall)
	l.Push(st.handler)
	l.Push(st.finish)
	if err := l.PCall(3, 1, nil); err != nil {
		// Only an error the prelude's handler could not turn into a reply
		// gets here (miniredis's words for it).
		out.WriteError(fmt.Sprintf("ERR Error compiling script (new function): %s", err.Error()))
		l.SetTop(0)
		return false
	}
	st.writeReply(l, out, l.Get(-1))
	l.SetTop(0)
	return st.clean()
}

// writeReply writes the script's result v to out as luaToRedis does, in
// one write when its tables have no metatable (appendReply).
func (st *luaState) writeReply(l *lua.LState, out *server.Peer, v lua.LValue) {
	b, err := appendReply(st.reply[:0], v, out.Resp3)
	if err != nil {
		luaToRedis(l, out, v)
		return
	}
	out.WriteRaw(string(b))
	if cap(b) <= 64<<10 {
		st.reply = b
	}
}

// upvaluesOf returns f's upvalues of the given names, in that order,
// panicking when f has no such upvalue (the prelude changed).
func upvaluesOf(f *lua.LFunction, names ...string) (ups [4]*lua.Upvalue) {
	for i, name := range names {
		for j, n := range f.Proto.DbgUpvalues {
			if n == name {
				ups[i] = f.Upvalues[j]
			}
		}
		if ups[i] == nil || !ups[i].IsClosed() {
			panic("simredis: the prelude's set has no closed upvalue " + name)
		}
	}
	return ups
}

func strTable(l *lua.LState, ss []string) *lua.LTable {
	t := l.CreateTable(len(ss), 0)
	for _, s := range ss {
		t.Append(lua.LString(s))
	}
	return t
}

// redisFuncs are the redis.* functions, as miniredis's mkLua makes them,
// dispatching to the server and context of the script being run.
func (st *luaState) redisFuncs() map[string]lua.LGFunction {
	reply := func(l *lua.LState, msg string) *lua.LTable {
		t := l.CreateTable(0, 1) // NewTable's room for 32 and 32 costs 3 kB
		t.RawSetString("err", lua.LString(msg))
		return t
	}
	call := func(failFast bool) lua.LGFunction {
		return func(l *lua.LState) int {
			top := l.GetTop()
			if top == 0 {
				l.Error(lua.LString(fmt.Sprintf("Please specify at least one argument for this redis lib call script: %s, &c.", st.sha)), 1)
				return 0
			}
			args := make([]string, top)
			for i := 1; i <= top; i++ {
				switch a := l.Get(i).(type) {
				case lua.LNumber:
					args[i-1] = numArg(a)
				case lua.LString:
					args[i-1] = string(a)
				default:
					l.Error(lua.LString(fmt.Sprintf("Lua redis lib command arguments must be strings or integers script: %s, &c.", st.sha)), 1)
					return 0
				}
			}
			if st.readOnly && st.srv.IsRegisteredCommand(args[0]) && !st.srv.IsReadOnlyCommand(args[0]) {
				const msg = "Write commands are not allowed in read-only scripts"
				if failFast {
					l.Error(lua.LString(msg), 1)
					return 0
				}
				l.Push(reply(l, msg))
				l.Push(lua.LTrue)
				return 2
			}
			st.buf.Reset()
			p := server.NewPeer(st.w)
			p.Ctx = st.ctx
			st.srv.Dispatch(p, args)
			st.w.Flush()
			res, msg, ok := replyToLua(l, st.buf.Bytes())
			if !ok {
				unknown := strings.Contains(msg, "ERR unknown command")
				if failFast {
					if unknown {
						msg = fmt.Sprintf("Unknown Redis command called from script script: %s, &c.", st.sha)
					}
					l.Error(lua.LString(msg), 1)
					return 0
				}
				if unknown {
					msg = "ERR Unknown Redis command called from script"
				}
				l.Push(reply(l, msg))
				l.Push(lua.LTrue)
				return 2
			}
			l.Push(res)
			return 1
		}
	}
	status := func(l *lua.LState) int {
		msg, ok := l.Get(1).(lua.LString)
		if !ok {
			l.Error(lua.LString("wrong number or type of arguments"), 1)
			return 0
		}
		t := l.CreateTable(0, 1)
		t.RawSetString("ok", msg)
		l.Push(t)
		return 1
	}
	return map[string]lua.LGFunction{
		"call":  call(true),
		"pcall": call(false),
		"error_reply": func(l *lua.LState) int {
			msg, ok := l.Get(1).(lua.LString)
			if !ok {
				l.Error(lua.LString("wrong number or type of arguments"), 1)
				return 0
			}
			code, rest, found := strings.Cut(string(msg), " ")
			code = strings.TrimPrefix(code, "-")
			if found {
				l.Push(reply(l, code+" "+rest))
			} else {
				l.Push(reply(l, "ERR "+code))
			}
			return 1
		},
		"status_reply": status,
		"log": func(l *lua.LState) int {
			l.CheckInt(1)
			l.CheckString(2)
			return 0
		},
		"sha1hex": func(l *lua.LState) int {
			if l.GetTop() != 1 {
				l.Error(lua.LString("wrong number of arguments"), 1)
				return 0
			}
			l.Push(lua.LString(sha1Hex(lua.LVAsString(l.Get(1)))))
			return 1
		},
		"replicate_commands": func(l *lua.LState) int {
			l.Push(lua.LTrue)
			return 1
		},
		"set_repl": func(l *lua.LState) int {
			if l.GetTop() != 1 {
				l.Error(lua.LString("wrong number of arguments"), 1)
				return 0
			}
			return 1
		},
		// miniredis accepts 2 and 3 and changes nothing a script sees.
		"setresp": func(l *lua.LState) int {
			if n := l.CheckInt(1); n != 2 && n != 3 {
				l.Error(lua.LString("RESP version must be 2 or 3"), 1)
			}
			return 0
		},
	}
}

// luaToRedis writes a script's result as miniredis does: a number as an
// integer, true as 1, false and nil as a null, a table with err or ok as
// an error or a status, any other table as an array up to its first nil.
func luaToRedis(l *lua.LState, c *server.Peer, v lua.LValue) {
	switch t := v.(type) {
	case nil, *lua.LNilType:
		c.WriteNull()
	case lua.LBool:
		if t {
			c.WriteInt(1)
		} else {
			c.WriteNull()
		}
	case lua.LNumber:
		c.WriteInt(int(t))
	case lua.LString:
		c.WriteBulk(string(t))
	case *lua.LTable:
		if s := t.RawGetString("err"); s.Type() != lua.LTNil {
			c.WriteError(s.String())
			return
		}
		if s := t.RawGetString("ok"); s.Type() != lua.LTNil {
			c.WriteInline(s.String())
			return
		}
		var vals []lua.LValue
		for j := 1; ; j++ {
			e := l.GetTable(t, lua.LNumber(j))
			if e.Type() == lua.LTNil {
				break
			}
			vals = append(vals, e)
		}
		c.WriteLen(len(vals))
		for _, e := range vals {
			luaToRedis(l, c, e)
		}
	default:
		// miniredis panics here ("wat"); a function or a coroutine
		// returned is an error reply instead.
		c.WriteError(fmt.Sprintf("ERR a script cannot return a %s", v.Type()))
	}
}

// The nested connection context: miniredis runs a script's commands on a
// connection whose context (its unexported connCtx) says "nested", so that
// they take no lock (the script holds it), never queue in a MULTI, and
// refuse what Redis refuses from a script; it carries the database the
// client had selected. Only miniredis can make one, so one is captured per
// database from miniredis's own EVAL (captureSrc calling captureCmd), and
// copied for each script (a script's SELECT changes its copy only).
const (
	captureCmd = "SIMREDIS.CAPTURE"
	captureSrc = "return redis.call('" + captureCmd + "')"
	execCmd    = "SIMREDIS.EXEC"
	// trampolineSrc runs a script command queued in a MULTI: miniredis
	// queues this EVAL and runs it at EXEC, under its lock, where it hands
	// the command to execCmd on its nested connection.
	trampolineSrc = "return redis.pcall('" + execCmd + "', unpack(ARGV))"
)

var nested struct {
	mu       sync.Mutex
	byDB     map[int]any
	typ      reflect.Type
	db, nest int // field indexes of selectedDB and nested
	// capturing is the context captureCmd saw, during a capture.
	capturing chan any
}

// nestedCtx returns a fresh nested context for database db, capturing one
// on srv (whose lock must not be held) the first time db is asked for.
func nestedCtx(srv *server.Server, db int) any {
	nested.mu.Lock()
	defer nested.mu.Unlock()
	t, ok := nested.byDB[db]
	if !ok {
		ch := make(chan any, 1)
		nested.capturing = ch
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		p := server.NewPeer(w)
		srv.Dispatch(p, []string{"SELECT", fmt.Sprint(db)})
		srv.Dispatch(p, []string{"EVAL", captureSrc, "0"})
		w.Flush()
		nested.capturing = nil
		select {
		case t = <-ch:
		default:
			panic(fmt.Sprintf("simredis: no nested context captured for database %d: %q", db, buf.String()))
		}
		if nested.byDB == nil {
			nested.byDB = map[int]any{}
			nested.typ = reflect.TypeOf(t)
			f1, ok1 := nested.typ.Elem().FieldByName("selectedDB")
			f2, ok2 := nested.typ.Elem().FieldByName("nested")
			if !ok1 || !ok2 || f1.Type.Kind() != reflect.Int || f2.Type.Kind() != reflect.Bool {
				panic("simredis: miniredis's connection context has no selectedDB or nested")
			}
			nested.db, nested.nest = f1.Index[0], f2.Index[0]
		}
		nested.byDB[db] = t
	}
	v := reflect.ValueOf(t)
	c := reflect.New(v.Type().Elem())
	c.Elem().Set(v.Elem())
	return c.Interface()
}

// capture is captureCmd: it hands over the context of the script's
// connection during a capture, and is unknown otherwise.
func capture(c *server.Peer, cmd string, args []string) {
	if ch := nested.capturing; ch != nil && c.Ctx != nil && reflect.TypeOf(c.Ctx).Kind() == reflect.Pointer {
		select {
		case ch <- c.Ctx:
		default:
		}
		c.WriteOK()
		return
	}
	c.WriteError(fmt.Sprintf("ERR unknown command '%s'", cmd))
}

// ctxOf is the database a client has selected and whether it is a
// script's connection (read from miniredis's context; a client that has
// sent nothing that made one has database 0).
func ctxOf(c *server.Peer) (db int, isNested bool) {
	if c.Ctx == nil {
		return 0, false
	}
	v := reflect.ValueOf(c.Ctx)
	if nested.typ == nil || v.Type() != nested.typ {
		return 0, false
	}
	v = v.Elem()
	return int(v.Field(nested.db).Int()), v.Field(nested.nest).Bool()
}
