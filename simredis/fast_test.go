package simredis

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// The fast paths of fast.go, each held to the slower path it stands for,
// in process, on edge cases and seeded random ones.

// edgeNumbers are the numbers every fast path is tried on.
var edgeNumbers = []float64{
	0, math.Copysign(0, -1), 0.1, 0.5, 1.5, 2.5, -2.5, 0.125, 1.0 / 3, 2.0 / 3, -1.0 / 3,
	1, -1, 7, 1e14, 1e15, 1e15 + 0.5, 1e16, 1e17, 1e21, 1e22, 1e300, -1e300,
	1 << 53, 1<<53 + 2, -(1 << 53), 1700000000123456, 1700000000123456.5,
	9223372036854774784, -9223372036854775808, 9223372036854775808, -9223372036854777856,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-7, 5e-5, 123456789.987654321,
	math.NaN(), math.Inf(1), math.Inf(-1),
}

// randomNumbers are n seeded numbers: any bit pattern, and integers and
// halves such as scripts compute.
func randomNumbers(n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]float64, 0, n)
	for i := range n {
		switch i % 3 {
		case 0:
			out = append(out, math.Float64frombits(r.Uint64()))
		case 1:
			out = append(out, float64(r.Int64N(1<<60)-1<<59))
		default:
			out = append(out, float64(r.Int64N(1<<40))/2-1<<38)
		}
	}
	return out
}

// simplePattern is the prelude's test for a format it hands to gopher-lua
// as it is (compat.lua, simple).
const simplePattern = "^[^%%]*%%[-+ #0]*%d*%.?%d*[dfi][^%%]*$"

// TestSimredisFastFormat: for every format and number formatOne accepts,
// it writes what gopher-lua's string.format writes (fmt.Sprintf of a
// lua.LNumber), and the format is one the prelude would have handed to
// gopher-lua as it is; it declines the rest (flags, widths, a precision of
// 3 digits, %d's precision, other conversions, a second %, NaN and
// infinities, %d beyond int64), which the prelude then formats as before.
func TestSimredisFastFormat(t *testing.T) {
	var formats []string
	for _, pre := range []string{"", "a", "x:", "%%", "é"} {
		for _, conv := range []string{"%d", "%i", "%f", "%.f", "%.0f", "%.00f", "%.1f", "%.2f", "%.6f", "%.14f", "%.17f", "%.20f", "%.99f",
			"%.100f", "%5d", "%-d", "%+.0f", "%05.1f", "% d", "%#f", "%.2d", "%g", "%x", "%s", "%", "%.", "%.1", "d"} {
			for _, post := range []string{"", "b", " ms", ":%d", "%"} {
				formats = append(formats, pre+conv+post)
			}
		}
	}
	nums := append(append([]float64{}, edgeNumbers...), randomNumbers(1000)...)
	accepted, declined := 0, 0
	for _, f := range formats {
		mds, err := pm.Find(simplePattern, []byte(f), 0, 1)
		simple := err == nil && len(mds) == 1
		for _, x := range nums {
			got, ok := formatOne(f, x)
			if !ok {
				declined++
				continue
			}
			accepted++
			if !simple {
				t.Fatalf("formatOne accepts %q, which the prelude does not hand to gopher-lua as it is", f)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("formatOne accepts %q of %v", f, x)
			}
			if want := fmt.Sprintf(f, lua.LNumber(x)); got != want {
				t.Fatalf("formatOne(%q, %v) = %q, gopher-lua writes %q", f, x, got, want)
			}
		}
	}
	for _, f := range []string{"%.0f", "%d", "%f", "%.2f:", "t=%i"} {
		if _, ok := formatOne(f, 1.5); !ok {
			t.Fatalf("formatOne declines %q", f)
		}
	}
	t.Logf("measured: %d formats × %d numbers: %d formatted as gopher-lua does, %d declined", len(formats), len(nums), accepted, declined)
}

// TestSimredisFastNumArg: a number given to redis.call becomes the
// argument lua.LNumber.String writes.
func TestSimredisFastNumArg(t *testing.T) {
	nums := append(append([]float64{}, edgeNumbers...), randomNumbers(3000)...)
	for _, x := range nums {
		if got, want := numArg(lua.LNumber(x)), lua.LNumber(x).String(); got != want {
			t.Fatalf("numArg(%v) = %q, LNumber.String %q", x, got, want)
		}
	}
}

// redisToLua is what a command's reply became for a script before
// replyToLua, on what miniredis's server.ParseReply reads: a nil is false,
// a status {ok = ...}, and a string within an array.
func redisToLua(l *lua.LState, res any) lua.LValue {
	switch r := res.(type) {
	case nil:
		return lua.LFalse
	case int:
		return lua.LNumber(r)
	case string:
		return lua.LString(r)
	case server.Simple:
		t := l.NewTable()
		t.RawSetString("ok", lua.LString(r))
		return t
	case []any:
		t := l.CreateTable(len(r), 0)
		for _, e := range r {
			if s, ok := e.(server.Simple); ok {
				t.Append(lua.LString(s))
				continue
			}
			t.Append(redisToLua(l, e))
		}
		return t
	}
	panic(fmt.Sprintf("reply of type %T", res))
}

