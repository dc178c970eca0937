// Package simredis is an in-process Redis for overshoot's simulator: a
// miniredis server on 127.0.0.1 whose clock is set by the caller, in integer
// µs of Unix time, and never read from the machine. It lets a Redis-backed
// rate limiter's own Lua scripts (reading TIME, setting PEXPIRE) run
// unchanged inside a deterministic simulation.
//
// On that clock: TIME answers the clock to the µs; a key expires exactly
// when Redis 7 would expire it on a clock reading that time (a key whose
// PEXPIRETIME is T ms is there, PTTL counting down to 0, until the clock
// reaches (T+1)·1000 µs); SetClock refuses a clock that goes backwards and
// StepBack says it aloud; Wipe is a restart without persistence (no keys, no
// scripts). Lua scripts run on gopher-lua, through a hook that makes them
// behave as Redis's Lua 5.1 where gopher-lua does not and a script can tell
// (number formatting, tonumber, multiple assignment, errors; see compat.lua
// and fixAssignments): each script compiled once, run on a pooled Lua state
// whose tables are read-only to scripts, as in Redis 7 (lua.go). Dial
// connects a client in process, without TCP. What is left different is listed, each
// with a reproduction, in probes_test.go, and the module's scripts are held
// call for call to a real Redis 7 in redis7_test.go.
//
// # What it owns, and what it must not import
//
// The server and its clock (server.go), Dial's in-memory connection
// (pipe.go), the command hook and the Lua compatibility prelude (compat.go,
// compat.lua), the script engine (lua.go) and the fast paths of a script
// call, each held to the slower path it stands for (fast.go), gopher-lua's
// pattern matcher with each pattern compiled once (pattern.go), the
// multiple-assignment rewrite (luafix.go). Its non-test code imports nothing of this module;
// its tests import algos, redis/lua and internal/redistest, to hold it to a
// real Redis 7 with the module's own scripts.
package simredis
