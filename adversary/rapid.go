package adversary

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/record"
	"pgregory.net/rapid"
)

// round runs one rapid round of the property "no attack beats the
// threshold" (see score.beats) on checksPerRound attacks drawn by draw,
// rapid seeded with seed, and shrinkTries runs at most to shrink a
// counterexample. It returns rapid's shrunk counterexample (the last
// failing case: rapid replays its minimal case last) and its score, or
// nil when the property held.
func (s *searcher) round(seed uint64, threshold score, shrinkTries int, draw func(*rapid.T) []record.Request) ([]record.Request, score, error) {
	var (
		last      []record.Request
		lastScore score
		runErr    error
		shrinking int // runs since the first failure: rapid reproducing and shrinking it
	)
	prop := func(t *rapid.T) {
		reqs := draw(t)
		if last != nil {
			shrinking++
		}
		if shrinking > shrinkTries {
			// Past its budget the shrink ends here, with the last case
			// that failed: counted, not timed, so that the search stays
			// deterministic. rapid recovers every panic, so the round
			// leaves its goroutine instead (see runRapid).
			runtime.Goexit()
		}
		if runErr != nil || len(reqs) == 0 {
			return
		}
		_, sc, err := s.run(reqs)
		if err != nil {
			runErr = err
			return
		}
		if sc.beats(threshold) {
			last, lastScore = reqs, sc
			t.Fatal("beats the threshold") // one message, so rapid's shrinker compares like with like
		}
	}
	// Whether rapid saw its shrink through (and failed the recorder) or was
	// cut short, last is the smallest failing case it reached.
	if err := runRapid(prop, seed, checksPerRound); err != nil {
		return nil, score{}, err
	}
	if runErr != nil {
		return nil, score{}, runErr
	}
	return last, lastScore, nil
}

// rapidMu serialises the Searches of a process while they hold rapid's
// flags.
var rapidMu sync.Mutex

// runRapid runs prop through rapid.Check with rapid's flags set for a
// reproducible round: seed, checks (rapid runs a fifth of them under
// -short, so they are multiplied back), no fail file read or written, and
// an hour to shrink (so that shrinking ends when it is done, not when a
// slow machine runs out of time). The flags are restored afterwards.
func runRapid(prop func(*rapid.T), seed uint64, checks int) error {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	if !flag.Parsed() {
		return errors.New("adversary: the test flags are not parsed yet; call Search from a test")
	}
	if testing.Short() {
		checks *= 5
	}
	for _, f := range []struct{ name, value string }{
		{"rapid.seed", strconv.FormatUint(seed, 10)},
		{"rapid.checks", strconv.Itoa(checks)},
		{"rapid.failfile", ""},
		{"rapid.nofailfile", "true"},
		{"rapid.shrinktime", "1h"},
	} {
		fl := flag.Lookup(f.name)
		if fl == nil {
			return fmt.Errorf("adversary: rapid defines no -%s flag", f.name)
		}
		old := fl.Value.String()
		if err := fl.Value.Set(f.value); err != nil {
			return fmt.Errorf("adversary: -%s=%s: %w", f.name, f.value, err)
		}
		defer fl.Value.Set(old)
	}
	// rapid.Check runs on a goroutine of its own, which a property ends
	// with runtime.Goexit to cut a shrink short; this one waits for it.
	// A panic of rapid's own comes back as an error.
	r := &recorder{}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		r.check(prop)
	}()
	if p := <-done; p != nil {
		return fmt.Errorf("adversary: rapid panicked: %v", p)
	}
	return nil
}

// recorder is a rapid.TB that notes a failure instead of failing a test,
// and discards what rapid says (the search reads the counterexample from
// its own property). rapid calls it from the goroutine of rapid.Check only.
type recorder struct{ failed bool }

// stop unwinds rapid.Check after it calls FailNow on the recorder.
type stop struct{}

func (r *recorder) check(prop func(*rapid.T)) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stop); !ok {
				panic(p)
			}
		}
	}()
	rapid.Check(r, prop)
}

// The name is one no fail file of a test carries, so rapid replays none.
func (r *recorder) Name() string          { return "overshoot-adversary-search" }
func (r *recorder) Helper()               {}
func (r *recorder) Logf(string, ...any)   {}
func (r *recorder) Log(...any)            {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Error(...any)          { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.FailNow() }
func (r *recorder) Fatal(...any)          { r.FailNow() }
func (r *recorder) FailNow()              { r.failed = true; panic(stop{}) }
func (r *recorder) Fail()                 { r.failed = true }
func (r *recorder) Skipf(string, ...any)  { panic(stop{}) }
func (r *recorder) Skip(...any)           { panic(stop{}) }
func (r *recorder) SkipNow()              { panic(stop{}) }
func (r *recorder) Failed() bool          { return r.failed }
