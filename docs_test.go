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
