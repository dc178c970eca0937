package simredis

import (
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// fixAssignments works around gopher-lua's multiple assignment (issue 440
// of yuin/gopher-lua, open in v1.1.1, the version miniredis v2.40.0 uses):
// it evaluates `a, b = e1, e2` by storing e1 into a before it evaluates e2,
// so `a, b = b, a` leaves both b, and the sliding counter's
// `s_idx, cur, prev = idx, 0, cur` loses the count it moves. Lua evaluates
// every expression first. A script with such an assignment is printed
// again from gopher-lua's own syntax tree, with each one turned into
//
//	do local __simredis_1, __simredis_2 = e1, e2; a, b = __simredis_1, __simredis_2 end
//
// which gopher-lua evaluates as Lua does, every statement on its own line
// (so error positions keep their line numbers) and every operation in
// parentheses. A script without one is returned as it is; one gopher-lua
// cannot parse, with the parser's error.
func fixAssignments(src string) (string, error) {
	stmts, err := parse.Parse(strings.NewReader(src), "user_script")
	if err != nil {
		return src, err
	}
	if !hasMultiAssign(stmts) {
		return src, nil
	}
	p := &printer{line: 1}
	p.block(stmts)
	return p.b.String(), nil
}

func hasMultiAssign(stmts []ast.Stmt) bool {
	found := false
	var expr func(e ast.Expr)
	var block func(ss []ast.Stmt)
	expr = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.FunctionExpr:
			block(e.Stmts)
		case *ast.AttrGetExpr:
			expr(e.Object)
			expr(e.Key)
		case *ast.TableExpr:
			for _, f := range e.Fields {
				if f.Key != nil {
					expr(f.Key)
				}
				expr(f.Value)
			}
		case *ast.FuncCallExpr:
			if e.Func != nil {
				expr(e.Func)
			}
			if e.Receiver != nil {
				expr(e.Receiver)
			}
			for _, a := range e.Args {
				expr(a)
			}
		case *ast.LogicalOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.RelationalOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.StringConcatOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.ArithmeticOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.UnaryMinusOpExpr:
			expr(e.Expr)
		case *ast.UnaryNotOpExpr:
			expr(e.Expr)
		case *ast.UnaryLenOpExpr:
			expr(e.Expr)
		}
	}
	exprs := func(es []ast.Expr) {
		for _, e := range es {
			expr(e)
		}
	}
	block = func(ss []ast.Stmt) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ast.AssignStmt:
				if len(s.Lhs) > 1 {
					found = true
				}
				exprs(s.Lhs)
				exprs(s.Rhs)
			case *ast.LocalAssignStmt:
				exprs(s.Exprs)
			case *ast.FuncCallStmt:
				expr(s.Expr)
			case *ast.DoBlockStmt:
				block(s.Stmts)
			case *ast.WhileStmt:
				expr(s.Condition)
				block(s.Stmts)
			case *ast.RepeatStmt:
				block(s.Stmts)
				expr(s.Condition)
			case *ast.IfStmt:
				expr(s.Condition)
				block(s.Then)
				block(s.Else)
			case *ast.NumberForStmt:
				expr(s.Init)
				expr(s.Limit)
				if s.Step != nil {
					expr(s.Step)
				}
				block(s.Stmts)
			case *ast.GenericForStmt:
				exprs(s.Exprs)
				block(s.Stmts)
			case *ast.FuncDefStmt:
				expr(s.Func)
			case *ast.ReturnStmt:
				exprs(s.Exprs)
			}
		}
	}
	block(stmts)
	return found
}

// printer writes Lua from gopher-lua's syntax tree, each statement on the
// line it came from (or later, when the line before ran long).
type printer struct {
	b    strings.Builder
	line int
	tmp  int // temporaries named so far
}

func (p *printer) w(s ...string) {
	for _, x := range s {
		p.b.WriteString(x)
	}
}

func (p *printer) at(line int) {
	for p.line < line {
		p.b.WriteByte('\n')
		p.line++
	}
}

