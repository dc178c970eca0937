package simredis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// What a probe must show on Redis 7 and simredis.
const (
	same      = "same"      // the same replies: simredis is right (some by its own fixes)
	differs   = "differs"   // a difference simredis leaves, on every Redis 7
	differs70 = "differs70" // a difference on Redis 7.0 only: 7.2 formats floats as miniredis does
)

// probe is a few commands, run in order on a fresh key ({k} in an argument
// is the key, and EVAL's KEYS[1]) on Redis 7 and on simredis, whose replies
// are compared one by one. why says what the probe shows.
type probe struct {
	want string
	why  string
	cmds [][]any
}

func eval(script string) []any { return []any{"EVAL", script, 1, "{k}"} }

// luaProbe is one EVAL whose reply is compared.
func luaProbe(want, why, script string) probe { return probe{want, why, [][]any{eval(script)}} }

// probes are what rate-limiter scripts use, and the Lua around it. Never
// add error({foo='x'}) (a table without err): Redis 7.0.15 crashes on it.
var probes = []probe{
	// Numbers written by Lua: Redis's Lua 5.1 writes "%.14g".
	luaProbe(same, "tostring of an integer past 14 digits (µs timestamps): %.14g, fixed", "return tostring(1700000000123456)"),
	luaProbe(same, "tostring of 2^53, 1e15, 1/3, 1/0, -1/0, 0/0", "return {tostring(2^53), tostring(1e15), tostring(1/3), tostring(1/0), tostring(-1/0), tostring(0/0)}"),
	luaProbe(same, "tostring of -0", "return tostring(-0)"),
	luaProbe(same, "string.format %s of numbers, %g default precision, inf, negative %x, %q", `return {string.format('%s|%s', 1e15, 2.5), string.format('%g', 0.1234567), string.format('%f|%5.1f', 1/0, -1/0), string.format('%x', -1), string.format('%q', 'a"b\\c'.."\n")}`),
	luaProbe(same, "string.format of large integers near 2^53", "return {string.format('%.0f', 2^53-1), string.format('%d', 2^53-1), string.format('%d', 2^53+1), string.format('%.0f', 9007199254740993), string.format('%i|%5d|%-5d|%05d', 42, 42, 42, 42)}"),
	luaProbe(same, "string.format with an argument missing is an error", "return string.format('%d %d', 1)"),
	luaProbe(same, "table.concat of numbers", "return table.concat({1, 2.5, 1e15, 1700000000123456}, ',')"),
	luaProbe(same, "tonumber of what strtod reads (gopher-lua: nil for 1e+08, which miniredis writes for a score of 10^8)", "return {tonumber('1e3'), tonumber('1e+08'), tonumber('-0x10'), tonumber(' 5 '), tonumber('5.'), tonumber('0x1A'), tonumber('.5'), tonumber('1.7e+15')}"),
	luaProbe(same, "tonumber of out-of-range and special values", "return {tostring(tonumber('1e400')), tostring(tonumber('-1e400')), tostring(tonumber('1e-400')), tostring(tonumber('inf')), tonumber('nan') ~= tonumber('nan'), tostring(tonumber('99999999999999999999'))}"),
	luaProbe(same, "tonumber of what is not a number", "return {tonumber('abc') == nil, tonumber('') == nil, tonumber('0x') == nil, tonumber('1 2') == nil, tonumber('5e') == nil, tonumber('10', 2), tonumber('ff', 16)}"),
	luaProbe(same, "integers near 2^53 in arithmetic and replies", "return {2^53, 2^53 + 1, (2^53 - 1) % 3, math.floor(2^53 / 3), -7 % 3, 7 % -3, 5.5 % 2, 3.7, -2.5}"),
	// Multiple assignment: gopher-lua evaluates it wrongly; simredis rewrites it.
	luaProbe(same, "multiple assignment reads every value first (gopher-lua: a, b = b, a gives b, b), fixed", "local a, b = 1, 2 a, b = b, a local c, d = 0, 0 c, d = c + 1, c + d local i, t = 3, {} i, t[i] = i + 1, 20 return {a, b, c, d, i, t[3]}"),
	luaProbe(same, "the sliding counter's s_idx, cur, prev = idx, 0, cur", "local s_idx, cur, prev = 1, 7, 0 local idx = 2 if s_idx == idx - 1 then s_idx, cur, prev = idx, 0, cur end return {s_idx, cur, prev}"),
	// Commands rate limiters use, from a script.
	{same, "GET, SET (NX, XX, GET, PX), INCR, INCRBY", [][]any{eval("return {redis.call('GET', KEYS[1]), redis.call('SET', KEYS[1], 5, 'NX'), redis.call('SET', KEYS[1], 6, 'NX'), redis.call('INCR', KEYS[1]), redis.call('INCRBY', KEYS[1], 2^53 - 10), redis.call('SET', KEYS[1], 'x', 'XX', 'GET'), redis.call('GET', KEYS[1])}")}},
	{same, "HSET, HGET, HINCRBY, HGETALL, HMGET", [][]any{eval("return {redis.call('HSET', KEYS[1], 'tokens', 10, 'ts', 1700000000123456), redis.call('HINCRBY', KEYS[1], 'tokens', -3), redis.call('HGET', KEYS[1], 'ts'), redis.call('HGET', KEYS[1], 'none'), redis.call('HMGET', KEYS[1], 'tokens', 'none'), redis.call('HGETALL', KEYS[1])}")}},
	{same, "ZADD, ZREMRANGEBYSCORE, ZCARD, ZCOUNT, ZRANGE of integer scores (a sliding log)", [][]any{eval("redis.call('ZADD', KEYS[1], 1700000000000000, 'a', 1700000000500000, 'b', 1700000001000000, 'c') return {redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(1700000000500000'), redis.call('ZCARD', KEYS[1]), redis.call('ZCOUNT', KEYS[1], 1700000000500000, '+inf'), redis.call('ZRANGE', KEYS[1], 0, -1), redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2] + 0}")}},
	{same, "PEXPIRE, PEXPIRETIME, PTTL and TTL of a fresh key in one script", [][]any{eval("redis.call('SET', KEYS[1], 'v') return {redis.call('PTTL', KEYS[1]), redis.call('PEXPIRE', KEYS[1], 10000900), redis.call('TTL', KEYS[1]), redis.call('PEXPIREAT', KEYS[1], 4102444800623), redis.call('PEXPIRETIME', KEYS[1]), redis.call('EXPIRETIME', KEYS[1]), redis.call('PEXPIRE', KEYS[1], 0), redis.call('EXISTS', KEYS[1]), redis.call('PTTL', KEYS[1])}")}},
	{same, "TTL and EXPIRETIME round as Redis does, from a client (miniredis truncates)", [][]any{{"SET", "{k}", "v", "PX", 10000900}, {"TTL", "{k}"}, {"PEXPIREAT", "{k}", 4102444800623}, {"EXPIRETIME", "{k}"}, {"PEXPIRETIME", "{k}"}, {"TTL", "{k}:none"}}},
	{same, "PEXPIRE NX, XX, GT (GT to a shorter expiry, not the same: a real Redis reads its clock again for each command, so the same one may be a ms later)", [][]any{eval("redis.call('SET', KEYS[1], 'v') return {redis.call('PEXPIRE', KEYS[1], 5000, 'XX'), redis.call('PEXPIRE', KEYS[1], 5000, 'NX'), redis.call('PEXPIRE', KEYS[1], 5000, 'NX'), redis.call('PEXPIRE', KEYS[1], 4000, 'GT'), redis.call('PEXPIRE', KEYS[1], 6000000, 'GT')}")}},
	// Errors.
	{same, "a failed redis.call, uncaught: the command's error, the script's SHA-1 and line", [][]any{{"SET", "{k}", "abc"}, eval("\nreturn redis.call('INCR', KEYS[1])"), eval("return redis.call('HGET', KEYS[1], 'f')")}},
	{same, "a failed redis.call, caught by pcall: the error string without a position", [][]any{{"SET", "{k}", "abc"}, eval("local ok, e = pcall(redis.call, 'INCR', KEYS[1]) local ok2, e2 = pcall(redis.call, 'GET') local ok3, e3 = pcall(redis.call, 'NOPE') return {ok and 1 or 0, e, e2, e3}")}},
	{same, "redis.pcall returns the error as a table", [][]any{{"SET", "{k}", "abc"}, eval("local r = redis.pcall('INCR', KEYS[1]) local r2 = redis.pcall('SET', KEYS[1]) return {r.err, r2.err}")}},
	{same, "wrong arguments, unknown command, bad expiry, command not allowed, bad argument type", [][]any{eval("return redis.call('GET', KEYS[1], 'x')"), eval("return redis.call('NOPE')"), eval("return redis.call('SET', KEYS[1], 'v', 'PX', 0)"), eval("return redis.call('EVAL', 'return 1', 0)"), eval("return redis.call('SET', KEYS[1], {})")}},
	{same, "error() with a string, a number, a level, a table with err; error_reply; status_reply", [][]any{eval("error('boom')"), eval("local function f()\n error('deep')\nend\nf()"), eval("error(42)"), eval("error('x', 0)"), eval("error({err='WRONGTYPE mine'})"), eval("return redis.error_reply('MYERR custom')"), eval("return redis.status_reply('FINE')")}},
	{same, "a global: reading one that does not exist, creating one", [][]any{eval("return undefinedvar"), eval("\nx = 1")}},
	{same, "writing a library table or a global (an existing one too): Redis 7's read-only tables", [][]any{eval("string.format = nil return 1"), eval("redis.call = nil return 1"), eval("\ntostring = nil return 1"), eval("_G.tostring = 1 return 1"), eval("KEYS = 1 return 1"), eval("getmetatable('').__index = {} return 1")}},
	{same, "EVALSHA of an unknown script", [][]any{{"EVALSHA", "0123456789012345678901234567890123456789", 0}}},
	{same, "SCRIPT LOAD answers the SHA-1 of the script as sent; EVALSHA and SCRIPT EXISTS take it", [][]any{{"SCRIPT", "LOAD", "return {KEYS[1], tostring(2^53)}"}, {"EVALSHA", "1a0a1a8cd0cd1ad7fd7ed0d3a8ddbda4e6d32e40", 1, "{k}"}, {"SCRIPT", "EXISTS", "1a0a1a8cd0cd1ad7fd7ed0d3a8ddbda4e6d32e40", "0123456789012345678901234567890123456789"}}},
	// What simredis leaves as it is.
	luaProbe(differs, "`..` of a number past 14 digits: gopher-lua writes every digit (the VM's own conversion, out of a script's reach)", "return 'k' .. 1700000000123456"),
	luaProbe(differs, "string functions given a number (string.len(1e15)): the same conversion", "return string.len(1e15)"),
	luaProbe(differs, "cjson.encode of a number: Redis's cjson writes %.14g", "return cjson.encode({1e15, 2^53})"),
	luaProbe(differs, "the sign of a NaN read by tonumber ('nan', which tostring writes as nan; simredis writes every NaN as -nan, as 0/0 is)", "return tostring(tonumber('nan'))"),
	luaProbe(differs, "Lua 5.1 keeps one constant for 0 and -0 in a function, so 1/0 after a -0 is -inf there", "return {tostring(-0), tostring(1/0)}"),
	luaProbe(differs, "#t of a table with holes: the border each Lua finds", "local t = {} t[1] = 1 t[3] = 3 return #t"),
	luaProbe(differs, "libraries miniredis lacks: bit, struct, cmsgpack", "return type(bit)"),
	luaProbe(differs, "globals Redis removes and miniredis keeps: os, print, setfenv, getfenv, require, loadstring, newproxy", "return type(os)"),
	luaProbe(differs, "rawset and table.insert on a library table: Redis refuses them; simredis lets them through and drops that Lua state after the script (TestSimredisScriptsShareNothing)", "rawset(string, 'x', 1) table.insert(math, 1) return 1"),
	luaProbe(differs, "pairs and rawget over a library table: simredis shows each through an empty read-only facade, so they find nothing", "local n = 0 for _ in pairs(string) do n = n + 1 end return {n, rawget(string, 'format') ~= nil}"),
	luaProbe(differs, "the words of Lua's own runtime errors", "local a = nil return a.b"),
	luaProbe(differs, "an error caught by pcall carries gopher-lua's position (':1:', not 'user_script:1:')", "local ok, e = pcall(function() error('x') end) return e"),
	luaProbe(differs, "a compile error's words", "return 1 +"),
	{differs, "PEXPIRE LT to the same expiry: miniredis sets it, Redis refuses", [][]any{eval("redis.call('SET', KEYS[1], 'v', 'PX', 5000) return redis.call('PEXPIRE', KEYS[1], 5000, 'LT')")}},
	{differs, "HINCRBY on a hash value that is not an integer: the error's words", [][]any{eval("redis.call('HSET', KEYS[1], 'f', 'x') return redis.call('HINCRBY', KEYS[1], 'f', 1)")}},
	{differs, "SET PX 0 from a client: miniredis's words for the error (from a script simredis fixes them)", [][]any{{"SET", "{k}", "v", "PX", 0}}},
	luaProbe(differs70, "a non-integer number as a command argument: Redis 7.0 writes %.17g, 7.2 and miniredis the shortest form", "redis.call('SET', KEYS[1], 0.1) return redis.call('GET', KEYS[1])"),
	luaProbe(differs70, "an integer-valued number ≥ 1e17 as an argument: Redis 7.0 writes %.17g (1e+17)", "redis.call('SET', KEYS[1], 1e17) return redis.call('GET', KEYS[1])"),
	luaProbe(differs70, "a score written back: Redis 7.0 writes %.17g, 7.2 and miniredis the shortest form (1e+15)", "redis.call('ZADD', KEYS[1], '1e15', 'a', 0.1, 'b') return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')"),
	luaProbe(differs70, "HINCRBYFLOAT's reply: the same", "return redis.call('HINCRBYFLOAT', KEYS[1], 'f', 1.1)"),
}

