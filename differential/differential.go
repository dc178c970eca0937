package differential

import (
	"errors"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// Window is one key's aligned window [Start, End) of the limit's window, with
// how many admits each side decided in it and how many requests each side's
// limiter answered with an error there (by the true time they were decided).
type Window struct {
	Key        int
	Start, End int64 // µs; End = Start + W, Start a multiple of W
	Mine, Ref  int64 // admits decided in [Start, End)
	Error      int64 // Mine − Ref: positive is over-admission, negative under
	MineErrors int64 // requests mine answered with an error in the window
	RefErrors  int64 // requests ref answered with an error in the window
}

// Disagreement is the first request of Config.Requests that one side
// admitted and the other denied.
type Disagreement struct {
	Index        int   // its index in Config.Requests
	Key          int   // its key
	Sent         int64 // the true time it was sent, µs
	MineDecided  int64 // the true time mine decided it, µs
	RefDecided   int64 // the true time ref decided it, µs
	MineAdmitted bool  // true: mine admitted and ref denied; false: the reverse
}

// Comparison is the comparison Run makes. Windows holds every key's windows in
// which either side admitted something or answered an error, ordered by key
// then start; a window missing from Windows has no admit and no error on
// either side, so its error is 0. The worst windows are the first in that
// order to reach the extreme; a Comparison with no positive (negative) error
// has a zero WorstOver (WorstUnder), whose Error is 0.
type Comparison struct {
	Mine, Ref  string // the limiters' names
	Limit      algos.Limit
	Deployment model.Deployment
	Nodes      int
	Seed       uint64
	Windows    []Window
	Differ     int   // rows whose Error is not 0
	MineAdmits int64 // admits over the whole run, every key
	RefAdmits  int64

	// MineErrors and RefErrors count the requests each limiter answered
	// with an error; FirstMineError and FirstRefError are the first of them
	// (model.Result.FirstError), nil when there is none.
	MineErrors, RefErrors         int64
	FirstMineError, FirstRefError error

	// Requests is len(Config.Requests). The closed-loop clients' requests
	// (Config.Loop) depend on what each side answered, so only the static
	// requests are compared one by one: Compared of them were answered by
	// both (no error on either side), MineOnly were admitted by mine alone
	// and RefOnly by ref alone. The loop requests' admits are in the Windows.
	Requests, Compared int
	MineOnly, RefOnly  int
	First              *Disagreement // nil when they agree on every request

	WorstOver  Window // the largest positive Error
	WorstUnder Window // the most negative Error
}

// Run plays cfg with mine, then with ref (cfg.Limiter is replaced by each,
// nothing else changes, so the same requests reach both and, the seed
// being the same, through the same nodes and legs), and compares their
// admits in every aligned window of cfg.Limit.Window. It returns an error,
// never a panic, for an invalid Spec, an invalid limit, a deployment that
// does not apply to either limiter (model.Applies), a Config with no
// requests, and anything model.Run rejects; each names the side at fault.
// Errors the limiters answer are counted in the Comparison, not returned. The
// same arguments give the same Comparison, for limiters that are themselves
// deterministic.
func Run(mine, ref limiter.Spec, cfg model.Config) (Comparison, error) {
	if err := validate(mine, ref, cfg); err != nil {
		return Comparison{}, err
	}
	cfg.Limiter = mine
	a, err := model.Run(cfg)
	if err != nil {
		return Comparison{}, fmt.Errorf("differential: running mine (%s): %w", mine.Name, err)
	}
	cfg.Limiter = ref
	b, err := model.Run(cfg)
	if err != nil {
		return Comparison{}, fmt.Errorf("differential: running ref (%s): %w", ref.Name, err)
	}
	return compare(mine.Name, ref.Name, cfg, &a, &b), nil
}

// RunAgainst is Run for a caller that has run mine already: mineRun is
// cfg's run with mine as its limiter (model.Run or model.RunInto, with
// cfg's requests, seed and closed-loop clients), and ref's run is made
// into *refRun (model.RunInto, in the memory it holds from an earlier
// run). It is how a hunt that has judged mine's run compares it with a
// reference without running it again. It returns Run's errors, and an
// error when mineRun has fewer outcomes than cfg has requests. The Comparison
// keeps nothing of either Result.
func RunAgainst(mine, ref limiter.Spec, cfg model.Config, mineRun, refRun *model.Result) (Comparison, error) {
	if err := validate(mine, ref, cfg); err != nil {
		return Comparison{}, err
	}
	if len(mineRun.Outcomes) < len(cfg.Requests) {
		return Comparison{}, fmt.Errorf("differential: mine's run has %d outcomes for %d requests", len(mineRun.Outcomes), len(cfg.Requests))
	}
	cfg.Limiter = ref
	if err := model.RunInto(cfg, refRun); err != nil {
		return Comparison{}, fmt.Errorf("differential: running ref (%s): %w", ref.Name, err)
	}
	return compare(mine.Name, ref.Name, cfg, mineRun, refRun), nil
}

// compare is Run's comparison of mine's run a and ref's run b of cfg.
func compare(mine, ref string, cfg model.Config, a, b *model.Result) Comparison {
	rep := Comparison{
		Mine: mine, Ref: ref,
		Limit: cfg.Limit, Deployment: cfg.Deployment, Nodes: cfg.Nodes, Seed: cfg.Seed,
		FirstMineError: a.FirstError, FirstRefError: b.FirstError,
		Requests: len(cfg.Requests),
	}
	rep.compareRequests(cfg.Requests, a, b)
	w := cfg.Limit.Window
	var wa, wb []count // reused for every key
	for key := range max(len(a.Keys), len(b.Keys)) {
		wa, wb = windows(wa[:0], a.AdmitTimes(key), w), windows(wb[:0], b.AdmitTimes(key), w)
		rep.Windows = appendWindows(rep.Windows, key, w, wa, wb,
			windows(nil, errorTimes(cfg, a, key), w), windows(nil, errorTimes(cfg, b, key), w))
	}
	for _, r := range rep.Windows {
		rep.MineAdmits += r.Mine
		rep.RefAdmits += r.Ref
		rep.MineErrors += r.MineErrors
		rep.RefErrors += r.RefErrors
		if r.Error != 0 {
			rep.Differ++
		}
		if r.Error > rep.WorstOver.Error {
			rep.WorstOver = r
		}
		if r.Error < rep.WorstUnder.Error {
			rep.WorstUnder = r
		}
	}
	return rep
}

// validate says which side, or which part of cfg, is wrong before anything
// runs, so that the error names the limiter rather than "model".
func validate(mine, ref limiter.Spec, cfg model.Config) error {
	for _, s := range []struct {
		side string
		spec limiter.Spec
	}{{"mine", mine}, {"ref", ref}} {
		if err := s.spec.Validate(); err != nil {
			return fmt.Errorf("differential: %s: %w", s.side, err)
		}
	}
	if err := cfg.Limit.Validate(); err != nil {
		return fmt.Errorf("differential: invalid limit %+v: %w", cfg.Limit, err)
	}
	if !slices.Contains(model.Deployments(), cfg.Deployment) {
		return fmt.Errorf("differential: unknown deployment %v (want one of %v)", cfg.Deployment, model.Deployments())
	}
	if err := model.Applies(mine, cfg.Deployment); err != nil {
		return fmt.Errorf("differential: mine: %w", err)
	}
	if err := model.Applies(ref, cfg.Deployment); err != nil {
		return fmt.Errorf("differential: ref: %w", err)
	}
	if len(cfg.Requests) == 0 && len(cfg.Loop) == 0 {
		return errors.New("differential: the Config has no requests and no closed-loop clients: there is nothing to compare")
	}
	return nil
}

// compareRequests counts the static requests one side admitted and the
// other denied; a request either side failed is left out (it is counted
// with the errors).
func (rep *Comparison) compareRequests(reqs []record.Request, a, b *model.Result) {
	for i := range reqs {
		x, y := a.Outcomes[i], b.Outcomes[i]
		if x.Failed || y.Failed {
			continue
		}
		rep.Compared++
		if x.Admitted == y.Admitted {
			continue
		}
		if x.Admitted {
			rep.MineOnly++
		} else {
			rep.RefOnly++
		}
		if rep.First == nil {
			rep.First = &Disagreement{Index: i, Key: reqs[i].Key, Sent: reqs[i].Sent,
				MineDecided: x.Decided, RefDecided: y.Decided, MineAdmitted: x.Admitted}
		}
	}
}

// errorTimes returns the true decision times, sorted, of key's requests
// that res's limiter answered with an error.
func errorTimes(cfg model.Config, res *model.Result, key int) []int64 {
	if res.FirstError == nil {
		return nil // the common case: no error, no walk over the outcomes
	}
	var times []int64
	for i, o := range res.Outcomes {
		if !o.Failed {
			continue
		}
		k := -1
		switch j := i - len(cfg.Requests); {
		case j < 0:
			k = cfg.Requests[i].Key
		case j < len(res.LoopRequests):
			k = res.LoopRequests[j].Key
		}
		if k == key {
			times = append(times, o.Decided)
		}
	}
	slices.Sort(times)
	return times
}

// count is how many of a sorted list of times fall in aligned window idx.
type count struct{ idx, n int64 }

// windows appends to out the run-length counts of sorted times by aligned
// window of w.
func windows(out []count, sorted []int64, w int64) []count {
	for _, t := range sorted {
		idx := algos.FloorDiv(t, w)
		if n := len(out); n > 0 && out[n-1].idx == idx {
			out[n-1].n++
			continue
		}
		out = append(out, count{idx, 1})
	}
	return out
}

// appendWindows merges one key's four window counts (mine's admits, ref's
// admits, mine's errors, ref's errors) into rows, in window order.
func appendWindows(rows []Window, key int, w int64, lists ...[]count) []Window {
	at := make([]int, len(lists))
	for {
		// The next window is the smallest index any list has left.
		next, found := int64(0), false
		for i, l := range lists {
			if at[i] < len(l) && (!found || l[at[i]].idx < next) {
				next, found = l[at[i]].idx, true
			}
		}
		if !found {
			return rows
		}
		var n [4]int64
		for i, l := range lists {
			if at[i] < len(l) && l[at[i]].idx == next {
				n[i] = l[at[i]].n
				at[i]++
			}
		}
		rows = append(rows, Window{
			Key: key, Start: next * w, End: (next + 1) * w,
			Mine: n[0], Ref: n[1], Error: n[0] - n[1],
			MineErrors: n[2], RefErrors: n[3],
		})
	}
}

// labels are the two sides' names as printed: their Spec names, told apart
// when a limiter is compared with itself.
func (rep *Comparison) labels() (mine, ref string) {
	if rep.Mine == rep.Ref {
		return rep.Mine + " (mine)", rep.Ref + " (ref)"
	}
	return rep.Mine, rep.Ref
}
