package simredis

import (
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// patterns and subjects the matcher is held to gopher-lua's on: anchors,
// classes, sets, repetitions, captures (position ones, back references),
// %b, and malformed patterns.
var (
	testPatterns = []string{
		"^(%-?%d+):(%-?%d+):(%-?%d+)$", "%d+", "(%a+)", "()", "(h)(e)", "()a()", "%bxy", "%b()", "[%w_]+", "[^,]+", "[a-f%d]+",
		"a-b", "a*", "a?b", "%s*(.-)%s*$", "^%s*$", "(a)%1", "%f[%w]", "[", "(", ")", "%", "[a", "(()", "%1", "%0", "[]]",
		"[^]]", "[a-]", "x$y", "$", "^", "", ".-", "(.-)b", "%.", "%%", "[%]]", "a+$", "^[+-]?%d*%.?%d*$", "%x+", "[%a%d]",
		"(%d)(%d)(%d)(%d)(%d)(%d)(%d)(%d)(%d)(%d)", "((a)(b))", "%b", "[%", "^0[xX](%x+)$", "^([+-]?)(%d*)%.?(%d*)(.*)$",
	}
	testSubjects = []string{
		"", "a", "abc", "123:456:789", "-1:-2:-3", "  hello world  ", "((a)b)", "xaby", "aaa", "banana", "a,b,,c", "1e+08",
		"\x00\xff", "0x1A", "ab", "1234567890", "]", "x$y", "+1.5e3", "abc(de(f))g", "zzzzxaby",
	}
)

// TestSimredisPatternsAsGopherLua: pmCompile then find (the pattern
// compiled once) finds what pm.Find finds, captures and errors alike, and
// string.match and string.find on the cache answer what gopher-lua's own
// answer, every value and error, at every start position; the cache stays
// within maxPatterns.
func TestSimredisPatternsAsGopherLua(t *testing.T) {
	cache := patternCache{}
	finds := 0
	for _, p := range testPatterns {
		for _, s := range testSubjects {
			for offset := 0; offset <= len(s)+1; offset++ {
				for _, limit := range []int{-1, 1, 2} {
					want, werr := pm.Find(p, []byte(s), offset, limit)
					got, gerr := cache.find(p, []byte(s), offset, limit)
					if fmt.Sprint(werr) != fmt.Sprint(gerr) {
						t.Fatalf("find(%q, %q, %d, %d): error %v, pm.Find's %v", p, s, offset, limit, gerr, werr)
					}
					if werr != nil {
						continue
					}
					if len(got) != len(want) {
						t.Fatalf("find(%q, %q, %d, %d): %d matches, pm.Find %d", p, s, offset, limit, len(got), len(want))
					}
					for i := range got {
						if g, w := captures(got[i]), captures(want[i]); g != w {
							t.Fatalf("find(%q, %q, %d, %d): match %d is %s, pm.Find's %s", p, s, offset, limit, i, g, w)
						}
					}
					finds++
				}
			}
		}
	}

	// string.match and string.find, in Lua, on the cache and on gopher-lua.
	theirs := lua.NewState()
	defer theirs.Close()
	ours := lua.NewState()
	defer ours.Close()
	c := patternCache{}
	strlib := ours.GetGlobal("string").(*lua.LTable)
	strlib.RawSetString("match", ours.NewFunction(c.strMatch))
	strlib.RawSetString("find", ours.NewFunction(c.strFind))
	const probe = `
		local f, s, p, init, plain = ...
		local function pack(ok, ...) return {ok = ok, n = select('#', ...), ...} end
		local r = pack(pcall(string[f], s, p, init, plain))
		local out = {tostring(r.ok), tostring(r.n)}
		for i = 1, r.n do out[#out + 1] = type(r[i]) .. ':' .. tostring(r[i]) end
		return table.concat(out, ' ')`
	fns := map[*lua.LState]*lua.LFunction{}
	for _, l := range []*lua.LState{theirs, ours} {
		fn, err := l.LoadString(probe)
		if err != nil {
			t.Fatal(err)
		}
		fns[l] = fn
	}
	run := func(l *lua.LState, args ...lua.LValue) string {
		l.Push(fns[l])
		for _, a := range args {
			l.Push(a)
		}
		if err := l.PCall(len(args), 1, nil); err != nil {
			return "error " + err.Error()
		}
		defer l.Pop(1)
		return l.Get(-1).String()
	}
	calls := 0
	for _, p := range testPatterns {
		for _, s := range testSubjects {
			for _, init := range []lua.LValue{lua.LNil, lua.LNumber(1), lua.LNumber(2), lua.LNumber(-1), lua.LNumber(-3), lua.LNumber(0), lua.LNumber(10), lua.LString("x")} {
				for _, f := range []string{"match", "find"} {
					plains := []lua.LValue{lua.LNil}
					if f == "find" && init != lua.LNil {
						plains = append(plains, lua.LTrue, lua.LFalse)
					}
					for _, plain := range plains {
						args := []lua.LValue{lua.LString(f), lua.LString(s), lua.LString(p), init, plain}
						if w, g := run(theirs, args...), run(ours, args...); g != w {
							t.Fatalf("string.%s(%q, %q, %v, %v) = %s, gopher-lua's %s", f, s, p, init, plain, g, w)
						}
						calls++
					}
				}
			}
		}
	}
	if len(c) > maxPatterns || len(cache) > maxPatterns {
		t.Fatalf("the caches hold %d and %d patterns, past %d", len(c), len(cache), maxPatterns)
	}
	for i := range 3 * maxPatterns {
		if _, err := cache.find(fmt.Sprintf("a%d", i), []byte("a1"), 0, 1); err != nil || len(cache) > maxPatterns {
			t.Fatalf("pattern %d: %v, the cache holds %d", i, err, len(cache))
		}
	}
	t.Logf("measured: %d finds as pm.Find's, %d string.match and string.find calls as gopher-lua's", finds, calls)
}

func captures(m matchData) string {
	var b strings.Builder
	for i := 0; i < m.CaptureLength(); i++ {
		fmt.Fprintf(&b, "%d/%v ", m.Capture(i), m.IsPosCapture(i))
	}
	return b.String()
}

// matchData is what both matchers answer a match with.
type matchData interface {
	CaptureLength() int
	Capture(int) int
	IsPosCapture(int) bool
}
