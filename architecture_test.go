package overshoot_test

// The architecture (the README's picture, docs/architecture.md's table),
// checked: each package imports only the packages of this module it is
// allowed to, the test helpers under internal/ are imported by tests alone,
// and every package says in its doc.go what it owns and what it must not
// import.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/overshoot-go/overshoot"

// allowedImports is the picture in the README (and each package's row in
// docs/architecture.md): for each package, the packages of this module its
// non-test code may import. The graph only points down: algos at the
// bottom, the simulator on it, then traffic and reports, the live replay
// and the study beside them.
var allowedImports = map[string][]string{
	"algos":                 {"internal/arith"},
	"breach":                {},
	"redis/lua":             {"algos", "internal/planted", "limiter", "traffic"}, // traffic makes the differential's calls (DifferentialCalls); limiter's Clock says whose time a differential call ran at
	"redis/conn":            {},
	"limiter":               {"algos"},
	"model":                 {"algos", "limiter", "record"},
	"record":                {"algos", "internal/encode"},
	"properties":            {"algos", "differential", "limiter", "model", "record"},
	"adversary":             {"algos", "model", "record", "traffic"},                                                                                       // traffic places the search's drawn waits and edits into requests within the bounds (traffic.AttackBounds); the rapid draws stay in adversary
	"scenarios":             {"algos", "breach", "differential", "internal/encode", "internal/svgchart", "judge", "limiter", "model", "record", "traffic"}, // traffic makes the clients' requests (open-loop, closed-loop, the edge prober, the clock faults'); scenarios wires them into runs and measures them
	"differential":          {"algos", "limiter", "model", "record"},
	"replay":                {"algos", "redis/conn", "redis/lua", "limiter", "model", "record"},
	"study":                 {"algos", "redis/conn", "redis/lua", "internal/planted", "limiter", "live", "model", "record", "traffic"}, // traffic makes the live trials' plans (send times, phases, release offsets), which the study's models play too; study chooses them, and live's driver sends every trial
	"simredis":              {},
	"adapters/xtimerate":    {"algos", "limiter"},
	"adapters/redisrate":    {"adapters/redislib", "algos", "limiter"},
	"adapters/redislib":     {"algos", "limiter", "simredis"},
	"internal/arith":        {},
	"internal/planted":      {"algos", "internal/arith", "limiter"},
	"internal/golden":       {"internal/atomicfile"},
	"internal/atomicfile":   {},
	"internal/redistest":    {"internal/atomicfile"},
	"internal/testparallel": {},
	"internal/race":         {},
	"internal/adaptertest":  {"algos"}, // the adapters' tests' steps and limits are algos' Decisions and Limits
	"cmd/badges":            {"internal/findings"},
	"cmd/report":            {"internal/findings", "report"},
	"cmd/judge":             {"algos", "judge", "record"},
	"internal/findings":     {},
	"internal/encode":       {"algos"},
	"internal/svgchart":     {},
	"report":                {"algos", "internal/findings", "scenarios"},
	"httplimit":             {"algos", "redis/lua", "limiter"},
	"httpcheck":             {"algos", "internal/encode", "judge", "live", "record"}, // live sends and parses its exchanges (one parser of the header conventions), judge judges them again; algos for the Limit and promise that judge reads, never an algorithm
	"ceiling":               {"algos", "httplimit", "internal/atomicfile", "internal/encode", "limiter", "live", "record", "redis/lua"},
	"live":                  {"algos", "record"},
	"judge":                 {"algos", "breach", "internal/encode", "limiter", "model", "record", "traffic"}, // the simulator's runs (model.Result) are judged exactly, per instance, on the clients' keys (traffic.NumClients) against the Spec's promise (limiter); records from every producer, within their spans
	"drift":                 {"algos", "httplimit", "limiter", "live", "record"},
	"metrics":               {"internal/svgchart", "record"},
	"traffic":               {"algos", "record"}, // algos for the Limit the simulator's clients are shaped by (and its µs units), never an algorithm; record for the words it speaks (Request, Stream, Client, Reply) and the one ParseError of a line a reader cannot read; never the simulator it feeds
	"drills":                {},
	"capacity":              {"algos", "fleet", "internal/encode", "limiter", "metrics", "model", "record", "traffic"},
	"fleet":                 {"algos", "limiter"},
	"inflight":              {"algos", "limiter"},
}

// testHelpers may be imported by test files only.
var testHelpers = []string{"internal/adaptertest", "internal/golden", "internal/race", "internal/redistest", "internal/testparallel"}

