package properties

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// DefaultShrinkTime is how long Check and Fails let rapid shrink a failing
// case before they take the smallest found so far. Shrinking a case of a
// limiter on a store (a Redis, or simredis) tries hundreds of cases of up
// to thousands of calls each: a real library took 239 s with no bound of
// ours, where 10 s still shrinks the cases of the limiters in memory to
// the end. WithShrinkTime changes it for Check; -rapid.shrinktime (or
// RAPID_SHRINKTIME), when given, changes it for both; rapid's own bound,
// that flag (30 s unless given), applies as well.
const DefaultShrinkTime = 10 * time.Second

// defaultShrinkBound is -rapid.shrinktime when the command line or
// RAPID_SHRINKTIME gives it, and DefaultShrinkTime otherwise.
func defaultShrinkBound() time.Duration {
	f := flag.Lookup("rapid.shrinktime")
	if f == nil {
		return DefaultShrinkTime
	}
	given := false
	if flag.Parsed() {
		flag.Visit(func(v *flag.Flag) { given = given || v == f })
	}
	if _, ok := os.LookupEnv("RAPID_SHRINKTIME"); ok {
		given = true
	}
	if g, ok := f.Value.(flag.Getter); ok && given {
		if d, ok := g.Get().(time.Duration); ok {
			return d
		}
	}
	return DefaultShrinkTime
}

// runner runs a property for exactly want cases, over as many calls of
// rapid.Check as that takes, and bounds the time rapid spends shrinking a
// failure. rapid.Check runs -rapid.checks cases a call and shrinks until
// about -rapid.shrinktime (it looks at the time between whole passes over
// a case's values, and a pass of slow cases can take minutes), both flags
// of the whole test binary, so the runner does both itself, in the
// property it hands rapid (run): the cases of a call beyond the count, and
// the smaller cases rapid tries once the bound has passed, return at once
// without running the property. Such a case passes, so rapid counts it as
// run, and rejects it as a smaller failure: it keeps, and reports, the
// smallest failing case it found before the bound.
//
// The case that failed, rapid's run of it again, and the replays once
// rapid has said it failed (the tb's Errorf) always run, so a failure is
// never lost. So does rapid's second run of a smaller case that failed as
// the one it holds, which it makes at once, to be sure of it: a second run
// that passed would make the test flaky to rapid. rapid tells failures
// apart by the stack they panic from (its traceback: a failure elsewhere
// is not the same failure, and the smaller case is rejected), and the
// runner reads the same stack (signature) to know which failures rapid
// accepts.
//
// rapid calls run on one goroutine, as does the tb it reports to, so the
// runner needs no lock.
type runner struct {
	prop  func(*rapid.T)
	want  int           // the cases to run
	ran   int           // the cases run, those rapid skipped (invalid data) left out
	bound time.Duration // how long shrinking may take; 0 or less: no bound of ours

	phase      phase
	last       outcome // of the property's last run, taken in by settle
	sig        string  // the signature of its failure
	best       string  // the signature of the failure of the case rapid holds
	confirming bool    // the next run is rapid's second run of a smaller case
	since      time.Time
}

type phase uint8

const (
	drawing     phase = iota // rapid draws new cases: the first want are run
	reproducing              // a case failed: rapid runs it once more
	shrinking                // rapid tries smaller cases, until the bound
	reporting                // rapid has said it failed: every case runs
)

type outcome uint8

const (
	passed outcome = iota
	skipped
	failed
)

func newRunner(prop func(*rapid.T), want int, bound time.Duration) *runner {
	return &runner{prop: prop, want: want, bound: bound}
}

// more reports whether another call of rapid.Check is needed: fewer than
// want cases have run, and none has failed.
func (r *runner) more() bool { r.settle(); return r.phase == drawing && r.ran < r.want }

// reported is told that rapid has reported the failure (it does so before
// it replays the smallest case, to show it).
func (r *runner) reported() { r.settle(); r.phase = reporting }

