package algos_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// judgeFiles hold the promises and their checks: the judge.
var judgeFiles = []string{"checker.go", "promise.go", "envelope.go"}

// The judge shares no arithmetic with the algorithms it judges, either way
// round: the judge's files call no function or Limit method declared in
// the other files (printing a duration with FormatMicros aside) and read
// none of the limit's derived fields (Unit, Refill), and the other files
// call none of the judge's private helpers. So a wrong helper can move an
// algorithm or its judge, but never both in step.
func TestCheckerSharesNoArithmeticWithTheAlgorithms(t *testing.T) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	for _, name := range judgeFiles {
		if files[name] == nil {
			t.Fatalf("%s not found: the judge's files have moved; update judgeFiles", name)
		}
	}

	// What each side declares: functions, and methods of Limit.
	judgeOwn, algoOwn, limitMethods := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for name, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			switch {
			case fn.Recv != nil:
				if recvType(fn) == "Limit" {
					limitMethods[fn.Name.Name] = true
				}
			case slices.Contains(judgeFiles, name):
				judgeOwn[fn.Name.Name] = true
			default:
				algoOwn[fn.Name.Name] = true
			}
		}
	}
	// Printing is shared on purpose; it decides nothing.
	delete(algoOwn, "FormatMicros")
	delete(limitMethods, "String")
	forbiddenFields := map[string]bool{"Unit": true, "Refill": true}

	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	for name, f := range files {
		judge := slices.Contains(judgeFiles, name)
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if judge && (limitMethods[n.Sel.Name] || forbiddenFields[n.Sel.Name]) {
					report(n, "the judge uses the limit's ."+n.Sel.Name+", which the algorithms use")
				}
				ast.Inspect(n.X, visit)
				return false // the name after the dot is no package-level identifier
			case *ast.Ident:
				if judge && algoOwn[n.Name] {
					report(n, "the judge uses "+n.Name+", declared for the algorithms")
				}
				if !judge && judgeOwn[n.Name] && !ast.IsExported(n.Name) {
					report(n, "an algorithm's file uses "+n.Name+", the judge's own helper")
				}
			}
			return true
		}
		ast.Inspect(f, visit)
	}
	slices.Sort(found)
	for _, f := range found {
		t.Error(f)
	}
}

// recvType is the name of a method's receiver type, pointer or not.
func recvType(fn *ast.FuncDecl) string {
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