// packageImports returns, for every folder of the module holding Go files
// (the root as "."), the module packages its non-test files import and
// whether it has a doc.go.
func packageImports(t *testing.T) (map[string][]string, map[string]bool) {
	t.Helper()
	imports, docs := map[string][]string{}, map[string]bool{}
	eachSourceFile(t, parser.ImportsOnly, func(path, dir string, f *ast.File) {
		if filepath.Base(path) == "doc.go" {
			docs[dir] = true
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
	})
	return imports, docs
}

// eachSourceFile parses, with mode, every non-test Go file of the module
// (not under testdata, golden or a dot folder) and calls visit with its
// path, its folder (the root as ".") and its syntax.
func eachSourceFile(t *testing.T, mode parser.Mode, visit func(path, dir string, f *ast.File)) {
	t.Helper()
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
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		visit(path, filepath.ToSlash(filepath.Dir(path)), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEveryPackageImportsOnlyWhatTheArchitectureAllows(t *testing.T) {
	imports, docs := packageImports(t)
	for dir, got := range imports {
		allowed, ok := allowedImports[dir]
		if !ok {
			t.Errorf("package %s is not in the architecture (allowedImports, the README's picture and docs/architecture.md)", dir)
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

// simulatedPackages are the packages that decide, simulate, generate,
// judge and report in simulated time: every time in them is integer µs,
// told, never read.
var simulatedPackages = []string{"adversary", "algos", "breach", "capacity", "differential", "fleet", "judge", "limiter", "metrics", "model", "record", "scenarios", "traffic"}

// The simulated side reads no clock and speaks no time.Duration: none of
// its packages imports "time" outside its tests. Durations enter at the
// live edge (live, study, ceiling, replay), which hands the core µs.
func TestSimulatedPackagesImportNoTime(t *testing.T) {
	checked := map[string]bool{}
	eachSourceFile(t, parser.ImportsOnly, func(path, dir string, f *ast.File) {
		if !slices.Contains(simulatedPackages, dir) {
			return
		}
		checked[dir] = true
		for _, imp := range f.Imports {
			if imp.Path.Value == `"time"` {
				t.Errorf("%s imports time: the simulated side keeps every time in integer µs and reads no clock", path)
			}
		}
	})
	for _, dir := range simulatedPackages {
		if !checked[dir] {
			t.Errorf("simulatedPackages lists %s, which has no Go files", dir)
		}
	}
}

// tree is the part of the house a package belongs to: its first folder, or
// its first two under internal/, adapters/ and cmd/ (those folders only
// group packages that have nothing else in common).
func tree(dir string) string {
	parts := strings.Split(dir, "/")
	if len(parts) > 1 && slices.Contains([]string{"internal", "adapters", "cmd"}, parts[0]) {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// No import runs back up: the packages folded into their trees still form
// a graph without a cycle, so a subpackage never reaches above its own
// parent (as algos/lua, the Redis layer under the pure algos, once reached
// internal/planted, which imports algos).
func TestNoImportRunsBackUp(t *testing.T) {
	imports, _ := packageImports(t)
	edges := map[string][]string{}
	for dir, got := range imports {
		for _, p := range got {
			if from, to := tree(dir), tree(p); from != to && !slices.Contains(edges[from], to) {
				edges[from] = append(edges[from], to)
			}
		}
	}
	const unseen, open, done = 0, 1, 2
	state := map[string]int{}
	var path []string
	var visit func(n string)
	visit = func(n string) {
		switch state[n] {
		case open:
			at := slices.Index(path, n)
			t.Errorf("imports run back up: %s", strings.Join(append(path[at:], n), " → "))
			return
		case done:
			return
		}
		state[n] = open
		path = append(path, n)
		next := slices.Clone(edges[n])
		slices.Sort(next)
		for _, m := range next {
			visit(m)
		}
		path = path[:len(path)-1]
		state[n] = done
	}
	var trees []string
	for n := range edges {
		trees = append(trees, n)
	}
	slices.Sort(trees)
	for _, n := range trees {
		visit(n)
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

// The architecture names every package the same way the docs do: the
// README's picture (its ## Architecture section) draws each one, and
// docs/architecture.md's table says what each owns and may import.
func TestArchitectureDocsNameEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, picture, _ := strings.Cut(string(readme), "\n## Architecture\n")
	picture, _, _ = strings.Cut(picture, "\n## ")
	if picture == "" {
		t.Fatal("README.md has no ## Architecture section")
	}
	table, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for dir := range allowedImports {
		// In the picture a package is a word, or a folder ending in '/'.
		drawn := regexp.MustCompile(`(^|[\s(,])` + regexp.QuoteMeta(dir) + `/?([\s),]|$)`)
		if !drawn.MatchString(picture) {
			t.Errorf("README's architecture picture does not draw %s", dir)
		}
		if !strings.Contains(string(table), "| `"+dir+"` |") {
			t.Errorf("docs/architecture.md's table has no row for `%s`", dir)
		}
	}
}

// Every test the Makefile's SIMULATIONS names (make test runs them without
// -race, and skips them in the raced run) is a test of one of
// SIMULATION_PACKAGES, the packages whose simulations it runs: a name
// there that no such package holds would be skipped in the raced run of
// its own package and never run at all.
func TestMakefileSimulationsAreTestsOfItsPackages(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(mk), "$\\\n", "")
	names := regexp.MustCompile(`(?m)^SIMULATIONS := \^\(([^)]*)\)\$\$$`).FindStringSubmatch(text)
	pkgs := regexp.MustCompile(`(?m)^SIMULATION_PACKAGES := (.*)$`).FindStringSubmatch(text)
	if names == nil || pkgs == nil {
		t.Fatal("the Makefile has no SIMULATIONS := ^(...)$$ or SIMULATION_PACKAGES := line")
	}
	defined := map[string]string{}
	for _, pkg := range strings.Fields(pkgs[1]) {
		files, _ := filepath.Glob(filepath.Join(pkg, "*_test.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Example)\w*)\(`).FindAllStringSubmatch(string(src), -1) {
				defined[m[1]] = f
			}
		}
	}
	listed := strings.Split(names[1], "|")
	if len(listed) < 10 {
		t.Fatalf("read %d names from SIMULATIONS: the Makefile is no longer read", len(listed))
	}
	for _, name := range listed {
		if _, ok := defined[name]; !ok {
			t.Errorf("SIMULATIONS names %s, which no test file of SIMULATION_PACKAGES (%s) defines", name, pkgs[1])
		}
	}
}

// sharedTypeNames are the exported type names more than one package
// defines, each with the packages that do and why the word is shared. One
// name is one idea: a new type whose name another package already
// exports is either that idea (use the existing type) or a different one
// (name it for what it is), and adding it here takes a reason.
var sharedTypeNames = map[string]struct {
	packages []string
	why      string
}{
	"Limiter": {[]string{"fleet", "httplimit", "inflight", "limiter"}, "the limiter under test (limiter) and the packages' own limiters: a fleet and the concurrency limiter implement it, httplimit's decides a request for the middleware"},
	"Options": {[]string{"httpcheck", "httplimit", "internal/redistest", "metrics", "scenarios"}, "each package's own settings, read where they are used"},
	"Option":  {[]string{"judge", "properties"}, "one setting of one call, as a functional option: judge's of Records, properties' of Check"},
	"Verdict": {[]string{"judge", "scenarios"}, "a run's records judged (judge) and a hunt's verdict (scenarios, the other judge of issue 26)"},
}

// An exported type name is defined by one package, or its sharing is
// stated in sharedTypeNames with the same packages: two packages may not
// take one word for two ideas, nor for one idea twice, unnoticed.
func TestExportedTypeNamesAreSharedOnlyWhereStated(t *testing.T) {
	defined := map[string][]string{}
	eachSourceFile(t, parser.SkipObjectResolution, func(_, dir string, f *ast.File) {
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				if name := s.(*ast.TypeSpec).Name.Name; ast.IsExported(name) && !slices.Contains(defined[name], dir) {
					defined[name] = append(defined[name], dir)
				}
			}
		}
	})
	for name, dirs := range defined {
		slices.Sort(dirs)
		stated, ok := sharedTypeNames[name]
		switch {
		case len(dirs) > 1 && !ok:
			t.Errorf("type %s is defined in %s: one name, one idea (use the existing type, or name the new one for what it is; a shared word takes a reason in sharedTypeNames)", name, strings.Join(dirs, ", "))
		case ok && !slices.Equal(dirs, stated.packages):
			t.Errorf("type %s is defined in %s; sharedTypeNames states %s", name, strings.Join(dirs, ", "), strings.Join(stated.packages, ", "))
		}
	}
	for name := range sharedTypeNames {
		if len(defined[name]) < 2 {
			t.Errorf("sharedTypeNames states %s, which one package or none defines now: remove it", name)
		}
	}
}