// run sends p's commands on c, with {k} as key, and returns each reply in
// words.
func (p probe) run(ctx context.Context, c *redis.Client, key string) []string {
	var out []string
	for _, cmd := range p.cmds {
		args := make([]any, len(cmd))
		for i, a := range cmd {
			if s, ok := a.(string); ok {
				a = strings.ReplaceAll(s, "{k}", key)
			}
			args[i] = a
		}
		v, err := c.Do(ctx, args...).Result()
		out = append(out, fmt.Sprintf("%#v / %v", v, err))
	}
	return out
}

func before72(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return true
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	return major < 7 || major == 7 && minor < 2
}

// testProbes runs every probe on Redis and on simredis and holds each to
// what it says: the same replies, or the difference it names (on Redis 7.0
// for the float formats, which 7.2 changed to miniredis's).
func testProbes(t *testing.T, rc *redis.Client, prefix, version string) {
	ctx := context.Background()
	s, sc := start(t)
	setClock(t, s, 1_700_000_000_123_456)
	counts := map[string]int{}
	bad := 0
	for i, p := range probes {
		key := fmt.Sprintf("%sprobe:%d", prefix, i)
		got, want := p.run(ctx, sc, key), p.run(ctx, rc, key)
		equal := strings.Join(got, "\n") == strings.Join(want, "\n")
		expect := p.want
		if expect == differs70 && !before72(version) {
			t.Logf("probe %d (%s) on Redis %s: same=%v (only checked on 7.0)", i, p.why, version, equal)
			counts["unchecked"]++
			continue
		}
		switch {
		case expect == same && equal:
			counts["same"]++
		case expect != same && !equal:
			counts["known differences"]++
			t.Logf("probe %d, a known difference: %s\n   redis 7:  %s\n   simredis: %s", i, p.why, strings.Join(want, " | "), strings.Join(got, " | "))
		default:
			bad++
			t.Errorf("probe %d (%s): want %s, but equal=%v\n   redis 7:  %s\n   simredis: %s", i, p.why, expect, equal, strings.Join(want, "\n             "), strings.Join(got, "\n             "))
		}
	}
	t.Logf("measured: %d probes on Redis %s: %d the same on simredis, %d known differences, %d unchecked on this version, %d not as stated",
		len(probes), version, counts["same"], counts["known differences"], counts["unchecked"], bad)
	wantSame := 0
	for _, p := range probes {
		if p.want == same {
			wantSame++
		}
	}
	if counts["same"] != wantSame || bad != 0 {
		t.Errorf("%d of %d probes the same, %d not as stated", counts["same"], wantSame, bad)
	}
}
