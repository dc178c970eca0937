package differential

import (
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
)

// Bound is how far mine may be from ref and still pass Comparison.Check. The
// zero Bound demands that they admit exactly as many in every window and
// that neither answer an error.
type Bound struct {
	// Over is how many admits more than ref mine may make in any one key's
	// aligned window: Check fails when some Window's Error > Over.
	Over int64
	// Under is how many admits fewer than ref mine may make in any one
	// key's aligned window: Check fails when some Window's Error < −Under.
	Under int64
	// Errors is how many requests the two limiters may answer with an
	// error, both sides together, over the whole run. An error is never a
	// denial, so by default (0) any error fails Check: a window whose
	// numbers are short of the requests that failed compares nothing.
	Errors int64
}

// BoundError is what Check returns when a window is past the bound: the
// window furthest past it (over or under), the bound it is past, and, in
// its message, the worst window on the other side when that one is past
// its bound too.
type BoundError struct {
	Window Window // the window furthest past the bound
	Bound  int64  // Bound.Over when Window.Error > 0, Bound.Under otherwise
	text   string
}

// Error says, in words, which window is past the bound and by how much.
func (e *BoundError) Error() string { return e.text }

// Check returns nil when every window of rep is within b and the limiters
// answered at most b.Errors errors; otherwise an error saying, in words,
// what went past: too many limiter errors (naming the first), or a
// *BoundError naming the window furthest past its bound, e.g.
//
//	key 0, window [3.000000s, 4.000000s): my-limiter admitted 57, sliding-log 50: 7 over, the bound is 2
//
// A negative bound is an error too.
func (rep Comparison) Check(b Bound) error {
	if b.Over < 0 || b.Under < 0 || b.Errors < 0 {
		return fmt.Errorf("differential: a bound is a number of admits or errors, never negative: %+v", b)
	}
	mine, ref := rep.labels()
	if errs := rep.MineErrors + rep.RefErrors; errs > b.Errors {
		text := fmt.Sprintf("%s answered %d errors and %s %d, %d in all, the bound is %d",
			mine, rep.MineErrors, ref, rep.RefErrors, errs, b.Errors)
		for _, first := range []error{rep.FirstMineError, rep.FirstRefError} {
			if first != nil {
				return fmt.Errorf("%s; the first: %w", text, first)
			}
		}
		return errors.New(text)
	}
	overBy := rep.WorstOver.Error - b.Over
	underBy := -rep.WorstUnder.Error - b.Under
	if overBy <= 0 && underBy <= 0 {
		return nil
	}
	over := &BoundError{Window: rep.WorstOver, Bound: b.Over, text: rep.describe(rep.WorstOver, b.Over)}
	under := &BoundError{Window: rep.WorstUnder, Bound: b.Under, text: rep.describe(rep.WorstUnder, b.Under)}
	switch {
	case overBy <= 0:
		return under
	case underBy <= 0:
		return over
	case overBy >= underBy:
		over.text += "; and " + under.text
		return over
	default:
		under.text += "; and " + over.text
		return under
	}
}

// describe says what happened in one window, and the bound it is past.
func (rep Comparison) describe(r Window, bound int64) string {
	mine, ref := rep.labels()
	side, by := "over", r.Error
	if r.Error < 0 {
		side, by = "under", -r.Error
	}
	return fmt.Sprintf("key %d, window [%s, %s): %s admitted %d, %s %d: %d %s, the bound is %d",
		r.Key, algos.FormatTime(r.Start), algos.FormatTime(r.End), mine, r.Mine, ref, r.Ref, by, side, bound)
}
