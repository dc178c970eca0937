package overshoot_test

// The README is the front door and docs/ the reference; these tests keep
// the two walkable and true: the README stays short, every relative link
// and #anchor resolves, prose lines stay readable, and every copy of a
// golden file's output in them is that file's bytes, so that a golden
// change leaving a stale copy behind fails. plugin_test.go holds their Go
// blocks to compiling, reports_test.go their schema list to the code,
// architecture_test.go their package table to the imports, and cmd/badges
// the README's badges to the findings.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// readmeMaxLines is the front door's budget (issue 27): what overshoot
// measures, the two commands, the findings index, a limiter plugged in,
// the architecture picture, and links; the rest belongs in docs/.
const readmeMaxLines = 300

// docFiles is README.md and every page under docs/, slash paths from the
// module root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ has no pages")
	}
	slices.Sort(pages)
	return append([]string{"README.md"}, pages...)
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fence is one fenced code block of a markdown file: its language, its
// lines, the line its opening fence is on (1-based), and the HTML comment
// on the line just before it, if any ("golden: ..." or "excerpt: ...").
type fence struct {
	lang   string
	body   []string
	line   int
	marker string
}

var markerRe = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// fences splits a markdown file into its fenced blocks and its prose (the
// lines outside them, each with its line number).
func fences(text string) (blocks []fence, prose map[int]string) {
	lines := strings.Split(text, "\n")
	prose = map[int]string{}
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			prose[i+1] = lines[i]
			continue
		}
		b := fence{lang: strings.TrimSpace(strings.TrimPrefix(lines[i], "```")), line: i + 1}
		if i > 0 {
			if m := markerRe.FindStringSubmatch(lines[i-1]); m != nil {
				b.marker = m[1]
			}
		}
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		b.body = lines[i+1 : min(j, len(lines))]
		blocks = append(blocks, b)
		i = j
	}
	return blocks, prose
}

// The README is a front door: at most readmeMaxLines lines, and a link to
// every page of the reference.
func TestREADMEIsAFrontDoorToEveryPage(t *testing.T) {
	readme := readDoc(t, "README.md")
	if n := strings.Count(strings.TrimSuffix(readme, "\n"), "\n") + 1; n > readmeMaxLines {
		t.Errorf("README.md has %d lines, over its budget of %d: move the detail to a page under docs/", n, readmeMaxLines)
	}
	for _, page := range docFiles(t)[1:] {
		if !strings.Contains(readme, "]("+page+")") && !strings.Contains(readme, "]("+page+"#") {
			t.Errorf("README.md does not link to %s", page)
		}
	}
}

var (
	linkRe     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpanRe = regexp.MustCompile("`[^`]*`")
	lineAnchor = regexp.MustCompile(`^L([0-9]+)$`)
)