func (p *printer) block(ss []ast.Stmt) {
	for _, s := range ss {
		p.stmt(s)
	}
}

func (p *printer) names(ns []string) { p.w(strings.Join(ns, ", ")) }

func (p *printer) exprs(es []ast.Expr) {
	for i, e := range es {
		if i > 0 {
			p.w(", ")
		}
		p.expr(e)
	}
}

func (p *printer) stmt(s ast.Stmt) {
	p.at(s.Line())
	switch s := s.(type) {
	case *ast.AssignStmt:
		if len(s.Lhs) == 1 {
			p.exprs(s.Lhs)
			p.w(" = ")
			p.exprs(s.Rhs)
			break
		}
		tmps := make([]string, len(s.Lhs))
		for i := range tmps {
			p.tmp++
			tmps[i] = fmt.Sprintf("__simredis_%d", p.tmp)
		}
		p.w("do local ")
		p.names(tmps)
		p.w(" = ")
		p.exprs(s.Rhs)
		p.w("; ")
		p.exprs(s.Lhs)
		p.w(" = ")
		p.names(tmps)
		p.w(" end")
	case *ast.LocalAssignStmt:
		if f, ok := oneFunction(s); ok {
			p.w("local function ", s.Names[0])
			p.funcBody(f, false)
			break
		}
		p.w("local ")
		p.names(s.Names)
		if len(s.Exprs) > 0 {
			p.w(" = ")
			p.exprs(s.Exprs)
		}
	case *ast.FuncCallStmt:
		p.expr(s.Expr)
	case *ast.DoBlockStmt:
		p.w("do ")
		p.block(s.Stmts)
		p.w(" end")
	case *ast.WhileStmt:
		p.w("while ")
		p.expr(s.Condition)
		p.w(" do ")
		p.block(s.Stmts)
		p.w(" end")
	case *ast.RepeatStmt:
		p.w("repeat ")
		p.block(s.Stmts)
		p.w(" until ")
		p.expr(s.Condition)
	case *ast.IfStmt:
		p.w("if ")
		p.expr(s.Condition)
		p.w(" then ")
		p.block(s.Then)
		if len(s.Else) > 0 {
			p.w(" else ")
			p.block(s.Else)
		}
		p.w(" end")
	case *ast.NumberForStmt:
		p.w("for ", s.Name, " = ")
		p.expr(s.Init)
		p.w(", ")
		p.expr(s.Limit)
		if s.Step != nil {
			p.w(", ")
			p.expr(s.Step)
		}
		p.w(" do ")
		p.block(s.Stmts)
		p.w(" end")
	case *ast.GenericForStmt:
		p.w("for ")
		p.names(s.Names)
		p.w(" in ")
		p.exprs(s.Exprs)
		p.w(" do ")
		p.block(s.Stmts)
		p.w(" end")
	case *ast.FuncDefStmt:
		p.w("function ")
		if s.Name.Func != nil {
			p.funcName(s.Name.Func)
			p.funcBody(s.Func, false)
		} else {
			p.funcName(s.Name.Receiver)
			p.w(":", s.Name.Method)
			p.funcBody(s.Func, false)
		}
	case *ast.ReturnStmt:
		p.w("return")
		if len(s.Exprs) > 0 {
			p.w(" ")
			p.exprs(s.Exprs)
		}
	case *ast.BreakStmt:
		p.w("break")
	case *ast.LabelStmt:
		p.w("::", s.Name, "::")
	case *ast.GotoStmt:
		p.w("goto ", s.Label)
	default:
		panic(fmt.Sprintf("simredis: no printer for %T", s))
	}
	p.w("; ")
}

// oneFunction reports whether s is `local function f` (gopher-lua parses it
// as local f = function, and compiles that with f in scope in its body).
func oneFunction(s *ast.LocalAssignStmt) (*ast.FunctionExpr, bool) {
	if len(s.Names) != 1 || len(s.Exprs) != 1 {
		return nil, false
	}
	f, ok := s.Exprs[0].(*ast.FunctionExpr)
	return f, ok
}