// run is the property as rapid calls it.
func (r *runner) run(t *rapid.T) {
	r.settle()
	switch r.phase {
	case drawing:
		if r.ran >= r.want {
			return // past the count: rapid's call goes on, the property does not
		}
		r.ran++
	case shrinking:
		if r.bound > 0 && time.Since(r.since) >= r.bound && !r.confirming {
			return // a smaller case that passes: rapid keeps the one it has
		}
	}
	r.call(t)
}

// settle moves on from the outcome of the last run.
func (r *runner) settle() {
	last := r.last
	r.last = passed
	switch r.phase {
	case drawing:
		switch last {
		case skipped:
			r.ran--
		case failed:
			r.phase = reproducing
		}
	case reproducing:
		// rapid shrinks against the failure of this run.
		r.phase, r.since, r.best = shrinking, time.Now(), r.sig
	case shrinking:
		switch {
		case r.confirming:
			r.confirming = false
		case last == failed && (r.sig == r.best || r.sig == unknown):
			r.confirming = true
		}
	}
}

// call runs the property once and records its outcome. A failure is a
// call of t's Errorf, Fatalf and the like, in the property or in its
// cleanups (the check is registered first, so it runs last), or a panic
// other than rapid's invalid data (t.Skip, a filter that gave up). A panic
// of the property's own, or invalid data, is recovered to be told apart
// and panics again, so rapid's traceback of it begins in call (rapid's
// t.Fatalf and the like are not recovered).
func (r *runner) call(t *rapid.T) {
	t.Cleanup(func() {
		if t.Failed() && r.last != failed {
			r.last, r.sig = failed, unknown
		}
	})
	returned := false
	defer func() {
		if returned {
			if t.Failed() {
				// t.Errorf: rapid panics after the property returns, always
				// from the same place.
				r.last, r.sig = failed, "after the property returned"
			}
			return
		}
		if t.Failed() {
			// t.Fatalf and the like: rapid's traceback starts at the panic,
			// as this stack does below this function and signature.
			r.last, r.sig = failed, signature(3, tracebackLen)
			return
		}
		p := recover()
		if p == nil {
			return // runtime.Goexit
		}
		if isInvalidData(p) {
			r.last = skipped
		} else {
			// rapid's traceback starts at the panic below, then this
			// function, then the panic recovered.
			r.last, r.sig = failed, signature(2, tracebackLen-1)
		}
		panic(p)
	}()
	r.prop(t)
	returned = true
}

// unknown is the signature of a failure in a cleanup of the property, whose
// stack is gone by the time the runner learns of it: it is taken for the
// one rapid holds, which makes the next run (if rapid accepted the smaller
// case, its second run of it) run whatever the bound.
const unknown = "?"

// tracebackLen is how many calls of the stack rapid keeps in a traceback.
const tracebackLen = 32

// signature is the stack of the caller skip calls up, as rapid writes a
// traceback (pgregory.net/rapid's panicToError, v1.3.0): at most n calls,
// from the first that is neither the runtime's nor rapid's panic machinery
// down to the property's caller (rapid's checkOnce). Two failures have the
// same signature exactly when rapid finds the same traceback, taken from
// the same calls.
func signature(skip, n int) string {
	pcs := make([]uintptr, n)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(skip, pcs)])
	var b strings.Builder
	leading := true
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "pgregory.net/rapid.checkOnce") {
			break
		}
		if leading && (strings.HasPrefix(f.Function, "runtime.") || rapidMachinery[f.Function]) {
			if !more {
				break
			}
			continue
		}
		leading = false
		fmt.Fprintf(&b, "%s:%d in %s\n", f.File, f.Line, f.Function)
		if !more {
			break
		}
	}
	return b.String()
}

// rapidMachinery are the calls rapid leaves out of the top of a traceback.
var rapidMachinery = map[string]bool{
	"pgregory.net/rapid.(*customGen[...]).maybeValue.func1": true,
	"pgregory.net/rapid.runAction.func1":                    true,
}

// isInvalidData reports whether p is rapid's panic for a case it draws
// again: t.Skip, or a filter or generator that gave up.
func isInvalidData(p any) bool {
	t := reflect.TypeOf(p)
	return t != nil && t.PkgPath() == "pgregory.net/rapid" && t.Name() == "invalidData"
}