// dump writes a Lua value, a table as its array part and its string keys.
func dump(v lua.LValue) string {
	t, ok := v.(*lua.LTable)
	if !ok {
		return fmt.Sprintf("%s(%s)", v.Type(), v)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := 1; i <= t.Len(); i++ {
		fmt.Fprintf(&b, "%s,", dump(t.RawGetInt(i)))
	}
	t.ForEach(func(k, e lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			fmt.Fprintf(&b, "%s=%s,", s, dump(e))
		}
	})
	return b.String() + "}"
}

// TestSimredisFastReply: replyToLua reads every reply, and every malformed
// one, as server.ParseReply then redisToLua did: the same Lua value, or
// the same error words.
func TestSimredisFastReply(t *testing.T) {
	l := lua.NewState()
	defer l.Close()
	inputs := []string{
		"+OK\r\n", "+\r\n", "+two words\r\n", "-ERR bad thing\r\n", "-\r\n", ":42\r\n", ":-7\r\n", ":\r\n", ":x\r\n", ":1.5\r\n",
		":9223372036854775807\r\n", ":99999999999999999999\r\n", "$3\r\nabc\r\n", "$0\r\n\r\n", "$-1\r\n", "$-5\r\n", "$x\r\n",
		"$5\r\nab\r\n", "$3\r\nabcXY", "$3\r\nab", "$4\r\na\r\nb\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "*-1\r\n", "*0\r\n",
		"*3\r\n+OK\r\n$-1\r\n*1\r\n+in\r\n", "*2\r\n*-1\r\n:3\r\n", "*2\r\n:1\r\n-ERR x\r\n", "*x\r\n", "*3\r\n:1\r\n",
		"*2\r\n*2\r\n:1\r\n*1\r\n$1\r\nz\r\n+s\r\n", "", "\r\n", "+", "ab\n", "+OK\n", "_\r\n", "%1\r\n:1\r\n:2\r\n",
		",1.5\r\n", "#t\r\n", "+OK\r\n+extra\r\n", "*1\r\n+OK\r\n", "*1\r\n", "$1\r\n\xff\r\n",
	}
	for _, in := range inputs {
		var want string
		res, err := server.ParseReply(bufio.NewReader(strings.NewReader(in)))
		if err != nil {
			want = "error " + err.Error()
		} else {
			want = dump(redisToLua(l, res))
		}
		var got string
		v, msg, ok := replyToLua(l, []byte(in))
		if !ok {
			got = "error " + msg
		} else {
			got = dump(v)
		}
		if got != want {
			t.Errorf("%q: replyToLua gives %s, ParseReply and redisToLua %s", in, got, want)
		}
	}
	t.Logf("measured: %d replies read as ParseReply reads them", len(inputs))
}

// TestSimredisFastScriptReply: appendReply writes a script's result as
// luaToRedis writes it to a peer, byte for byte, in RESP2 and RESP3, and
// declines a reply with a table that has a metatable, which writeReply
// then leaves to luaToRedis (the same bytes again).
func TestSimredisFastScriptReply(t *testing.T) {
	l := lua.NewState()
	defer l.Close()
	if err := l.DoString(`
		local mt = setmetatable({}, {__index = function(_, i) if i < 3 then return i * 10 end end})
		values = {
			nil, true, false, 3, 2.9, -2.9, 1e300, -0.5, 'a\r\nb', '', '\255 bad',
			{err = 'E x\ny'}, {ok = 'fine\tok'}, {err = 5}, {ok = 'a', err = 'b'}, {err = '\255\r'},
			{1, 'a', {2, {}}, true, false}, {1, nil, 3}, {'x', err = 'in'}, {{ok = 'nested'}, {err = 'inner'}},
			print, coroutine.create(function() end),
		}
		plainN = 22
		declined = {mt, {1, mt}, {{{mt}}}}
	`); err != nil {
		t.Fatal(err)
	}
	values, declined := l.GetGlobal("values").(*lua.LTable), l.GetGlobal("declined").(*lua.LTable)
	viaPeer := func(resp3 bool, write func(*server.Peer)) string {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		p := server.NewPeer(w)
		p.Resp3 = resp3
		write(p)
		w.Flush()
		return b.String()
	}
	st := &luaState{}
	n := 0
	for i := 1; i <= int(lua.LVAsNumber(l.GetGlobal("plainN"))); i++ {
		v := values.RawGetInt(i)
		for _, resp3 := range []bool{false, true} {
			want := viaPeer(resp3, func(p *server.Peer) { luaToRedis(l, p, v) })
			got, err := appendReply(nil, v, resp3)
			if err != nil || string(got) != want {
				t.Errorf("value %d (%s), RESP3 %v: appendReply %q %v, luaToRedis %q", i, dump(v), resp3, got, err, want)
			}
			if again := viaPeer(resp3, func(p *server.Peer) { st.writeReply(l, p, v) }); again != want {
				t.Errorf("value %d: writeReply %q, luaToRedis %q", i, again, want)
			}
			n++
		}
	}
	for i := 1; i <= declined.Len(); i++ {
		v := declined.RawGetInt(i)
		if _, err := appendReply(nil, v, false); err != errNotPlain {
			t.Errorf("declined value %d: appendReply did not decline (%v)", i, err)
		}
		want := viaPeer(false, func(p *server.Peer) { luaToRedis(l, p, v) })
		if got := viaPeer(false, func(p *server.Peer) { st.writeReply(l, p, v) }); got != want {
			t.Errorf("declined value %d: writeReply %q, luaToRedis %q", i, got, want)
		}
	}
	t.Logf("measured: %d replies written as luaToRedis writes them, %d left to it", n, declined.Len())
}