func (p *printer) funcName(e ast.Expr) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		p.w(e.Value)
	case *ast.AttrGetExpr:
		p.funcName(e.Object)
		p.w(".", e.Key.(*ast.StringExpr).Value)
	default:
		panic(fmt.Sprintf("simredis: function name %T", e))
	}
}

func (p *printer) funcBody(f *ast.FunctionExpr, _ bool) {
	p.w("(")
	p.names(f.ParList.Names)
	if f.ParList.HasVargs {
		if len(f.ParList.Names) > 0 {
			p.w(", ")
		}
		p.w("...")
	}
	p.w(") ")
	p.block(f.Stmts)
	p.w(" end")
}

// prefix prints e where Lua wants a prefix expression (before ., [, : or
// call arguments): a name, an index or a call as it is, anything else in
// parentheses.
func (p *printer) prefix(e ast.Expr) {
	switch x := e.(type) {
	case *ast.IdentExpr, *ast.AttrGetExpr:
		p.expr(e)
		return
	case *ast.FuncCallExpr:
		if !x.AdjustRet {
			p.expr(e)
			return
		}
	}
	p.w("(")
	p.expr(e)
	p.w(")")
}

func (p *printer) expr(e ast.Expr) {
	switch e := e.(type) {
	case *ast.TrueExpr:
		p.w("true")
	case *ast.FalseExpr:
		p.w("false")
	case *ast.NilExpr:
		p.w("nil")
	case *ast.NumberExpr:
		p.w(e.Value)
	case *ast.StringExpr:
		p.w(quote(e.Value))
	case *ast.Comma3Expr:
		if e.AdjustRet {
			p.w("(...)")
		} else {
			p.w("...")
		}
	case *ast.IdentExpr:
		p.w(e.Value)
	case *ast.AttrGetExpr:
		p.prefix(e.Object)
		p.w("[")
		p.expr(e.Key)
		p.w("]")
	case *ast.TableExpr:
		p.w("{")
		for i, f := range e.Fields {
			if i > 0 {
				p.w(", ")
			}
			if f.Key != nil {
				p.w("[")
				p.expr(f.Key)
				p.w("] = ")
			}
			p.expr(f.Value)
		}
		p.w("}")
	case *ast.FuncCallExpr:
		if e.AdjustRet {
			p.w("(")
		}
		if e.Receiver != nil {
			p.prefix(e.Receiver)
			p.w(":", e.Method)
		} else {
			p.prefix(e.Func)
		}
		p.w("(")
		p.exprs(e.Args)
		p.w(")")
		if e.AdjustRet {
			p.w(")")
		}
	case *ast.LogicalOpExpr:
		p.binary(e.Lhs, e.Operator, e.Rhs)
	case *ast.RelationalOpExpr:
		p.binary(e.Lhs, e.Operator, e.Rhs)
	case *ast.StringConcatOpExpr:
		p.binary(e.Lhs, "..", e.Rhs)
	case *ast.ArithmeticOpExpr:
		p.binary(e.Lhs, e.Operator, e.Rhs)
	case *ast.UnaryMinusOpExpr:
		p.w("(- ")
		p.expr(e.Expr)
		p.w(")")
	case *ast.UnaryNotOpExpr:
		p.w("(not ")
		p.expr(e.Expr)
		p.w(")")
	case *ast.UnaryLenOpExpr:
		p.w("(# ")
		p.expr(e.Expr)
		p.w(")")
	case *ast.FunctionExpr:
		p.w("function")
		p.funcBody(e, false)
	default:
		panic(fmt.Sprintf("simredis: no printer for %T", e))
	}
}

func (p *printer) binary(l ast.Expr, op string, r ast.Expr) {
	p.w("(")
	p.expr(l)
	p.w(" ", op, " ")
	p.expr(r)
	p.w(")")
}

// quote writes s as a Lua string literal that reads back as s, byte for
// byte: printable ASCII as it is, everything else as a decimal escape.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\%03d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
