package simredis

import (
	"fmt"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// This file is gopher-lua v1.1.1's Lua pattern matcher (package pm, MIT
// License, Copyright (c) 2015 Yusuke Inuzuka), copied with its names
// prefixed by pm, so that a pattern is parsed and compiled once (pmCompile,
// cached per Lua state by patternCache) instead of on every string.match
// and string.find, as pm.Find does. The VM's match state is passed as
// such (see pmRecursiveVM); nothing else of pm is changed. Below the VM,
// pm.Find split in two (pmCompile and find), and gopher-lua's strMatch and
// strFind on the compiled pattern; pattern_test.go holds them to pm.Find
// and gopher-lua's own functions.

const pmEOS = -1
const pmUnknown = -2

/* pmError {{{ */

type pmError struct {
	Pos     int
	Message string
}

func pmNewError(pos int, message string, args ...interface{}) *pmError {
	if len(args) == 0 {
		return &pmError{pos, message}
	}
	return &pmError{pos, fmt.Sprintf(message, args...)}
}

func (e *pmError) Error() string {
	switch e.Pos {
	case pmEOS:
		return fmt.Sprintf("%s at EOS", e.Message)
	case pmUnknown:
		return fmt.Sprintf("%s", e.Message)
	default:
		return fmt.Sprintf("%s at %d", e.Message, e.Pos)
	}
}

/* }}} */

/* pmMatch {{{ */

type pmMatch struct {
	// captured positions
	// layout
	// xxxx xxxx xxxx xxx0 : caputured positions
	// xxxx xxxx xxxx xxx1 : position captured positions
	captures []uint32
}

func (st *pmMatch) addPosCapture(s, pos int) {
	for s+1 >= len(st.captures) {
		st.captures = append(st.captures, 0)
	}
	st.captures[s] = (uint32(pos) << 1) | 1
	st.captures[s+1] = (uint32(pos) << 1) | 1
}

func (st *pmMatch) setCapture(s, pos int) uint32 {
	for s >= len(st.captures) {
		st.captures = append(st.captures, 0)
	}
	v := st.captures[s]
	st.captures[s] = (uint32(pos) << 1)
	return v
}

func (st *pmMatch) restoreCapture(s int, pos uint32) { st.captures[s] = pos }

func (st *pmMatch) CaptureLength() int { return len(st.captures) }

func (st *pmMatch) IsPosCapture(idx int) bool { return (st.captures[idx] & 1) == 1 }

func (st *pmMatch) Capture(idx int) int { return int(st.captures[idx] >> 1) }

/* }}} */

/* pmScanner {{{ */

type pmScannerState struct {
	Pos     int
	started bool
}

type pmScanner struct {
	src   []byte
	State pmScannerState
	saved pmScannerState
}

func pmNewScanner(src []byte) *pmScanner {
	return &pmScanner{
		src: src,
		State: pmScannerState{
			Pos:     0,
			started: false,
		},
		saved: pmScannerState{},
	}
}

func (sc *pmScanner) Length() int { return len(sc.src) }

func (sc *pmScanner) Next() int {
	if !sc.State.started {
		sc.State.started = true
		if len(sc.src) == 0 {
			sc.State.Pos = pmEOS
		}
	} else {
		sc.State.Pos = sc.NextPos()
	}
	if sc.State.Pos == pmEOS {
		return pmEOS
	}
	return int(sc.src[sc.State.Pos])
}

func (sc *pmScanner) CurrentPos() int {
	return sc.State.Pos
}

func (sc *pmScanner) NextPos() int {
	if sc.State.Pos == pmEOS || sc.State.Pos >= len(sc.src)-1 {
		return pmEOS
	}
	if !sc.State.started {
		return 0
	} else {
		return sc.State.Pos + 1
	}
}

func (sc *pmScanner) Peek() int {
	cureof := sc.State.Pos == pmEOS
	ch := sc.Next()
	if !cureof {
		if sc.State.Pos == pmEOS {
			sc.State.Pos = len(sc.src) - 1
		} else {
			sc.State.Pos--
			if sc.State.Pos < 0 {
				sc.State.Pos = 0
				sc.State.started = false
			}
		}
	}
	return ch
}

func (sc *pmScanner) Save() { sc.saved = sc.State }

func (sc *pmScanner) Restore() { sc.State = sc.saved }

/* }}} */

/* bytecode {{{ */

type pmOpCode int

const (
	pmOpChar pmOpCode = iota
	pmOpMatch
	pmOpTailMatch
	pmOpJmp
	pmOpSplit
	pmOpSave
	pmOpPSave
	pmOpBrace
	pmOpNumber
)

type pmInst struct {
	OpCode   pmOpCode
	Class    pmClass
	Operand1 int
	Operand2 int
}

/* }}} */

/* classes {{{ */

type pmClass interface {
	Matches(ch int) bool
}

type pmDotClass struct{}

func (pn *pmDotClass) Matches(ch int) bool { return true }

type pmCharClass struct {
	Ch int
}

func (pn *pmCharClass) Matches(ch int) bool { return pn.Ch == ch }

type pmSingleClass struct {
	Class int
}

func (pn *pmSingleClass) Matches(ch int) bool {
	ret := false
	switch pn.Class {
	case 'a', 'A':
		ret = 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z'
	case 'c', 'C':
		ret = (0x00 <= ch && ch <= 0x1F) || ch == 0x7F
	case 'd', 'D':
		ret = '0' <= ch && ch <= '9'
	case 'l', 'L':
		ret = 'a' <= ch && ch <= 'z'
	case 'p', 'P':
		ret = (0x21 <= ch && ch <= 0x2f) || (0x3a <= ch && ch <= 0x40) || (0x5b <= ch && ch <= 0x60) || (0x7b <= ch && ch <= 0x7e)
	case 's', 'S':
		switch ch {
		case ' ', '\f', '\n', '\r', '\t', '\v':
			ret = true
		}
	case 'u', 'U':
		ret = 'A' <= ch && ch <= 'Z'
	case 'w', 'W':
		ret = '0' <= ch && ch <= '9' || 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z'
	case 'x', 'X':
		ret = '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
	case 'z', 'Z':
		ret = ch == 0
	default:
		return ch == pn.Class
	}
	if 'A' <= pn.Class && pn.Class <= 'Z' {
		return !ret
	}
	return ret
}

type pmSetClass struct {
	IsNot   bool
	Classes []pmClass
}

func (pn *pmSetClass) Matches(ch int) bool {
	for _, c := range pn.Classes {
		if c.Matches(ch) {
			return !pn.IsNot
		}
	}
	return pn.IsNot
}

type pmRangeClass struct {
	Begin pmClass
	End   pmClass
}

func (pn *pmRangeClass) Matches(ch int) bool {
	switch begin := pn.Begin.(type) {
	case *pmCharClass:
		end, ok := pn.End.(*pmCharClass)
		if !ok {
			return false
		}
		return begin.Ch <= ch && ch <= end.Ch
	}
	return false
}

// }}}

// patterns {{{

type pmPattern interface{}

type pmSinglePattern struct {
	Class pmClass
}

type pmSeqPattern struct {
	MustHead bool
	MustTail bool
	Patterns []pmPattern
}

type pmRepeatPattern struct {
	Type  int
	Class pmClass
}

type pmPosCapPattern struct{}

type pmCapPattern struct {
	Pattern pmPattern
}

type pmNumberPattern struct {
	N int
}

type pmBracePattern struct {
	Begin int
	End   int
}

// }}}

/* parse {{{ */

func pmParseClass(sc *pmScanner, allowset bool) pmClass {
	ch := sc.Next()
	switch ch {
	case '%':
		return &pmSingleClass{sc.Next()}
	case '.':
		if allowset {
			return &pmDotClass{}
		}
		return &pmCharClass{ch}
	case '[':
		if allowset {
			return pmParseClassSet(sc)
		}
		return &pmCharClass{ch}
	//case '^' '$', '(', ')', ']', '*', '+', '-', '?':
	//	panic(pmNewError(sc.CurrentPos(), "invalid %c", ch))
	case pmEOS:
		panic(pmNewError(sc.CurrentPos(), "unexpected EOS"))
	default:
		return &pmCharClass{ch}
	}
}

func pmParseClassSet(sc *pmScanner) pmClass {
	set := &pmSetClass{false, []pmClass{}}
	if sc.Peek() == '^' {
		set.IsNot = true
		sc.Next()
	}
	isrange := false
	for {
		ch := sc.Peek()
		switch ch {
		// case '[':
		// 	panic(pmNewError(sc.CurrentPos(), "'[' can not be nested"))
		case pmEOS:
			panic(pmNewError(sc.CurrentPos(), "unexpected EOS"))
		case ']':
			if len(set.Classes) > 0 {
				sc.Next()
				goto exit
			}
			fallthrough
		case '-':
			if len(set.Classes) > 0 {
				sc.Next()
				isrange = true
				continue
			}
			fallthrough
		default:
			set.Classes = append(set.Classes, pmParseClass(sc, false))
		}
		if isrange {
			begin := set.Classes[len(set.Classes)-2]
			end := set.Classes[len(set.Classes)-1]
			set.Classes = set.Classes[0 : len(set.Classes)-2]
			set.Classes = append(set.Classes, &pmRangeClass{begin, end})
			isrange = false
		}
	}
exit:
	if isrange {
		set.Classes = append(set.Classes, &pmCharClass{'-'})
	}

	return set
}

func pmParsePattern(sc *pmScanner, toplevel bool) *pmSeqPattern {
	pat := &pmSeqPattern{}
	if toplevel {
		if sc.Peek() == '^' {
			sc.Next()
			pat.MustHead = true
		}
	}
	for {
		ch := sc.Peek()
		switch ch {
		case '%':
			sc.Save()
			sc.Next()
			switch sc.Peek() {
			case '0':
				panic(pmNewError(sc.CurrentPos(), "invalid capture index"))
			case '1', '2', '3', '4', '5', '6', '7', '8', '9':
				pat.Patterns = append(pat.Patterns, &pmNumberPattern{sc.Next() - 48})
			case 'b':
				sc.Next()
				pat.Patterns = append(pat.Patterns, &pmBracePattern{sc.Next(), sc.Next()})
			default:
				sc.Restore()
				pat.Patterns = append(pat.Patterns, &pmSinglePattern{pmParseClass(sc, true)})
			}
		case '.', '[', ']':
			pat.Patterns = append(pat.Patterns, &pmSinglePattern{pmParseClass(sc, true)})
		//case ']':
		//	panic(pmNewError(sc.CurrentPos(), "invalid ']'"))
		case ')':
			if toplevel {
				panic(pmNewError(sc.CurrentPos(), "invalid ')'"))
			}
			return pat
		case '(':
			sc.Next()
			if sc.Peek() == ')' {
				sc.Next()
				pat.Patterns = append(pat.Patterns, &pmPosCapPattern{})
			} else {
				ret := &pmCapPattern{pmParsePattern(sc, false)}
				if sc.Peek() != ')' {
					panic(pmNewError(sc.CurrentPos(), "unfinished capture"))
				}
				sc.Next()
				pat.Patterns = append(pat.Patterns, ret)
			}
		case '*', '+', '-', '?':
			sc.Next()
			if len(pat.Patterns) > 0 {
				spat, ok := pat.Patterns[len(pat.Patterns)-1].(*pmSinglePattern)
				if ok {
					pat.Patterns = pat.Patterns[0 : len(pat.Patterns)-1]
					pat.Patterns = append(pat.Patterns, &pmRepeatPattern{ch, spat.Class})
					continue
				}
			}
			pat.Patterns = append(pat.Patterns, &pmSinglePattern{&pmCharClass{ch}})
		case '$':
			if toplevel && (sc.NextPos() == sc.Length()-1 || sc.NextPos() == pmEOS) {
				pat.MustTail = true
			} else {
				pat.Patterns = append(pat.Patterns, &pmSinglePattern{&pmCharClass{ch}})
			}
			sc.Next()
		case pmEOS:
			sc.Next()
			goto exit
		default:
			sc.Next()
			pat.Patterns = append(pat.Patterns, &pmSinglePattern{&pmCharClass{ch}})
		}
	}
exit:
	return pat
}

type pmIptr struct {
	insts   []pmInst
	capture int
}

func pmCompilePattern(p pmPattern, ps ...*pmIptr) []pmInst {
	var ptr *pmIptr
	toplevel := false
	if len(ps) == 0 {
		toplevel = true
		ptr = &pmIptr{[]pmInst{pmInst{pmOpSave, nil, 0, -1}}, 2}
	} else {
		ptr = ps[0]
	}
	switch pat := p.(type) {
	case *pmSinglePattern:
		ptr.insts = append(ptr.insts, pmInst{pmOpChar, pat.Class, -1, -1})
	case *pmSeqPattern:
		for _, cp := range pat.Patterns {
			pmCompilePattern(cp, ptr)
		}
	case *pmRepeatPattern:
		idx := len(ptr.insts)
		switch pat.Type {
		case '*':
			ptr.insts = append(ptr.insts,
				pmInst{pmOpSplit, nil, idx + 1, idx + 3},
				pmInst{pmOpChar, pat.Class, -1, -1},
				pmInst{pmOpJmp, nil, idx, -1})
		case '+':
			ptr.insts = append(ptr.insts,
				pmInst{pmOpChar, pat.Class, -1, -1},
				pmInst{pmOpSplit, nil, idx, idx + 2})
		case '-':
			ptr.insts = append(ptr.insts,
				pmInst{pmOpSplit, nil, idx + 3, idx + 1},
				pmInst{pmOpChar, pat.Class, -1, -1},
				pmInst{pmOpJmp, nil, idx, -1})
		case '?':
			ptr.insts = append(ptr.insts,
				pmInst{pmOpSplit, nil, idx + 1, idx + 2},
				pmInst{pmOpChar, pat.Class, -1, -1})
		}
	case *pmPosCapPattern:
		ptr.insts = append(ptr.insts, pmInst{pmOpPSave, nil, ptr.capture, -1})
		ptr.capture += 2
	case *pmCapPattern:
		c0, c1 := ptr.capture, ptr.capture+1
		ptr.capture += 2
		ptr.insts = append(ptr.insts, pmInst{pmOpSave, nil, c0, -1})
		pmCompilePattern(pat.Pattern, ptr)
		ptr.insts = append(ptr.insts, pmInst{pmOpSave, nil, c1, -1})
	case *pmBracePattern:
		ptr.insts = append(ptr.insts, pmInst{pmOpBrace, nil, pat.Begin, pat.End})
	case *pmNumberPattern:
		ptr.insts = append(ptr.insts, pmInst{pmOpNumber, nil, pat.N, -1})
	}
	if toplevel {
		if p.(*pmSeqPattern).MustTail {
			ptr.insts = append(ptr.insts, pmInst{pmOpSave, nil, 1, -1}, pmInst{pmOpTailMatch, nil, -1, -1})
		}
		ptr.insts = append(ptr.insts, pmInst{pmOpSave, nil, 1, -1}, pmInst{pmOpMatch, nil, -1, -1})
	}
	return ptr.insts
}

/* }}} parse */

/* VM {{{ */

// Simple recursive virtual machine based on the
// "Regular Expression Matching: the Virtual Machine Approach" (https://swtch.com/~rsc/regexp/regexp2.html)
//
// simredis: m is given, never nil (pm's is variadic, a slice allocated on
// every step), from the start with room for every capture.
func pmRecursiveVM(src []byte, insts []pmInst, pc, sp int, m *pmMatch) (bool, int, *pmMatch) {
redo:
	in := insts[pc]
	switch in.OpCode {
	case pmOpChar:
		if sp >= len(src) || !in.Class.Matches(int(src[sp])) {
			return false, sp, m
		}
		pc++
		sp++
		goto redo
	case pmOpMatch:
		return true, sp, m
	case pmOpTailMatch:
		return sp >= len(src), sp, m
	case pmOpJmp:
		pc = in.Operand1
		goto redo
	case pmOpSplit:
		if ok, nsp, _ := pmRecursiveVM(src, insts, in.Operand1, sp, m); ok {
			return true, nsp, m
		}
		pc = in.Operand2
		goto redo
	case pmOpSave:
		s := m.setCapture(in.Operand1, sp)
		if ok, nsp, _ := pmRecursiveVM(src, insts, pc+1, sp, m); ok {
			return true, nsp, m
		}
		m.restoreCapture(in.Operand1, s)
		return false, sp, m
	case pmOpPSave:
		m.addPosCapture(in.Operand1, sp+1)
		pc++
		goto redo
	case pmOpBrace:
		if sp >= len(src) || int(src[sp]) != in.Operand1 {
			return false, sp, m
		}
		count := 1
		for sp = sp + 1; sp < len(src); sp++ {
			if int(src[sp]) == in.Operand2 {
				count--
			}
			if count == 0 {
				pc++
				sp++
				goto redo
			}
			if int(src[sp]) == in.Operand1 {
				count++
			}
		}
		return false, sp, m
	case pmOpNumber:
		idx := in.Operand1 * 2
		if idx >= m.CaptureLength()-1 {
			panic(pmNewError(pmUnknown, "invalid capture index"))
		}
		capture := src[m.Capture(idx):m.Capture(idx+1)]
		for i := 0; i < len(capture); i++ {
			if i+sp >= len(src) || capture[i] != src[i+sp] {
				return false, sp, m
			}
		}
		pc++
		sp += len(capture)
		goto redo
	}
	panic("should not reach here")
}

/* }}} */

/* API {{{ */

// pmProgram is a pattern compiled: what pm.Find makes of it on each call.
type pmProgram struct {
	insts    []pmInst
	mustHead bool
	ncap     int // the number of capture positions, for each match's slice
}

// recoverPmError is the recover of pm.Find: a *pmError that parsing or
// matching panics with becomes *err; any other panic goes on.
func recoverPmError(err *error) {
	if v := recover(); v != nil {
		if perr, ok := v.(*pmError); ok {
			*err = perr
		} else {
			panic(v)
		}
	}
}

// pmCompile parses and compiles p, as pm.Find does first.
func pmCompile(p string) (prog *pmProgram, err error) {
	defer recoverPmError(&err)
	pat := pmParsePattern(pmNewScanner([]byte(p)), true)
	ptr := &pmIptr{[]pmInst{{pmOpSave, nil, 0, -1}}, 2}
	pmCompilePattern(pat, ptr)
	if pat.MustTail {
		ptr.insts = append(ptr.insts, pmInst{pmOpSave, nil, 1, -1}, pmInst{pmOpTailMatch, nil, -1, -1})
	}
	ptr.insts = append(ptr.insts, pmInst{pmOpSave, nil, 1, -1}, pmInst{pmOpMatch, nil, -1, -1})
	return &pmProgram{insts: ptr.insts, mustHead: pat.MustHead, ncap: ptr.capture}, nil
}

// find is pm.Find(p, src, offset, limit) for prog compiled from p.
func (prog *pmProgram) find(src []byte, offset, limit int) (matches []*pmMatch, err error) {
	defer recoverPmError(&err)
	matches = []*pmMatch{}
	for sp := offset; sp <= len(src); {
		ok, nsp, ms := pmRecursiveVM(src, prog.insts, 0, sp, &pmMatch{make([]uint32, 0, prog.ncap)})
		sp++
		if ok {
			if sp < nsp {
				sp = nsp
			}
			matches = append(matches, ms)
		}
		if len(matches) == limit || prog.mustHead {
			break
		}
	}
	return
}

/* }}} */

// patternCache holds a Lua state's compiled patterns, by their text; it
// is emptied when it reaches maxPatterns, so that a script making patterns
// without end cannot grow it without end.
type patternCache map[string]*pmProgram

const maxPatterns = 256

// find is pm.Find(p, src, offset, limit), p compiled once.
func (c *patternCache) find(p string, src []byte, offset, limit int) ([]*pmMatch, error) {
	prog, ok := (*c)[p]
	if !ok {
		var err error
		if prog, err = pmCompile(p); err != nil {
			return nil, err
		}
		if len(*c) >= maxPatterns {
			*c = patternCache{}
		}
		(*c)[p] = prog
	}
	return prog.find(src, offset, limit)
}

// strMatch is gopher-lua's string.match, on the cache.
func (c *patternCache) strMatch(L *lua.LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	offset := L.OptInt(3, 1)
	l := len(str)
	if offset < 0 {
		offset = l + offset + 1
	}
	offset--
	if offset < 0 {
		offset = 0
	}

	md := c.first(L, pattern, str, offset)
	if md == nil {
		L.Push(lua.LNil)
		return 0
	}
	if md.CaptureLength() == 2 {
		L.Push(lua.LString(str[md.Capture(0):md.Capture(1)]))
		return 1
	}
	return pushCaptures(L, str, md)
}

// strFind is gopher-lua's string.find, on the cache.
func (c *patternCache) strFind(L *lua.LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	if len(pattern) == 0 {
		L.Push(lua.LNumber(1))
		L.Push(lua.LNumber(0))
		return 2
	}
	init := luaIndex2StringIndex(str, L.OptInt(3, 1), true)
	plain := false
	if L.GetTop() == 4 {
		plain = lua.LVAsBool(L.Get(4))
	}

	if plain {
		pos := strings.Index(str[init:], pattern)
		if pos < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init+pos) + 1)
		L.Push(lua.LNumber(init + pos + len(pattern)))
		return 2
	}

	md := c.first(L, pattern, str, init)
	if md == nil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(md.Capture(0) + 1))
	L.Push(lua.LNumber(md.Capture(1)))
	return 2 + pushCaptures(L, str, md)
}

