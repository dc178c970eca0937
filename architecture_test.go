package overshoot_test

// The README's architecture section, checked: each package imports only the
// packages of this module it is allowed to, the test helpers under internal/
// are imported by tests alone, and every package says in its doc.go what it
// owns and what it must not import.

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/overshoot-go/overshoot"

// allowedImports is the picture in the README: for each package, the
// packages of this module its non-test code may import. The graph only
// points down: algos at the bottom, the simulator on it, then traffic and
// reports, the live replay and the study beside them.
var allowedImports = map[string][]string{
	"algos":               {"internal/arith"},
	"algos/lua":           {"algos", "internal/planted"},
	"limiter":             {"algos"},
	"model":               {"algos", "limiter", "record"},
	"record":              {"algos", "internal/encode"},
	"properties":          {"algos", "differential", "limiter", "model"},
	"adversary":           {"algos", "model"},
	"scenarios":           {"algos", "differential", "internal/encode", "limiter", "model"},
	"differential":        {"algos", "limiter", "model"},
	"replay":              {"algos", "algos/lua", "limiter", "model", "record"},
	"study":               {"algos", "algos/lua", "internal/planted", "limiter", "model"},
	"simredis":            {},
	"adapters/xtimerate":  {"algos", "limiter"},
	"adapters/redisrate":  {"adapters/redislib", "algos", "limiter"},
	"adapters/redislib":   {"algos", "limiter", "simredis"},
	"internal/arith":      {},
	"internal/planted":    {"algos", "internal/arith", "limiter"},
	"internal/golden":     {"internal/atomicfile"},
	"internal/atomicfile": {},
	"internal/redistest":  {"internal/atomicfile"},
	"cmd/badges":          {"internal/findings"},
	"cmd/report":          {"internal/findings", "report"},
	"cmd/judge":           {"algos", "live", "record"},
	"internal/findings":   {},
	"internal/encode":     {"algos"},
	"report":              {"algos", "internal/findings", "scenarios"},
	"httplimit":           {"algos", "algos/lua", "limiter"},
	"httpcheck":           {"algos", "internal/encode", "live", "record"}, // live sends and parses its exchanges (one parser of the header conventions) and judges them again; algos for the Limit and promise that judge reads, never an algorithm
	"ceiling":             {"algos", "algos/lua", "httplimit", "internal/atomicfile", "internal/encode", "limiter"},
	"live":                {"algos", "internal/encode", "record"},
	"drift":               {"algos", "httplimit", "limiter", "live", "record"},
	"metrics":             {},
	"traffic":             {"algos", "model"},
	"drills":              {},
	"capacity":            {"algos", "fleet", "internal/encode", "limiter", "metrics", "traffic"},
	"fleet":               {"algos", "limiter"},
	"inflight":            {"algos", "limiter"},
}

// testHelpers may be imported by test files only.
var testHelpers = []string{"internal/golden", "internal/redistest"}

// packageImports returns, for every folder of the module holding Go files
// (the root as "."), the module packages its non-test files import and
// whether it has a doc.go.
func packageImports(t *testing.T) (map[string][]string, map[string]bool) {
	t.Helper()
	imports, docs := map[string][]string{}, map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata" || path == "golden") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if d.Name() == "doc.go" {
			docs[dir] = true
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := imports[dir]; !ok {
			imports[dir] = nil
		}
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if rel, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(imports[dir], rel) {
				imports[dir] = append(imports[dir], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports, docs
}

func TestEveryPackageImportsOnlyWhatTheArchitectureAllows(t *testing.T) {
	imports, docs := packageImports(t)
	for dir, got := range imports {
		allowed, ok := allowedImports[dir]
		if !ok {
			t.Errorf("package %s is not in the architecture (allowedImports and the README's picture)", dir)
			continue
		}
		for _, p := range got {
			if !slices.Contains(allowed, p) {
				t.Errorf("%s imports %s; the architecture allows it %v", dir, p, allowed)
			}
		}
		if !docs[dir] {
			t.Errorf("%s has no doc.go saying what it owns and what it must not import", dir)
		}
	}
	for dir := range allowedImports {
		if _, ok := imports[dir]; !ok {
			t.Errorf("the architecture lists %s, which has no Go files", dir)
		}
	}
}

func TestTestHelpersAreImportedByTestsOnly(t *testing.T) {
	imports, _ := packageImports(t)
	for dir, got := range imports {
		for _, h := range testHelpers {
			if slices.Contains(got, h) {
				t.Errorf("%s imports the test helper %s outside its tests", dir, h)
			}
		}
	}
}

// Every test binary that asks redistest for a Redis runs its tests under
// redistest.Main, which shares one container across the binary: without it
// each test would start (and wait for) a container of its own.
func TestRedisTestsShareOneContainerPerBinary(t *testing.T) {
	calls, mains := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "internal/redistest/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		calls[dir] = calls[dir] || strings.Contains(string(b), "redistest.Start(")
		mains[dir] = mains[dir] || strings.Contains(string(b), "redistest.Main(m)")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range calls {
		if calls[dir] && !mains[dir] {
			t.Errorf("%s calls redistest.Start but no TestMain of it runs redistest.Main(m)", dir)
		}
	}
}

// The architecture names every package the same way the README does.
func TestReadmeArchitectureNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Architecture\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if section == "" {
		t.Fatal("README.md has no ## Architecture section")
	}
	for dir := range allowedImports {
		if !strings.Contains(section, "`"+dir+"`") && !strings.Contains(section, "`"+dir+"/`") {
			t.Errorf("README's architecture section does not name `%s`", dir)
		}
	}
}
