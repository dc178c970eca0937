package simredis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
	"github.com/yuin/gopher-lua/parse"
)

// TestSimredisMultipleAssignment: assignments that gopher-lua gets wrong on
// its own give what Redis's Lua 5.1 gives (the answers were read from Redis
// 7.0.15), and a script without one is not touched.
func TestSimredisMultipleAssignment(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	cases := []struct{ script, want string }{
		{"local a, b = 1, 2 a, b = b, a return {a, b}", "[2 1]"},
		{"local a, b = 1, 2 a, b = 0, a return {a, b}", "[0 1]"},
		{"local a, b = 0, 0 a, b = a + 1, a + b return {a, b}", "[1 0]"},
		{"local i, t = 3, {} i, t[i] = i + 1, 20 return {i, t[3]}", "[4 20]"},
		{"local t = {1, 2} t[1], t[2] = t[2], t[1] return t", "[2 1]"},
		{"local function f() return 1, 2, 3 end local a, b = 5, 6 a, b = f() return {a, b}", "[1 2]"},
		{"local a, b = 1, 2 a, b = 3 return {a, b == nil and 1 or 0}", "[3 1]"},
		{"local function f(n) local a, b = 0, 1 for _ = 1, n do a, b = b, a + b end return a end return f(10)", "55"},
		{"local o = {n = 1} function o:inc(k) self.n, k = self.n + k, self.n return k end return {o:inc(5), o.n}", "[1 6]"},
	}
	for _, tc := range cases {
		got, err := c.Eval(ctx, tc.script, nil).Result()
		if fmt.Sprint(got) != tc.want || err != nil {
			t.Errorf("%s = %v %v, want %s", tc.script, got, err, tc.want)
		}
	}
	plain := "local a = 1\nreturn a"
	if out, err := fixAssignments(plain); out != plain || err != nil {
		t.Errorf("a script without a multiple assignment was rewritten: %q %v", out, err)
	}
	if _, err := fixAssignments("return 1 +"); err == nil {
		t.Error("a script that does not parse: no error")
	}
	t.Logf("measured: %d multiple assignments as Lua 5.1 evaluates them", len(cases))
}

// TestSimredisReprintKeepsLines: printing a script again from its syntax
// tree gives a script that parses and keeps every statement on its line,
// and (without a multiple assignment to rewrite) prints the same again, for
// every script of the module and the prelude.
func TestSimredisReprintKeepsLines(t *testing.T) {
	srcs := map[string]string{"compat.lua": compatLua}
	for _, name := range scriptNames() {
		l, err := lua.New(name)
		if err != nil {
			t.Fatal(err)
		}
		srcs[name] = l.Source()
	}
	for name, src := range srcs {
		stmts, err := parse.Parse(strings.NewReader(src), name)
		if err != nil {
			t.Fatal(err)
		}
		p := &printer{line: 1}
		p.block(stmts)
		again, err := parse.Parse(strings.NewReader(p.b.String()), name)
		if err != nil {
			t.Fatalf("%s printed again does not parse: %v", name, err)
		}
		for i := range stmts {
			if stmts[i].Line() != again[i].Line() {
				t.Fatalf("%s: statement %d moved from line %d to %d", name, i, stmts[i].Line(), again[i].Line())
			}
		}
		if !hasMultiAssign(stmts) {
			q := &printer{line: 1}
			q.block(again)
			if q.b.String() != p.b.String() {
				t.Fatalf("%s: printing is not stable", name)
			}
		}
		if lines := strings.Count(p.b.String(), "\n"); lines > strings.Count(src, "\n") {
			t.Fatalf("%s: %d lines printed from %d", name, lines, strings.Count(src, "\n"))
		}
	}
}

// TestSimredisTransactionsAndScripts: the hook leaves MULTI alone (TTL and
// scripts queue, and run at EXEC; a queued TTL keeps miniredis's truncation,
// the one place it does), and SCRIPT LOAD, EXISTS, EVALSHA and FLUSH speak
// of scripts by the SHA-1 of the script as sent.
func TestSimredisTransactionsAndScripts(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	setClock(t, s, 1_000_000_000)
	c.Set(ctx, "k", "v", 10_600*time.Millisecond)
	var ttl *redis.DurationCmd
	var ev *redis.Cmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		ttl = p.TTL(ctx, "k")
		ev = p.Eval(ctx, "return tostring(2^53)", nil)
		return nil
	})
	if err != nil || ttl.Val() != 10*time.Second || ev.Val() != "9.007199254741e+15" {
		t.Fatalf("MULTI: TTL %v, script %v, %v", ttl.Val(), ev.Val(), err)
	}
	if got := c.TTL(ctx, "k").Val(); got != 11*time.Second {
		t.Fatalf("TTL outside MULTI: %v, want 11s (10.6 s, rounded)", got)
	}
	src := "return {KEYS[1], tostring(1e15)}"
	sha := sha1Hex(src)
	if got, err := c.ScriptLoad(ctx, src).Result(); got != sha || err != nil {
		t.Fatalf("SCRIPT LOAD = %q %v, want %q", got, err, sha)
	}
	if got := c.ScriptExists(ctx, sha, "0000000000000000000000000000000000000000").Val(); fmt.Sprint(got) != "[true false]" {
		t.Fatalf("SCRIPT EXISTS = %v", got)
	}
	if got, err := c.EvalSha(ctx, sha, []string{"x"}).Result(); fmt.Sprint(got) != "[x 1e+15]" || err != nil {
		t.Fatalf("EVALSHA = %v %v", got, err)
	}
	c.ScriptFlush(ctx)
	if got := c.ScriptExists(ctx, sha).Val(); fmt.Sprint(got) != "[false]" {
		t.Fatalf("SCRIPT EXISTS after FLUSH = %v", got)
	}
	if err := c.EvalSha(ctx, sha, nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA after FLUSH: %v", err)
	}
}

// TestSimredisScriptsShareNothing: Lua states are reused from script to
// script, and what a script changes in one (a library table by rawset or
// table.insert, a function's env, a metatable, a module loaded) is never
// seen by the next: each later script finds the libraries as they were.
func TestSimredisScriptsShareNothing(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	check := "return {rawget(string, 'x') == nil and 1 or 0, math[1] == nil and 1 or 0, tostring(1e15), string.format('%.0f', 2^53), type(redis.call)}"
	const want = "[1 1 1e+15 9007199254740992 function]"
	for i, src := range []string{
		"rawset(string, 'x', 1) return 1",
		"table.insert(math, 1) return 1",
		"setfenv(tostring, {}) return 1",
		"setfenv(0, {}) return 1",
		"pcall(setmetatable, string, {}) return 1",
		"pcall(require, 'nosuchmodule') return 1",
		"string.format = nil return 1",
	} {
		c.Eval(ctx, src, nil)
		for range 3 { // the pool hands out several states
			if got, err := c.Eval(ctx, check, nil).Result(); fmt.Sprint(got) != want || err != nil {
				t.Fatalf("after script %d (%s): %v %v, want %s", i, src, got, err, want)
			}
		}
	}
}
