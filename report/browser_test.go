package report

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var reportDir = flag.String("report.dir", "", "check the report written in this `folder` (make report's) instead of one the test writes")

// requireBrowser makes a missing Chromium a failure rather than a skip (CI).
const requireBrowser = "OVERSHOOT_REQUIRE_BROWSER"

// browser is one headless Chromium for the package's tests, with one tab
// every check navigates in (a tab costs as much as a page); TestMain stops
// it.
var browser struct {
	once   sync.Once
	tab    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// chromium is the browser's tab, the browser started on first use. With
// no browser installed the test is skipped with the remedy, unless
// OVERSHOOT_REQUIRE_BROWSER=1.
func chromium(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		// Headless has no GPU to use; not looking for one, nor starting
		// its software stand-in, took the start from 2.3-2.9 s to 1.4-1.8 s
		// on a busy 2-core machine.
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.DisableGPU, chromedp.Flag("disable-software-rasterizer", true))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		tab, cancel := chromedp.NewContext(alloc)
		browser.tab, browser.cancel = tab, func() { cancel(); cancelAlloc() }
		_, browser.err = chromedp.Run(tab, chromedp.Evaluate[int]("1"))
	})
	if err := browser.err; err != nil {
		if errors.Is(err, exec.ErrNotFound) && os.Getenv(requireBrowser) != "1" {
			t.Skipf("no Chromium on PATH to open the report in (%v): `apt-get install chromium` (Debian's package); %s=1 makes this a failure", err, requireBrowser)
		}
		t.Fatalf("headless Chromium: %v", err)
	}
	return browser.tab
}

// pageState is what the page itself reports once loaded.
type pageState struct {
	Sources []struct {
		Tag, Attr, URL string
		Complete       bool
		Width          int
	}
	Links []struct {
		Attr, URL string
		Anchor    bool // a same-page link whose target element exists
	}
	Rows map[string]int // the table rows of each required section
}

// inspect reads, in the page, every <img>, <object> and <embed> with its
// source and load state, every link with whether its anchor exists, and
// the body rows of each section's table.
const inspect = `(() => {
	const here = location.href.split('#')[0];
	const out = {Sources: [], Links: [], Rows: {}};
	for (const el of document.querySelectorAll('img, object, embed')) {
		const attr = el.getAttribute(el.tagName === 'OBJECT' ? 'data' : 'src') || '';
		const url = el.tagName === 'IMG' ? el.currentSrc || el.src : el.tagName === 'OBJECT' ? el.data : el.src;
		out.Sources.push({Tag: el.tagName.toLowerCase(), Attr: attr, URL: url || '',
			Complete: el.tagName !== 'IMG' || el.complete, Width: el.tagName === 'IMG' ? el.naturalWidth : -1});
	}
	for (const a of document.querySelectorAll('a[href]')) {
		const [base, frag] = a.href.split('#');
		const id = frag === undefined ? '' : decodeURIComponent(frag);
		out.Links.push({Attr: a.getAttribute('href'), URL: a.href,
			Anchor: base === here && id !== '' && (document.getElementById(id) !== null || document.getElementsByName(id).length > 0)});
	}
	for (const id of ['findings', 'matrix', 'hunt']) {
		out.Rows[id] = document.querySelectorAll('section#' + id + ' table tbody tr').length;
	}
	return out;
})()`

// check opens dir/index.html from file:// in a new tab and returns every
// problem it finds: a console error or an uncaught exception, a resource
// that failed to load, an image, object or embed whose source is not a
// non-empty file of the report (or, for an image, did not decode), a link
// to an anchor or a file that does not exist or that leaves the report,
// and a findings, matrix or hunt section without a row.
func check(t *testing.T, dir string) []string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("no report to check: %v", err)
	}
	// The listener below lives as long as this check.
	tab, cancel := context.WithTimeout(chromium(t), 20*time.Second)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	add := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, a...))
	}
	urls := map[network.RequestID]string{}
	if err := chromedp.Listen(tab, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text += " " + strings.SplitN(d.Exception.Description, "\n", 2)[0]
			}
			add("uncaught exception: %s (%s:%d)", text, d.URL, d.LineNumber+1)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					var text string
					switch {
					case a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &text) == nil:
					case a.Description != "":
						text = a.Description
					default:
						text = string(a.Value)
					}
					args = append(args, text)
				}
				add("console.%s: %s", e.Type, strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				add("console error (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			mu.Lock()
			urls[e.RequestID] = e.Request.URL
			mu.Unlock()
		case *network.EventLoadingFailed:
			mu.Lock()
			u := urls[e.RequestID]
			mu.Unlock()
			add("failed to load %s: %s", u, e.ErrorText)
		}
	}); err != nil {
		t.Fatal(err)
	}
	page := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	if err := chromedp.Do(tab, chromedp.Navigate(page)); err != nil {
		t.Fatalf("opening %s: %v", page, err)
	}
	state, err := chromedp.Run(tab, chromedp.Evaluate[pageState](inspect))
	if err != nil {
		t.Fatalf("reading %s: %v", page, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range state.Sources {
		if s.Tag == "img" && (!s.Complete || s.Width == 0) {
			problems = append(problems, fmt.Sprintf("<img src=%q> did not load (naturalWidth %d)", s.Attr, s.Width))
		}
		if p := reportFile(s.URL, &problems, fmt.Sprintf("<%s> %q", s.Tag, s.Attr)); p != "" {
			if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
				problems = append(problems, fmt.Sprintf("<%s> %q: its file is missing or empty", s.Tag, s.Attr))
			}
		}
	}
	for _, l := range state.Links {
		base, frag, _ := strings.Cut(l.URL, "#")
		switch {
		case base == page && frag != "":
			if !l.Anchor {
				problems = append(problems, fmt.Sprintf("the link %q: no element has that id", l.Attr))
			}
		default:
			if p := reportFile(l.URL, &problems, fmt.Sprintf("the link %q", l.Attr)); p != "" {
				if _, err := os.Stat(p); err != nil {
					problems = append(problems, fmt.Sprintf("the link %q: its file does not exist", l.Attr))
				}
			}
		}
	}
	for _, section := range []string{"findings", "matrix", "hunt"} {
		if state.Rows[section] == 0 {
			problems = append(problems, fmt.Sprintf("no %s section with a table row", section))
		}
	}
	return problems
}

