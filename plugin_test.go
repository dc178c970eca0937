package overshoot_test

// A user's limiter goes through the same checks as the six built-ins, using
// only the public API. This file is the README's "Plug in your own limiter"
// section and docs/plugging-in.md's example, compiled and run: if the API
// changes, it stops compiling. TestPluginDocsGoBlocksCompile holds every
// other Go block of the README and docs/ to the same: each compiles.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// mine is a token bucket as a user might fix it after reading the findings:
// last only moves forward, so a node whose clock is behind cannot rewind it.
// Stored: algos.BucketState, its Level the tokens in scaled units (one
// request costs l.Unit, one µs refills l.Refill), Last the last refill.
var mine = algos.Algorithm{
	Name:       "my-limiter",
	Decide:     decideMine,
	Promise:    algos.BucketPromise,
	StateDoc:   "tokens (scaled), last refill",
	StateInts:  func(algos.Limit) int64 { return 2 },
	ExactRetry: true,
}

func decideMine(s *algos.State, now int64, l algos.Limit) algos.Decision {
	capacity := l.Burst * l.Unit
	if !s.Set {
		*s = algos.BucketState{Level: capacity, Last: now}.State()
	}
	b := s.Bucket()
	if elapsed := now - b.Last; elapsed > 0 {
		if room := capacity - b.Level; elapsed >= (room+l.Refill-1)/l.Refill {
			b.Level = capacity
		} else {
			b.Level += elapsed * l.Refill
		}
		b.Last = now
	}
	behind := b.Last - now // the tokens are as of b.Last; a caller behind waits the gap too
	d := algos.Decision{}
	if b.Level >= l.Unit {
		b.Level -= l.Unit
		d.Allowed = true
	} else {
		d.RetryAfter = behind + (l.Unit-b.Level+l.Refill-1)/l.Refill
	}
	s.SetBucket(b)
	d.Remaining = b.Level / l.Unit
	d.Reset = behind + (capacity-b.Level+l.Refill-1)/l.Refill
	return d
}

func TestMyLimiterKeepsTheContract(t *testing.T) {
	t.Parallel()
	properties.Check(t, limiter.FromAlgorithm(mine))
}

func TestMyLimiterDeployed(t *testing.T) {
	t.Parallel()
	matrix, err := scenarios.RunMatrix(limiter.FromAlgorithms(mine), scenarios.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	matrix.WriteTo(&b)
	t.Log("\n" + b.String())
	cell, _ := matrix.Cell("my-limiter", model.NodeClock)
	if cell.PeakX > 2.1 {
		t.Errorf("peaks at %.2fx under 50 ms of skew", cell.PeakX)
	}
}

func TestMyLimiterNeverBreaksItsPromise(t *testing.T) {
	t.Parallel()
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: limiter.FromAlgorithm(mine), Deployment: model.StoreClock}}, scenarios.HuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts[0]; v.Caught {
		t.Errorf("seed %d, %s client: %s", v.FirstSeed, v.FirstClient, v.First.Reason)
	}
}

// A Go library you already ship, told the time as a time.Time: a GCRA in
// a struct (a stand-in for yours; adapters/xtimerate does the same for
// golang.org/x/time/rate). Nothing in it knows overshoot.
type gcraLibrary struct {
	tat                 time.Time
	interval, tolerance time.Duration
}

func (g *gcraLibrary) Allow(now time.Time) (ok bool, retryAfter, resetAfter time.Duration) {
	tat := g.tat
	if tat.Before(now) {
		tat = now
	}
	if allowAt := tat.Add(g.interval - g.tolerance); now.Before(allowAt) {
		return false, allowAt.Sub(now), tat.Sub(now)
	}
	g.tat = tat.Add(g.interval)
	return true, 0, g.tat.Sub(now)
}

// myLibrary is all it takes to put the library through overshoot: a Spec
// making one object per key, and a Decider telling it the time.
var myLibrary = limiter.Spec{
	Name: "my-library", Clock: limiter.CallerClock, Promise: algos.BucketPromise, ExactRetry: true,
	New: limiter.PerKey(func(l algos.Limit, _ int64) (limiter.Decider, error) {
		interval := time.Duration(l.Window/l.Rate) * time.Microsecond
		g := &gcraLibrary{interval: interval, tolerance: time.Duration(l.Burst) * interval}
		return limiter.DeciderFunc(func(now int64) algos.Decision {
			ok, retry, reset := g.Allow(time.UnixMicro(now))
			remaining := int64((g.tolerance - reset) / interval)
			return algos.Decision{Allowed: ok, Remaining: max(remaining, 0), RetryAfter: retry.Microseconds(), Reset: reset.Microseconds()}
		}), nil
	}),
}

// The contract as rapid properties (shrunk counterexample on failure): its own promise on one node,
// a full burst then a deny, an honest retry-after, a retry loop that never extends its lockout,
// remaining never negative and exact, reset reaching idle and never past it, refill capped after an hour idle, keys
// kept apart, and, for a caller-clock limiter, a step back with no negative refill or long lockout.
func TestMyLibraryKeepsTheContract(t *testing.T) {
	t.Parallel()
	properties.Check(t, myLibrary, properties.WithLimit(algos.MustLimit(100, algos.Second, 100)))
}