// oldTonumber is the prelude's tonumber before newTonumber, in Lua.
const oldTonumber = `local rawtonumber, str2num = ...
return function(...)
  local v, base = ...
  if base ~= nil or type(v) ~= 'string' then return rawtonumber(...) end
  local n = rawtonumber(v)
  if n ~= nil then return n end
  return str2num(v)
end`

// TestSimredisFastTonumberAndType: tonumber answers what the prelude's Lua
// tonumber answered, for strings gopher-lua reads, strings only the
// prelude reads, bases, numbers and other values; the errors (no argument,
// a base that is not a number) are errors still, now naming tonumber
// (Redis's name) where they named rawtonumber. type answers what gopher-lua's
// answers.
func TestSimredisFastTonumberAndType(t *testing.T) {
	st := newLuaState()
	defer st.l.Close()
	l := st.l
	raw := lua.NewState()
	defer raw.Close()
	l.Push(load(l, oldTonumber))
	l.Push(l.NewFunction(raw.GetGlobal("tonumber").(*lua.LFunction).GFunction))
	l.Push(st.str2num)
	if err := l.PCall(2, 1, nil); err != nil {
		t.Fatal(err)
	}
	old := l.Get(-1).(*lua.LFunction)
	l.Pop(1)
	now := l.GetGlobal("tonumber").(*lua.LFunction)
	call := func(f *lua.LFunction, args []lua.LValue) string {
		l.Push(f)
		for _, a := range args {
			l.Push(a)
		}
		if err := l.PCall(len(args), lua.MultRet, nil); err != nil {
			l.SetTop(0)
			return "error"
		}
		var out []string
		for i := 1; i <= l.GetTop(); i++ {
			v := l.Get(i)
			if n, ok := v.(lua.LNumber); ok && math.IsNaN(float64(n)) {
				out = append(out, "nan") // NaN's sign aside
				continue
			}
			out = append(out, dump(v))
		}
		l.SetTop(0)
		return strings.Join(out, " ")
	}
	var cases [][]lua.LValue
	for _, s := range []string{"10", " 10 ", "\t-3\n", "0x1A", "0X1a", "-0x10", "1e5", "1e+08", "1.7e+15", "5.", ".5", "-.5", "1e400", "-1e400",
		"1e-400", "inf", "-Infinity", "nan", "NaN", "abc", "", " ", "0x", "1 2", "5e", "99999999999999999999", "9007199254740993",
		"1700000000123456", "+5", "--5", "0b101", "1_000", "١"} {
		cases = append(cases, []lua.LValue{lua.LString(s)}, []lua.LValue{lua.LString(s), lua.LNil})
	}
	for _, x := range edgeNumbers {
		cases = append(cases, []lua.LValue{lua.LNumber(x)})
	}
	cases = append(cases,
		[]lua.LValue{lua.LString("ff"), lua.LNumber(16)}, []lua.LValue{lua.LString("10"), lua.LNumber(2)}, []lua.LValue{lua.LString("z"), lua.LNumber(36)},
		[]lua.LValue{lua.LNumber(10), lua.LNumber(16)}, []lua.LValue{lua.LTrue}, []lua.LValue{l.NewTable()}, []lua.LValue{lua.LNil},
		[]lua.LValue{}, []lua.LValue{lua.LString("1"), lua.LString("x")})
	errors := 0
	for _, args := range cases {
		want, got := call(old, args), call(now, args)
		if got != want {
			t.Errorf("tonumber%v = %s, the prelude's %s", args, got, want)
		}
		if got == "error" {
			errors++
		}
	}
	typeOf := l.GetGlobal("type").(*lua.LFunction)
	co, cancel := l.NewThread()
	if cancel != nil {
		defer cancel()
	}
	for _, v := range []lua.LValue{lua.LNil, lua.LTrue, lua.LNumber(1), lua.LString("s"), l.NewTable(), typeOf, co, l.NewUserData(), lua.LChannel(nil)} {
		if got, want := call(typeOf, []lua.LValue{v}), "string("+v.Type().String()+")"; got != want {
			t.Errorf("type(%s) = %s, want %s", v, got, want)
		}
	}
	if got := call(typeOf, nil); got != "error" {
		t.Errorf("type() = %s, want an error", got)
	}
	t.Logf("measured: %d calls of tonumber answered as the prelude's Lua answered them (%d errors)", len(cases), errors)
}