// Every relative link in README.md and docs/*.md names a file or folder
// of this repository, and every #anchor a heading of the page it points
// to (or, on a file that is not markdown, #L<n> a line it has).
func TestDocsLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		_, prose := fences(readDoc(t, path))
		anchors[path] = headingAnchors(prose)
		return anchors[path]
	}
	checked := 0
	for _, doc := range docFiles(t) {
		_, prose := fences(readDoc(t, doc))
		for _, n := range slices.Sorted(maps.Keys(prose)) {
			for _, m := range linkRe.FindAllStringSubmatch(codeSpanRe.ReplaceAllString(prose[n], ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				path := doc
				if file != "" {
					path = filepath.ToSlash(filepath.Join(filepath.Dir(doc), file))
				}
				info, err := os.Stat(path)
				if err != nil {
					t.Errorf("%s:%d: link %s: %s does not exist", doc, n, target, path)
					continue
				}
				switch {
				case anchor == "":
				case strings.HasSuffix(path, ".md"):
					if !anchorsOf(path)[anchor] {
						t.Errorf("%s:%d: link %s: %s has no heading with the anchor #%s", doc, n, target, path, anchor)
					}
				case lineAnchor.MatchString(anchor) && !info.IsDir():
					line, _ := strconv.Atoi(lineAnchor.FindStringSubmatch(anchor)[1])
					if lines := strings.Count(readDoc(t, path), "\n"); line < 1 || line > lines {
						t.Errorf("%s:%d: link %s: %s has %d lines", doc, n, target, path, lines)
					}
				default:
					t.Errorf("%s:%d: link %s: an anchor on a file that is not markdown must be #L<line>", doc, n, target)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links checked; the link pattern %s no longer reads the docs", checked, linkRe)
	}
}

// headingAnchors is the set of anchors GitHub gives a page's headings:
// the heading's text lowercased, every character but letters, marks,
// digits, '_', '-' and spaces dropped, spaces made '-', and "-1", "-2",
// ... after a repeated one.
func headingAnchors(prose map[int]string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, n := range slices.Sorted(maps.Keys(prose)) {
		line := prose[n]
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		slug := anchorOf(line[level+1:])
		if k := seen[slug]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The anchors are GitHub's, so that a link that resolves here resolves
// there.
func TestDocsAnchorsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"Token bucket under skew":              "token-bucket-under-skew",
		"GET, decide, SET":                     "get-decide-set",
		"x/time/rate under skew":               "xtimerate-under-skew",
		"redis_rate deployed":                  "redis_rate-deployed",
		"Wiped store against the wipe's place": "wiped-store-against-the-wipes-place",
		"The `Spec`: µs and ±":                 "the-spec-µs-and-",
	} {
		if got := anchorOf(heading); got != want {
			t.Errorf("anchor of %q: %q, want %q", heading, got, want)
		}
	}
	got := headingAnchors(map[int]string{1: "# A", 2: "## A", 3: "#4, not a heading", 4: "### A"})
	if want := map[string]bool{"a": true, "a-1": true, "a-2": true}; !equalSets(got, want) {
		t.Errorf("repeated headings: %v, want %v", got, want)
	}
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// proseMaxChars is the longest prose line the docs may have: past it a
// diff or a terminal is unreadable. Tables and code are laid out by their
// own rules.
const proseMaxChars = 200

// No prose line of README.md or docs/*.md is longer than proseMaxChars
// characters (table rows and fenced code aside).
func TestDocsProseLinesAreShort(t *testing.T) {
	for _, doc := range docFiles(t) {
		_, prose := fences(readDoc(t, doc))
		for _, n := range slices.Sorted(maps.Keys(prose)) {
			line := prose[n]
			if strings.HasPrefix(line, "|") {
				continue
			}
			if c := len([]rune(line)); c > proseMaxChars {
				t.Errorf("%s:%d: %d characters, over %d: reflow it", doc, n, c, proseMaxChars)
			}
		}
	}
}

// goldenCopy is a block's "golden: <file>[ lines <spec>]" marker read: the
// golden file and its 1-based lines the block copies (all of them when the
// marker names none).
type goldenCopy struct {
	file  string
	lines []int
}

func parseGoldenMarker(marker string) (goldenCopy, bool, error) {
	rest, ok := strings.CutPrefix(marker, "golden:")
	if !ok {
		return goldenCopy{}, false, nil
	}
	file, spec, hasLines := strings.Cut(strings.TrimSpace(rest), " lines ")
	g := goldenCopy{file: strings.TrimSpace(file)}
	if !strings.HasPrefix(g.file, "golden/") {
		return g, true, fmt.Errorf("%q: a golden copy names a file under golden/", marker)
	}
	if !hasLines {
		return g, true, nil
	}
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 1 || b < a || (len(g.lines) > 0 && a <= g.lines[len(g.lines)-1]) {
			return g, true, fmt.Errorf("%q: lines must be increasing numbers or ranges a-b, comma-separated", marker)
		}
		for l := a; l <= b; l++ {
			g.lines = append(g.lines, l)
		}
	}
	return g, true, nil
}

// checkGoldenCopy compares a block with the golden lines it claims to
// copy. Each line is compared without its trailing spaces (a markdown
// editor strips them; they are invisible in the page); a block line
// starting with "..." stands for lines left out, and may only stand
// where the named lines skip some.
func checkGoldenCopy(block []string, golden string, lines []int) error {
	all := strings.Split(strings.TrimSuffix(golden, "\n"), "\n")
	if lines == nil {
		for l := range all {
			lines = append(lines, l+1)
		}
	}
	j := 0
	for i, got := range block {
		if strings.HasPrefix(got, "...") && j > 0 && j < len(lines) && lines[j] != lines[j-1]+1 {
			continue
		}
		if j == len(lines) {
			return fmt.Errorf("block line %d, %q, is past the %d lines it copies", i+1, got, len(lines))
		}
		if lines[j] > len(all) {
			return fmt.Errorf("the golden file has %d lines, the block copies its line %d", len(all), lines[j])
		}
		if want := strings.TrimRight(all[lines[j]-1], " "); strings.TrimRight(got, " ") != want {
			return fmt.Errorf("block line %d is\n\t%q\nwhere the golden file's line %d is\n\t%q", i+1, got, lines[j], want)
		}
		j++
	}
	if j < len(lines) {
		return fmt.Errorf("the block ends before the golden file's line %d", lines[j])
	}
	return nil
}

// Every block of README.md and docs/*.md marked as a golden file's output
// (`<!-- golden: golden/<file>[ lines 3-9, 12] -->` on the line before
// it) is that file's text, and a block that copies a golden file without
// saying so is an error too: a golden change cannot leave a stale copy.
func TestDocsGoldenCopiesMatchTheGoldens(t *testing.T) {
	goldens := map[string]string{}
	err := filepath.WalkDir("golden", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".txt") {
			goldens[filepath.ToSlash(path)] = readDoc(t, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, doc := range docFiles(t) {
		blocks, _ := fences(readDoc(t, doc))
		for _, b := range blocks {
			g, ok, err := parseGoldenMarker(b.marker)
			if err != nil {
				t.Errorf("%s:%d: %v", doc, b.line, err)
				continue
			}
			if !ok {
				if file := copiedGolden(b.body, goldens); file != "" && b.lang != "go" {
					t.Errorf("%s:%d: the block copies %s; mark it <!-- golden: %s lines ... --> so that it is checked", doc, b.line, file, file)
				}
				continue
			}
			copies++
			golden, found := goldens[g.file]
			if !found {
				t.Errorf("%s:%d: %s is not a golden text file", doc, b.line, g.file)
				continue
			}
			if err := checkGoldenCopy(b.body, golden, g.lines); err != nil {
				t.Errorf("%s:%d: the copy of %s is stale (make golden changed it?): %v", doc, b.line, g.file, err)
			}
		}
	}
	if copies < 10 {
		t.Errorf("only %d golden copies checked; the marker no longer reads", copies)
	}
}

// copiedGolden is the golden file whose lines hold every one of the
// block's (three at least, "..." lines aside), or "".
func copiedGolden(block []string, goldens map[string]string) string {
	var lines []string
	for _, l := range block {
		if l = strings.TrimRight(l, " "); strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "...") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 3 {
		return ""
	}
	for _, file := range slices.Sorted(maps.Keys(goldens)) {
		have := map[string]bool{}
		for _, l := range strings.Split(goldens[file], "\n") {
			have[strings.TrimRight(l, " ")] = true
		}
		all := true
		for _, l := range lines {
			all = all && have[l]
		}
		if all {
			return file
		}
	}
	return ""
}

// The golden check is exact: a changed number, a line left out where the
// marker names it, a line more, an elision where the lines run on, and a
// malformed marker are each refused.
func TestDocsGoldenCheckRefusesAStaleCopy(t *testing.T) {
	golden := "title\n\nrow a   1.00x  \nrow b   2.00x\nrow c   3.00x\n"
	for _, c := range []struct {
		name  string
		block []string
		lines []int
		ok    bool
	}{
		{"exact lines, trailing spaces aside", []string{"row a   1.00x", "row b   2.00x"}, []int{3, 4}, true},
		{"the whole file", strings.Split(strings.TrimSuffix(golden, "\n"), "\n"), nil, true},
		{"an elision where lines are skipped", []string{"row a   1.00x", "... one row", "row c   3.00x"}, []int{3, 5}, true},
		{"a number changed", []string{"row a   1.00x", "row b   2.01x"}, []int{3, 4}, false},
		{"a line short", []string{"row a   1.00x"}, []int{3, 4}, false},
		{"a line more", []string{"row a   1.00x", "row b   2.00x", "row c   3.00x"}, []int{3, 4}, false},
		{"an elision where lines run on", []string{"row a   1.00x", "...", "row b   2.00x"}, []int{3, 4}, false},
		{"past the file", []string{"row a   1.00x"}, []int{9}, false},
	} {
		if err := checkGoldenCopy(c.block, golden, c.lines); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	for _, marker := range []string{"golden: table.txt", "golden: golden/table.txt lines 3-1", "golden: golden/table.txt lines 4, 3", "golden: golden/table.txt lines x"} {
		if _, _, err := parseGoldenMarker(marker); err == nil {
			t.Errorf("%q: no error", marker)
		}
	}
	if g, _, err := parseGoldenMarker("golden: golden/table.txt lines 2, 4-6"); err != nil || !slices.Equal(g.lines, []int{2, 4, 5, 6}) {
		t.Errorf("lines 2, 4-6: %v, %v", g.lines, err)
	}
}

// ---- where a block of output comes from ----

var (
	// measuredRe is a dated run's marker: the command that printed the
	// block, and the day it did.
	measuredRe = regexp.MustCompile(`^measured: (\S.*), (\d{4}-\d{2}-\d{2})$`)
	// codeLangs are the fence languages of code, which shows no output.
	codeLangs = map[string]bool{"go": true, "sh": true, "bash": true, "shell": true}
)

// checkBlockMarker says what is wrong with where a fenced block says it
// comes from, or nil. Code (Go, shell) needs no marker; any other block is
// output or a drawing, and names its source on the line before it: a
// golden file (checked byte for byte by
// TestDocsGoldenCopiesMatchTheGoldens), a dated run ("measured: <command>,
// <date>"), a file it excerpts, or a figure.
func checkBlockMarker(b fence) error {
	kind, rest, _ := strings.Cut(b.marker, ":")
	rest = strings.TrimSpace(rest)
	switch {
	case b.marker == "" && codeLangs[b.lang]:
		return nil
	case b.marker == "":
		return fmt.Errorf("a block of output says not where it comes from: mark it <!-- golden: golden/<file> --> or <!-- measured: <command>, <date> --> (or <!-- figure: <what> --> for a drawing)")
	case kind == "golden":
		_, _, err := parseGoldenMarker(b.marker)
		return err
	case kind == "measured":
		m := measuredRe.FindStringSubmatch(b.marker)
		if m == nil {
			return fmt.Errorf("%q: a measured block names its command and its date: measured: <command>, <yyyy-mm-dd>", b.marker)
		}
		if _, err := time.Parse(time.DateOnly, m[2]); err != nil {
			return fmt.Errorf("%q: %v", b.marker, err)
		}
		return nil
	case kind == "excerpt":
		if _, err := os.Stat(rest); err != nil {
			return fmt.Errorf("%q: the excerpt's file: %v", b.marker, err)
		}
		return nil
	case kind == "figure" && rest != "":
		return nil
	}
	return fmt.Errorf("%q: a block's marker is golden:, measured:, excerpt: or figure:, with what it names", b.marker)
}

// Every fenced block of README.md and docs/*.md that shows output says
// where it comes from (checkBlockMarker): a golden file, which the golden
// check holds, or a dated run of a named command, which a reader can run
// again; none is output nobody can trace.
func TestDocsOutputBlocksSayWhereTheyComeFrom(t *testing.T) {
	for _, doc := range docFiles(t) {
		blocks, _ := fences(readDoc(t, doc))
		for _, b := range blocks {
			if err := checkBlockMarker(b); err != nil {
				t.Errorf("%s:%d: %v", doc, b.line, err)
			}
		}
	}
}

// The marker check refuses a block of output with no marker, a measured
// block without its command or date, and a marker of no known kind; code,
// a golden copy, a dated run, an excerpt and a figure pass.
func TestDocsOutputBlockCheckRefusesAnUntracedBlock(t *testing.T) {
	for _, c := range []struct {
		b  fence
		ok bool
	}{
		{fence{lang: "go"}, true},
		{fence{lang: "sh"}, true},
		{fence{marker: "golden: golden/table.txt lines 3-9"}, true},
		{fence{marker: "measured: make study, 2026-11-30"}, true},
		{fence{lang: "go", marker: "excerpt: plugin_test.go"}, true},
		{fence{marker: "figure: the package map"}, true},
		{fence{}, false},
		{fence{lang: "text"}, false},
		{fence{marker: "measured: make study"}, false},
		{fence{marker: "measured: 2026-11-30"}, false},
		{fence{marker: "measured: make study, 2026-13-30"}, false},
		{fence{marker: "excerpt: no_such_file.go"}, false},
		{fence{marker: "figure:"}, false},
		{fence{marker: "output of a run"}, false},
	} {
		if err := checkBlockMarker(c.b); (err == nil) != c.ok {
			t.Errorf("%+v: %v, want ok %v", c.b, err, c.ok)
		}
	}
}

// ---- the register of documented numbers ----

// docNumber is one number stated in the prose of README.md or docs/*.md:
// where it is, its text as written, and the paragraph it is in.
type docNumber struct {
	doc       string
	line      int
	text      string
	start     int // its offset in para
	end       int
	para      string
	paraStart int // the paragraph's first line
}

var (
	// numberRe is a number as the docs write one: a sign, digits with
	// thousands commas or none, a decimal part, then its unit if any.
	numberRe = regexp.MustCompile(`[-+−±]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?(?:%|×|x\b))?`)
	// dateRe is a date as the docs write one, the day a measurement was
	// taken.
	dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\b`)
	// notProseRe is what a paragraph holds that is not its prose: code
	// spans, a link's target, a badge's image, an HTML comment.
	notProseRe = regexp.MustCompile("`[^`]*`|\\]\\([^)]*\\)|!\\[[^\\]]*\\]|<!--.*?-->|https?://\\S+")
)

// docNumbers is every number in the prose of the docs: fenced blocks and
// headings aside (a heading names its section, whose sentences state its
// numbers), each table row a paragraph of its own.
func docNumbers(t *testing.T) []docNumber {
	t.Helper()
	var all []docNumber
	for _, doc := range docFiles(t) {
		_, prose := fences(readDoc(t, doc))
		all = append(all, proseNumbers(doc, prose)...)
	}
	return all
}

func proseNumbers(doc string, prose map[int]string) []docNumber {
	var out []docNumber
	var para []string
	start, last := 0, -1
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := strings.Join(para, "\n")
		blanked := notProseRe.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
		for _, m := range numberRe.FindAllStringIndex(blanked, -1) {
			if m[0] > 0 {
				if r := rune(blanked[m[0]-1]); r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					continue // part of a name: p99, go1.26, redis_rate, v0.4
				}
			}
			if m[0] > 0 && blanked[m[0]-1] == '/' {
				continue // W/100, Skew/2: a formula's term
			}
			if dateRe.MatchString(blanked[m[0]:]) {
				continue // 2026-11-30: the date of a measurement, a label
			}
			if m[1] < len(blanked) {
				if r := rune(blanked[m[1]]); r == '_' || unicode.IsLetter(r) {
					continue // 2B, 1st: a name or a formula's term
				}
				if rest := blanked[m[1]:]; len(rest) > 1 && (rest[0] == '.' || rest[0] == '/') && unicode.IsDigit(rune(rest[1])) {
					continue // 127.0.0.1, 1/8: an address or a fraction
				}
			}
			line := start + strings.Count(text[:m[0]], "\n")
			out = append(out, docNumber{doc: doc, line: line, text: blanked[m[0]:m[1]], start: m[0], end: m[1], para: strings.ReplaceAll(text, "\n", " "), paraStart: start})
		}
		para = nil
	}
	for _, n := range slices.Sorted(maps.Keys(prose)) {
		line := prose[n]
		heading := strings.HasPrefix(line, "#")
		if n != last+1 || strings.TrimSpace(line) == "" || heading || strings.HasPrefix(line, "|") {
			flush()
		}
		last = n
		if strings.TrimSpace(line) == "" || heading {
			continue
		}
		if len(para) == 0 {
			start = n
		}
		para = append(para, line)
		if strings.HasPrefix(line, "|") {
			flush()
		}
	}
	flush()
	return out
}

var (
	// settingRe follows a whole number that is a condition a test sets or
	// a reader chooses (a limit, a node count, a round trip, a duration),
	// not a result: "4 nodes", "50 ms of skew", "100 per second". A rate
	// of a thousand or more a second is a measured throughput, never a
	// setting, and "about" before a duration makes it a measured timing.
	settingRe = regexp.MustCompile(`^(?:\s|-)?(?:ms|µs|s|ppm|nodes?|restarting nodes|seeds?|workers?|retries|trials?|keys?|tenants?|gateways?|core|minutes?|hours?|goroutines?|clients?|shards?|bytes|kB|per second|a second|/s)(?:$|[^\w])`)
	// versionRe precedes a number that names a thing: a version, an issue,
	// a seed.
	versionRe = regexp.MustCompile(`(?:Go|Redis|issue|seed|seeds|RFC|Lua|v)\s?$`)
)

// numberValue is a number's digits as a golden file prints them: no sign,
// no thousands commas, "×" written "x".
func numberValue(s string) (value, unit string) {
	s = strings.TrimLeft(s, "+-−±")
	s = strings.ReplaceAll(s, ",", "")
	s = strings.ReplaceAll(s, "×", "x")
	s = strings.ReplaceAll(s, " ", "")
	if u := strings.TrimLeft(s, "0123456789."); u != "" {
		return strings.TrimSuffix(s, u), u
	}
	return s, ""
}

// goldenNumbers is every number printed in golden/ (its text, CSV and
// JSON files; not the SVGs, whose coordinates are not results), as
// numberValue gives it, with and without the unit printed after it.
func goldenNumbers(t *testing.T) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir("golden", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".svg") {
			return err
		}
		for _, m := range numberRe.FindAllString(readDoc(t, path), -1) {
			v, u := numberValue(m)
			set[v] = true
			set[v+u] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// inGolden says whether a documented number is one a golden file prints:
// a number with a decimal part, a percentage or a ratio (with its unit
// when it has one), or a whole number of four figures or more; a smaller
// whole number is in some golden file by chance.
func inGolden(text string, goldens map[string]bool) bool {
	v, u := numberValue(text)
	if !strings.Contains(v, ".") && u == "" && len(v) < 4 {
		return false
	}
	return goldens[v+u]
}

// isSetting says whether a number is a setting or a name, not a result.
func isSetting(n docNumber) bool {
	before := n.para[:n.start]
	if versionRe.MatchString(before) {
		return true
	}
	v, _ := numberValue(n.text)
	if strings.ContainsAny(v, ".") || strings.HasSuffix(n.text, "%") || strings.HasSuffix(n.text, "×") {
		return false
	}
	after := n.para[n.end:]
	if !settingRe.MatchString(after) || strings.HasSuffix(before, "about ") {
		return false
	}
	if len(v) >= 4 && (strings.HasPrefix(strings.TrimSpace(after), "/s") || strings.HasPrefix(strings.TrimSpace(after), "per second")) {
		return false
	}
	return true
}

// heldNumbers is the register of the docs' results that no golden file
// prints: for each test, phrases of the docs whose numbers it asserts (a
// phrase holds every number inside it, wherever the docs repeat it).
var heldNumbers = map[string][]string{
	"TestFindingWipedStoreHandsOutFreshBurst":                         {"burst: +99 to +100 admits", "window, +50 for"},
	"TestFindingFirstHitWindowDoublesAtItsOwnEdge":                    {"edge: 199 admits", "gets 199 admits", "198 to 199 behind", "198 on"},
	"TestFindingGetSetOverAdmits":                                     {"lets 51.5 to 53.7% more"},
	"TestFindingLocalFullMultipliesByNodes":                           {"by 3.88 to"},
	"TestPerNodeTellsTheDeploymentFromItsLimiter":                     {"on 6 simulated seeds"},
	"TestFindingStoreClockRestoresOneNodePeaks":                       {"is 3 requests"},
	"TestFindingRedisRateMatchesGCRAWhereItApplies":                   {"167 admits", "15.699999 s where", "166 are"},
	"TestFindingGetSetOverAdmitsInProportionToTheRoundTrip":           {"+50% at", "+100% at", "about 50% per"},
	"TestFindingLocalFullMultipliesTheFloodByTheNodeCount":            {"4, +381.2%", "5 and", "8 for", "within 1 point", "log 9% short at 5"},
	"TestFindingLocalSplitTurnsHonestAwayMoreOnMoreNodes":             {"on 5", "to 22.1% on 20 ("},
	"TestFindingLocalSplitOvershootFollowsRestarts":                   {"take 88-92% of it, the fixed window 75-81%, the sliding log and counter 38-50%"},
	"TestFindingWipedStoreBurstFollowsWhereInTheWindowItFalls":        {"buckets +99 everywhere", "4.3 admits", "(0 at the edge, about +100 from", "the sliding log 0;"},
	"TestFindingNodeClockStepBreaksTheTokenBucket":                    {"+19, +16)."},
	"TestFindingStoreClockStepLocksOutOrHandsOutABurst":               {"+19 at"},
	"TestFindingRealStoreClockStep":                                   {"20 of 20", "least 59 s"},
	"TestFindingBlackholedStoreCostsOnlyTheTimeout":                   {"within 30 ms of the timeout", "within 30 ms of it;"},
	"TestFindingEvictionHandsOutFreshBursts":                          {"burst of 9 or 10 beyond"},
	"TestFindingFailoverOvershootsByAtMostABurst":                     {"every key called 20 times before the kill and 20 times after the switch"},
	"TestFindingClusterNeedsHashTags":                                 {"in 5 of 5 untagged", "in 40 of 40", "with 0 decisions"},
	"TestFindingAcceptedRateAcrossNodes":                              {"on 1 and", "on 3.", "on 3"},
	"TestFindingStampedeOfFiftyAgainstALimitOfTen":                    {"exactly 10", "least 20.", "20 admitted", "10 by", "least 20 (the", "admitted 10."},
	"TestFindingBoundaryTraceDoublesTheFixedWindow":                   {"all 100 requests", "second, 20 in", "to 10.", "all 100 through", "holds 10 ("},
	"TestFindingZipfStarvesTheLargestTenant":                          {"smallest 100%.", "get 100%"},
	"TestFindingSlidingCounterErrorChangesSign":                       {"shape: 312 more", "or 1,705 fewer", "admits 312 more", "fifth 1,705 fewer"},
	"TestFindingCachedCounterOvershootGrowsWithTheSyncInterval":       {"from 100 (synchronous", "to 229 at", "to 113 at", "sync, 141 at", "and 229 at", "exact (100 in"},
	"TestFindingQueueingGCRAAddsLatencyOnBursts":                      {"burst of 1 + D·L/W (3, 11) admits", "gets 20 in", "22 and 30. The"},
	"TestFindingCheckThenActOverAdmitsAtEveryConcurrencyAboveOne":     {"loopback, 3 to", "by more than 0 on average at each", "by more than 0 on average at every one", "Its L is 101"},
	"TestFindingCheckThenActFollowsTheLockstepModelUnderDelay":        {"+28 at c = 32 and 64 for L = 100, 0 at c = 2 and 4 (which divide 100), +1 at c = 2 for L = 101", "at L = 100 two or four workers that keep in step admit exactly L"},
	"TestFindingWatchMultiNeverOverAdmitsButRefusesWithinTheLimit":    {"least 50% of", "budget of 3 and 20% with 10 (the"},
	"TestFindingLuaIsSeveralTimesFasterThanWatchMultiUnderContention": {"least 3× as", "is 3×;"},
	"TestFindingOnlyTheSlidingLogHoldsTheLimitAcrossAWindowEdge":      {"order: 0 differences"},
	"TestAtomicityGetThenIncrRacesAndLuaDoesNot":                      {"more than 10 in every run, the script exactly 10 every"},
	"TestShardsMergeIntoTheWholeRun":                                  {"of 1, 2 and", "most 3"},
	"TestLiveReferenceMiddlewareOnThreeNodes":                         {"asserts +100% or more, and the shared one within ±10%,"},
	"TestJudgeOfSimulatedRecordsAgreesWithTheModel":                   {"on 144 simulated", "58 convicted, 86 cleared"},
	"TestRemainingRuleAgreesWithBruteForce":                           {"on 600 random"},
	"TestPlayLiveNodeClockStep":                                       {"within 5% of the model of the step"},
	"TestNodesWithABucketEachAreCaughtWhateverResetSays":              {"admit all 25 of a burst of 25 sent within a second, where the rule allows 20"},
	"TestMutantsCaughtAndCorrectDeploymentsClean": {"least 95% of", "only on 186 of 200", "Remaining of 197",
		"on 17 of 200 seeds (17 by a Remaining too high, 16 by", "4 by over-admission), against 200 of 200 deployed"},
	"TestKeyTTLOneSecondShortIsCaught":       {"on 200 of 200 seeds"},
	"TestGoldenAttacks":                      {"is 11 in"},
	"TestPropertiesItBreaks":                 {"admits 4 of"},
	"TestDefaultHuntCatchesOneAdmitTooMany":  {"(4.2 million", "250 in 1.5 s where 249 are"},
	"TestDefaultMatrixBesideGCRA":            {"24 of 80 ideal"},
	"TestDefaultPropertiesAtTheDefaultLimit": {"of rapid's first 4 seeds"},
	"TestUserScriptDifferential":             {"with 0 differences"},
}

// uncheckedNumbers are the numbers the docs state from a dated run no
// test repeats (make study, make load, a live run, a timing): each
// phrase's paragraph must say so, with "unchecked" or "measured".
var uncheckedNumbers = []string{
	"measured +0.0% idle and +13.6% under",
	"25 once took 3.6 s against 10 per 2 s",
	"warm: 124 s against 143 s idle", "busy besides, 237 to 307 s", "against 257 and 271 s, so no faster",
	"by +14%, +27% and +133% for", "counter, +8%, +13% and +44% for",
	"about 60 s", "takes 60 to 125 s by the machine", "60 to 63 s on an Intel", "61 to 84 s on one AMD EPYC", "85 to 125 s on a slower", "2 to 4 minutes", "hunt took 4.5 to 5.3 s", "took 3.9), 85.4 to 112.0 s", "152 to 204 s", "`make test` 247 s warm", "322 to 379 s with both", "80.4, 85.0 and 90.0 s warm", "147 to 195 s with both cores", "`make test` 169 s warm", "288 to 365 s with both", "97.9 to 125.3 s warm in", "196 to 234 s with both", "`make test` 203 s warm.", "took 39.6 to 39.8 CPU-seconds (20.4 to 20.9 s)", "starting the 45 test", "binaries in 782 s", "1,492 trials in 11 min 42 s", "61.3 to 71.4 s warm", "93 CPU-seconds busy and 28", "103 to 125 s with both cores", "`make test` 203 to 254 s with both", "EPYC of this stop: 68.2, 71.1", "and 77.9 s, then 64.0 to 65.1 s in three runs", "`make test` 132 s warm", "2026-12-04, 73.4", "and 82.9 s warm", "`make test` 143 s;", "in a run of 61.3 s", "60.0 to 63.0 s", "78 to 84 CPU-seconds", "96 to 105 s with both", "took 71 to 74 s on", "about 82 s on", "starting the 41 test", "took 15 CPU-seconds (8.0 s)", "machine: 119 s", "running, 148 CPU-seconds;", "148 s and 224 CPU-seconds", "the same run with it took 156 s", "156 s and 239 CPU-seconds", "took 212 and 213 s", "took 302 s (470 to 730 s",
	"took 1.4 to 1.5 s on two cores, where one", "at a time took 2.3 (measured",
	"to +37.3% in", "both cores busy, +6.0%", "left a reset only 29 to show", "idle machine, at L = 100)", "machine c = 2 stayed exact through all 24 trials in 4 of 22 runs", "arrival, 48% at", "unchecked: 64% or more and 31% or more in",
	"away: 94% with", "of 3, 77% with 10.", "4.5 to 21.4× in", "2026-11-30 (16 to", "11.7× against",
	"18.6 to 28.3× against", "4.6× and more.", "26 to 50 recorded", "loaded, 50 in",
	"lands 6,019 accepted", "5,880 to 6,120) a",
	// live runs, each paragraph dated
	"1,976 of 2,560 live, the model 1,976, without the step 981", "most 2 beyond",
	"key, 247 over 200 keys, where a reset of every bucket gives 1,429", "from 0 to 12, then 24; 10 of 10 runs",
	"2026-12-02: 59.8 s)", "given 340 to 365", "p99 51.9 ms fail-open, 53.8 ms fail-closed; service back 10 to 80 ms",
	"raced, 3 of 15 runs broke a bound; unraced, none of 40, the p99 at most 15 ms past the timeout and the store back within 73 ms",
	"decides none of 79 to 80 calls", "`Script` 13 to 16 of them,", "the first 1.72 to 1.73 s in (measured on 2026-12-05, 5 raced runs", "at 100 ms and a budget",
	"at 200 ms and 300 ms a loaded", "found it (3 of 62 calls", "for 40 ms in every 100 shows",
	"2026-12-05, 16 runs, 8 of them raced: the client that cannot ping decided 0 to 31 of about 60 calls, the first after 503 to 525 ms", "failed 7 of the 8 unraced)",
	"measured: 51.9 ms", "93 to 100 of 100 keys, +950 admits", "(measured: 93 to 100 of 100)",
	"(35 of them, measured", "GET-then-INCR 38 to 50", "(-3.8% and -4.8%)",
	// timings
	"about 3 s on two cores", "about 25 µs", "about 10 s", "about 12 minutes", "about 10 minutes",
	"2026-12-05: 11 minutes on two cores, 8.5 of", "(11 minutes, measured", "within 1 to 7 cases, where it took up to 3,432",
	"over 416,000 calls", "measured 1.00000x", "broke it on 4 of seeds 1 to 8",
}

// notClaimNumbers are numbers that state no result: a setting the text
// names, a formula's constant, a label, a count of the docs' own things,
// a published number the docs cite.
var notClaimNumbers = []string{
	"OpenAPI 3 description", "interval; 0 is", "#1 and #2 (told", "#3, #5, #4: #3, told", "#5, told",
	"allows: 4 + ⌊8 · (1", "burst 4", "never, 3 to", "| 1 to", "| 0 to", "0 |", "L − F·p", "%, A the",
	"1 times", "A the", "100 requests", "a 429 without", "first 429.", "key: 429 with", "never 0",
	"at 120 a", "of 100 (`go", "of 1 a", "from 1 to", "of 10", "of 3 and of 10", "scripts), 1 to",
	"of 100 in", "= 1, 3, 5", "of 20", "= 20 with", "= 100 in", "of 25", "at 4x the", "20 per", "+ 1",
	"for 1).", "of 5", "at 7 per", "of 5 at", "exits 1 when", "clean, 2 on", "Remaining 0.", "of 200",
	"10 (unchecked", "20, whose", "B)+2 calls", "at 7 per", "5, two", "1.5 s", "for 2.5 s", "of 3's",
	"\"overshoot:3\"", "first 256", "65536; 3", "(0, 1024 and", "than ±5%, or", "than 2 apart", "node 0 stepping",
	"of 10 on", "10 requests", "second, 10 in", "+ 1 ≤", "of 0.03, 1.2, 3.4 and 6.5 ms", "a 6.5 ms",
	"= 50, 100 and", "D = 0 it", "a burst of 1 (", "a burst of 1)", "cost of 1 a", "max(0, L − F·p)", "− 1) %",
	"− 1 (A", "on 1-10)", "⌋+2) admits", "(Retry-After 0,", "L − 1 refills", "against 10;", "(burst 20)",
	"31 of them counting", "the study: 16%", "published: 114, 143, 243", "published: 28.2%, 56.2%, 0.885",
	"decisions, from 1, by", "Remaining 0 in the same",
}

// A number in the prose of README.md or docs/*.md is held: a golden file
// prints it, it is a setting or a name (isSetting), or a phrase around it
// is in a register above; and every register entry is still in the docs,
// its test exists, and an unchecked number's paragraph says it is one.
func TestDocsNumbersAreHeld(t *testing.T) {
	tests := testFuncs(t)
	for test := range heldNumbers {
		if !tests[test] {
			t.Errorf("heldNumbers names %s, which no *_test.go defines", test)
		}
	}
	nums := docNumbers(t)
	for _, n := range unheldNumbers(nums, goldenNumbers(t)) {
		lo, hi := max(0, n.start-40), min(len(n.para), n.end+40)
		t.Errorf("%s:%d: %s (…%s…) is in no golden file and no register: name the test that asserts it in heldNumbers, or say it is unchecked",
			n.doc, n.line, n.text, strings.ToValidUTF8(n.para[lo:hi], ""))
	}
	paras := map[string]bool{}
	for _, n := range nums {
		paras[n.para] = true
	}
	for _, phrase := range registerPhrases() {
		found := false
		for p := range paras {
			if strings.Contains(p, phrase) {
				found = true
				if slices.Contains(uncheckedNumbers, phrase) && !strings.Contains(p, "unchecked") && !strings.Contains(p, "measured") {
					t.Errorf("%q is registered unchecked, but its paragraph does not say so (unchecked or measured)", phrase)
				}
			}
		}
		if !found {
			t.Errorf("the register's %q is in no paragraph of the docs: remove it or follow the sentence", phrase)
		}
	}
}

func registerPhrases() []string {
	var all []string
	for _, phrases := range heldNumbers {
		all = append(all, phrases...)
	}
	all = append(all, uncheckedNumbers...)
	return append(all, notClaimNumbers...)
}

// unheldNumbers is the numbers neither a golden file, nor isSetting, nor a
// register phrase around them holds.
func unheldNumbers(nums []docNumber, goldens map[string]bool) []docNumber {
	phrases := registerPhrases()
	var out []docNumber
	for _, n := range nums {
		if inGolden(n.text, goldens) || isSetting(n) || covered(n, phrases) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// covered says whether an occurrence of one of the phrases in the number's
// paragraph spans it.
func covered(n docNumber, phrases []string) bool {
	for _, p := range phrases {
		for off := 0; ; {
			i := strings.Index(n.para[off:], p)
			if i < 0 {
				break
			}
			if at := off + i; at <= n.start && n.end <= at+len(p) {
				return true
			}
			off += i + 1
		}
	}
	return false
}

// testFuncs is the name of every test function of the module's *_test.go
// files.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	names := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			for _, m := range re.FindAllStringSubmatch(readDoc(t, path), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// The register refuses a result nobody holds: a new number, a number
// changed inside a registered phrase, a measured number outside it, a
// number beside a date; a golden's number, a setting, a registered phrase
// and a date pass.
func TestDocsNumbersRegisterRefusesANewNumber(t *testing.T) {
	goldens := map[string]bool{"5.94x": true, "5.94": true}
	for _, c := range []struct {
		line string
		held bool
	}{
		{"At 50 ms of skew the flood peaks at 5.94×.", true},
		{"At 50 ms of skew the flood peaks at 6.94×.", false},
		{"GET, decide, SET lets 51.5 to 53.7% more of the flood through.", true},
		{"GET, decide, SET lets 51.5 to 58.7% more of the flood through.", false},
		{"A new sentence says it admits 37 too many.", false},
		{"The limit split across 4 restarting nodes.", true},
		{"The table as make load printed it on 2026-12-01.", true},
		{"On 2026-12-01 it admitted 37 too many.", false},
	} {
		unheld := unheldNumbers(proseNumbers("test.md", map[int]string{1: c.line}), goldens)
		if held := len(unheld) == 0; held != c.held {
			t.Errorf("%q: held %v, want %v (unheld: %v)", c.line, held, c.held, unheld)
		}
	}
}