// The deployment matrix (golden/table.txt's, with your limiter as a row), then the mutants' hunt:
// does any of 200 seeds break the promise where it must hold?
func TestMyLibraryDeployed(t *testing.T) {
	t.Parallel()
	matrix, err := scenarios.RunMatrix([]limiter.Spec{myLibrary}, scenarios.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if cell, _ := matrix.Cell("my-library", model.StoreClock); cell.Violations != 0 || cell.PeakX > 2 {
		t.Errorf("behind a store: %d violations, peak %.2fx", cell.Violations, cell.PeakX)
	}
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: myLibrary, Deployment: model.StoreClock}}, scenarios.HuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts[0]; v.Caught || v.Errors > 0 {
		t.Errorf("seed %d, %s client: %v (%d errors)", v.FirstSeed, v.FirstClient, v.First, v.Errors)
	}
}

// Every Go block of README.md and docs/*.md compiles against this module's
// API, as this file does: a block marked `<!-- excerpt: <file> -->` is that
// file's text verbatim (the file is compiled and run by go test), and any
// other block is a file's declarations, vetted in a package of its own with
// the imports it names. A renamed function or field breaks the docs' build
// here, not a reader's.
func TestPluginDocsGoBlocksCompile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the docs' Go blocks with go vet")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the docs' Go blocks with")
	}
	packages, err := importablePackages()
	if err != nil {
		t.Fatal(err)
	}
	// In the module, so that its packages resolve, under testdata, which
	// `./...` and every walk of the module's packages skip.
	dir, err := os.MkdirTemp("testdata", "_docs-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	built := map[string]string{} // generated folder → the block's place in the docs
	excerpts := 0
	for _, doc := range docFiles(t) {
		blocks, _ := fences(readDoc(t, doc))
		for _, b := range blocks {
			if b.lang != "go" {
				continue
			}
			where := fmt.Sprintf("%s:%d", doc, b.line)
			code := strings.Join(b.body, "\n") + "\n"
			if file, ok := strings.CutPrefix(b.marker, "excerpt: "); ok {
				excerpts++
				if !strings.HasSuffix(file, ".go") || !strings.Contains(readDoc(t, file), code) {
					t.Errorf("%s: the block is not %s's text verbatim", where, file)
				}
				continue
			}
			src, err := withImports(code, packages)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			sub := filepath.Join(dir, fmt.Sprintf("block%d", len(built)))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sub, "block_test.go"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			built["./"+filepath.ToSlash(sub)] = where
		}
	}
	if excerpts == 0 || len(built) == 0 {
		t.Fatalf("%d excerpts and %d blocks to build: the docs' Go blocks are no longer read", excerpts, len(built))
	}
	// One go vet for every block: one load of the module, not one a block.
	pkgs := slices.Sorted(maps.Keys(built))
	out, err := exec.Command(gobin, append([]string{"vet"}, pkgs...)...).CombinedOutput()
	if err == nil {
		return
	}
	blamed := false
	for _, pkg := range pkgs {
		// go vet names a failing package by its import path, whose tail is
		// the block's folder.
		if bytes.Contains(out, []byte(filepath.ToSlash(strings.TrimPrefix(pkg, "./"))+"\n")) ||
			bytes.Contains(out, []byte(filepath.ToSlash(strings.TrimPrefix(pkg, "./"))+"/")) {
			blamed = true
			t.Errorf("%s: the Go block does not build", built[pkg])
		}
	}
	if !blamed {
		t.Errorf("the docs' Go blocks do not build")
	}
	t.Logf("go vet: %v\n%s", err, out)
}

// docsImports are the packages outside this module a docs block may name.
var docsImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "http": "net/http", "log": "log", "os": "os",
	"strings": "strings", "testing": "testing", "time": "time", "redis": "github.com/redis/go-redis/v9",
}

// importablePackages maps the name of each package of this module a user
// can import (not internal, not a command) to its import path, beside
// docsImports.
func importablePackages() (map[string]string, error) {
	pkgs := maps.Clone(docsImports)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "internal" || name == "cmd") {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
			if err != nil {
				return err
			}
			if name := file.Name.Name; name != "main" && path != "." {
				pkgs[name] = module + "/" + filepath.ToSlash(path)
			}
			break
		}
		return nil
	})
	return pkgs, err
}

// withImports is a docs block as a test file of its own package, importing
// every package the block names (a selector on a name the block does not
// declare).
func withImports(code string, packages map[string]string) ([]byte, error) {
	src := "package docs_test\n\n" + code
	file, err := parser.ParseFile(token.NewFileSet(), "block.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("not Go declarations: %v", err)
	}
	declared := map[string]bool{}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			declared[d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						declared[n.Name] = true
					}
				case *ast.TypeSpec:
					declared[s.Name.Name] = true
				}
			}
		}
	}
	named := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && !declared[x.Name] {
				if _, ok := packages[x.Name]; ok {
					named[x.Name] = true
				}
			}
		}
		return true
	})
	var imports strings.Builder
	for _, name := range slices.Sorted(maps.Keys(named)) {
		fmt.Fprintf(&imports, "import %s %q\n", name, packages[name])
	}
	return []byte("package docs_test\n\n" + imports.String() + "\n" + code), nil
}
