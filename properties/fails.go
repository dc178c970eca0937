package properties

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"
)

// Fails runs prop for exactly checks cases (over as many calls of
// rapid.Check as -rapid.checks makes that) and reports whether it failed,
// with rapid's report: the failure message and the shrunk counterexample
// (rapid's "[rapid] draw ..." lines and the property's own message,
// replayed on the minimal case). It is how a test shows that a planted bug
// is caught. Shrinking stops after DefaultShrinkTime (-rapid.shrinktime,
// when given, changes it) with the smallest case found by then, which still
// fails: the bound never makes a failing property pass. It leaves no rapid
// fail file behind. It must run inside a test (rapid reads the test
// flags), and it panics on a count below 1, a mistake in the calling
// program.
func Fails(prop func(*rapid.T), checks int) (failed bool, report string) {
	if checks < 1 {
		panic(fmt.Sprintf("properties: Fails(prop, %d): a property needs at least 1 case", checks))
	}
	return fails(prop, checks, defaultShrinkBound())
}

// FailsWithin is Fails with rapid's shrinking bounded by shrink instead of
// DefaultShrinkTime: a test that shows only that a planted bug is caught,
// on a limiter slow to call (one on simredis), need not wait for the
// smallest case. The report is still a failing case, the smallest found in
// that time. It panics, as Fails does, on a count below 1, and on a
// negative bound.
func FailsWithin(prop func(*rapid.T), checks int, shrink time.Duration) (failed bool, report string) {
	if checks < 1 || shrink < 0 {
		panic(fmt.Sprintf("properties: FailsWithin(prop, %d, %v): a property needs at least 1 case and a bound of 0 or more", checks, shrink))
	}
	return fails(prop, checks, shrink)
}

// failsHeld is fails for a caller holding rapidFlags.
func failsHeld(prop func(*rapid.T), checks int, bound time.Duration) (bool, string) {
	r := newRunner(prop, checks, bound)
	for r.more() {
		before := r.ran
		rec := newRecorder(r)
		rec.check(r.run)
		if rec.Failed() {
			return true, rec.report()
		}
		if r.ran == before {
			panic(fmt.Sprintf("properties: rapid ran no case (-rapid.checks=%s)", flagValue("rapid.checks")))
		}
	}
	return false, ""
}

// recorder is a rapid.TB that keeps what rapid says instead of failing a
// test.
type recorder struct {
	name string
	r    *runner // told when rapid reports the failure

	mu     sync.Mutex
	text   strings.Builder
	failed bool
}

var recorders atomic.Int64

func newRecorder(r *runner) *recorder {
	// A name of its own, so rapid neither replays nor mixes fail files.
	return &recorder{name: fmt.Sprintf("overshoot-fails-%d-%d", os.Getpid(), recorders.Add(1)), r: r}
}

// stop unwinds rapid.Check after it calls FailNow on the recorder.
type stop struct{}

// failDirs are the folders of rapid's fail files that the recorders running
// now may create, shared so that recorders in parallel tests do not remove
// a folder another one is writing in: the first to start notes which are
// absent, and the last to end removes those (each only if empty).
var failDirs struct {
	sync.Mutex
	running int
	created []string // deepest last
}

func (r *recorder) check(prop func(*rapid.T)) {
	failDirs.Lock()
	if failDirs.running == 0 {
		failDirs.created = nil
		for _, d := range []string{"testdata", filepath.Join("testdata", "rapid")} {
			if _, err := os.Stat(d); os.IsNotExist(err) {
				failDirs.created = append(failDirs.created, d)
			}
		}
	}
	failDirs.running++
	failDirs.Unlock()
	defer r.removeFailFile()
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stop); !ok {
				panic(p)
			}
		}
	}()
	rapid.Check(r, prop)
}

var failFile = regexp.MustCompile(`-rapid\.failfile="([^"]+)"`)

// removeFailFile deletes the fail file rapid wrote and the folders it made.
func (r *recorder) removeFailFile() {
	r.mu.Lock()
	m := failFile.FindStringSubmatch(r.text.String())
	r.mu.Unlock()
	if m != nil && strings.Contains(m[1], r.name) {
		os.Remove(m[1])
	}
	os.Remove(filepath.Join("testdata", "rapid", r.name)) // only if empty
	failDirs.Lock()
	defer failDirs.Unlock()
	if failDirs.running--; failDirs.running == 0 {
		for i := len(failDirs.created) - 1; i >= 0; i-- {
			os.Remove(failDirs.created[i]) // only if empty
		}
	}
}

// report is what rapid said, without the line on reproducing it through a
// fail file that no longer exists.
func (r *recorder) report() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(r.text.String()), "\n") {
		if !strings.HasPrefix(line, "To reproduce, specify") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func (r *recorder) write(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.text.WriteString(strings.TrimSuffix(s, "\n"))
	r.text.WriteString("\n")
}

func (r *recorder) fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}

func (r *recorder) Helper()                         {}
func (r *recorder) Name() string                    { return r.name }
func (r *recorder) Logf(format string, args ...any) { r.write(fmt.Sprintf(format, args...)) }
func (r *recorder) Log(args ...any)                 { r.write(fmt.Sprintln(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.r.reported()
	r.Logf(format, args...)
	r.fail()
}
func (r *recorder) Error(args ...any)                 { r.Log(args...); r.fail() }
func (r *recorder) Fatalf(format string, args ...any) { r.Logf(format, args...); r.FailNow() }
func (r *recorder) Fatal(args ...any)                 { r.Log(args...); r.FailNow() }
func (r *recorder) FailNow()                          { r.fail(); panic(stop{}) }
func (r *recorder) Fail()                             { r.fail() }
func (r *recorder) Skipf(format string, args ...any)  { r.Logf(format, args...); panic(stop{}) }
func (r *recorder) Skip(args ...any)                  { r.Log(args...); panic(stop{}) }
func (r *recorder) SkipNow()                          { panic(stop{}) }

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