// reportFile is the path of a file:// URL, or "" with a problem noted: a
// report loads nothing from elsewhere.
func reportFile(raw string, problems *[]string, what string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		*problems = append(*problems, fmt.Sprintf("%s: %q is not a file of the report", what, raw))
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// A report written from a real run's files renders in Chromium with no
// console error, every chart loaded, every link resolved and every section
// there. With -report.dir it checks that report (make report's) instead.
func TestReportRendersInABrowser(t *testing.T) {
	dir := *reportDir
	if dir == "" {
		dir, _ = write(t, small(t))
	}
	problems := check(t, dir)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) == 0 {
		t.Logf("%s: rendered in headless Chromium, every chart and link resolved, no console error", dir)
	}
}

// The check goes red: every breakage planted in a written report is
// found, and named. They are planted in one copy, each where no other
// one is, so that one page load shows them all.
func TestBrowserCheckFailsOnABrokenReport(t *testing.T) {
	if *reportDir != "" {
		t.Skip("-report.dir: checking that report only")
	}
	chromium(t) // skip before writing anything when there is no browser
	in := small(t)
	good, _ := write(t, in)
	dir := filepath.Join(t.TempDir(), "report")
	if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
		t.Fatal(err)
	}
	missing, empty := filepath.Base(in.Charts[0]), filepath.Base(in.Charts[1])
	remove(t, filepath.Join(dir, "charts", missing))
	if err := os.WriteFile(filepath.Join(dir, "charts", empty), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<article id="(trace-[^"]+)">`).FindSubmatch(html)
	if m == nil {
		t.Fatal("the report has no trace anchor to break")
	}
	anchor := string(m[1])
	edit(t, dir, `<article id="`+anchor+`">`, `<article id="gone">`)
	edit(t, dir, `<h1>`, `<a href="charts/nothing.svg">a chart</a> <a href="https://example.invalid/">out</a><h1>`)
	edit(t, dir, `</body>`, `<script>console.error("planted error")</script><script>throw new Error("planted throw")</script></body>`)
	edit(t, dir, `<section id="findings">`, `<section id="elsewhere">`)

	problems := check(t, dir)
	for _, want := range []struct{ planted, problem string }{
		{"a missing chart", fmt.Sprintf("<img src=%q> did not load", "charts/"+missing)},
		{"a missing chart", fmt.Sprintf("<img> %q: its file is missing or empty", "charts/"+missing)},
		{"an empty chart", fmt.Sprintf("<img src=%q> did not load", "charts/"+empty)},
		{"an empty chart", fmt.Sprintf("<img> %q: its file is missing or empty", "charts/"+empty)},
		{"a dangling anchor", fmt.Sprintf("the link %q: no element has that id", "#"+anchor)},
		{"a link to a missing file", `the link "charts/nothing.svg": its file does not exist`},
		{"a link out of the report", `the link "https://example.invalid/": "https://example.invalid/" is not a file of the report`},
		{"a console error", "console.error: planted error"},
		{"a script that throws", "uncaught exception: Uncaught Error: planted throw"},
		{"no findings section", "no findings section with a table row"},
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want.problem) }) {
			t.Errorf("planted %s; the check did not say %q", want.planted, want.problem)
		}
	}
	if t.Failed() {
		t.Logf("the check found:\n%s", strings.Join(problems, "\n"))
	}
}

// small is the fixture with three of its charts: each page load costs a
// few hundred ms more with all of them, and make report's check opens them
// all.
func small(t *testing.T) Inputs {
	t.Helper()
	in := fixture(t)
	in.Charts = in.Charts[:3]
	return in
}

func remove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// edit replaces the first old in dir/index.html, which must hold it.
func edit(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "index.html")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("the report has no %q to plant a breakage in", old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