// first is the first match of pattern in str from byte offset on, or nil
// for none: string.match's and string.find's search. A malformed pattern
// raises its error in L.
func (c *patternCache) first(L *lua.LState, pattern, str string, offset int) *pmMatch {
	mds, err := c.find(pattern, readOnlyBytes(str), offset, 1)
	if err != nil {
		L.RaiseError("%s", err.Error()) // raiseError formats no message given alone
	}
	if len(mds) == 0 {
		return nil
	}
	return mds[0]
}

// pushCaptures pushes md's captures on L, the whole match's left out: a
// position capture as its number, any other as its text of str. It
// returns how many it pushed.
func pushCaptures(L *lua.LState, str string, md *pmMatch) int {
	for i := 2; i < md.CaptureLength(); i += 2 {
		if md.IsPosCapture(i) {
			L.Push(lua.LNumber(md.Capture(i)))
		} else {
			L.Push(lua.LString(str[md.Capture(i):md.Capture(i+1)]))
		}
	}
	return md.CaptureLength()/2 - 1
}

// readOnlyBytes is s's bytes without a copy, as gopher-lua hands a
// string to pm.Find: the matcher only reads them.
func readOnlyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// luaIndex2StringIndex is gopher-lua's.
func luaIndex2StringIndex(str string, i int, start bool) int {
	if start && i != 0 {
		i -= 1
	}
	l := len(str)
	if i < 0 {
		i = l + i + 1
	}
	i = max(0, i)
	if !start && i > l {
		i = l
	}
	return i
}
