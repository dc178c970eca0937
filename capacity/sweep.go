package capacity

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/fleet"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/traffic"
)

// Sweep asks the planning question: what is the tightest setting that keeps
// rejects within my error budget, for this traffic? It runs Trace through
// the limiter that Setting makes for each of Values, in order, and picks the
// first value whose RejectShare is at most Budget. Values go from the
// tightest to the loosest (ascending, for a limit or a burst: a smaller one
// is tighter; for a sync interval, a smaller one is closer to exact), so
// the first that qualifies is the tightest that does.
type Sweep struct {
	// Trace is the traffic, synthetic or recorded.
	Trace traffic.Trace
	// Parameter names what is swept, for the report ("limit", "burst",
	// "sync interval").
	Parameter string
	// Setting makes the limiter and its limit for one value.
	Setting func(v int64) (limiter.Spec, algos.Limit, error)
	// Values are the settings to try, strictly ascending.
	Values []int64
	// Budget is the largest share of requests that may be rejected (or
	// fail), in [0, 1): 0.01 is 1%.
	Budget float64
	// Format prints a value in the report; nil prints the integer.
	Format func(v int64) string
}

// SweepRow is one value of a Sweep and what it did.
type SweepRow struct {
	Value  int64
	Result TraceResult
	// Meets is true when Result.RejectShare() is at most the budget.
	Meets bool
}

// SweepResult is a Sweep's table.
type SweepResult struct {
	Sweep Sweep
	Rows  []SweepRow
	// Best is the index in Rows of the tightest value that meets the
	// budget, or -1 when none does.
	Best int
}

// Tightest returns the row of the tightest value that meets the budget,
// and false when none does.
func (r SweepResult) Tightest() (SweepRow, bool) {
	if r.Best < 0 {
		return SweepRow{}, false
	}
	return r.Rows[r.Best], true
}

// Run tries every value and returns the table; an invalid Sweep, or a
// setting or a run that fails, is an error.
func (s Sweep) Run() (SweepResult, error) {
	if err := s.validate(); err != nil {
		return SweepResult{}, err
	}
	res := SweepResult{Sweep: s, Best: -1}
	for _, v := range s.Values {
		spec, l, err := s.Setting(v)
		if err != nil {
			return SweepResult{}, fmt.Errorf("capacity: %s %s: %w", s.parameter(), s.format(v), err)
		}
		r, err := Run(s.Trace, spec, l)
		if err != nil {
			return SweepResult{}, fmt.Errorf("capacity: %s %s: %w", s.parameter(), s.format(v), err)
		}
		row := SweepRow{Value: v, Result: r, Meets: r.RejectShare() <= s.Budget}
		if row.Meets && res.Best < 0 {
			res.Best = len(res.Rows)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func (s Sweep) validate() error {
	switch {
	case s.Setting == nil:
		return errors.New("capacity: a Sweep needs a Setting")
	case len(s.Values) == 0:
		return errors.New("capacity: a Sweep needs Values to try")
	case math.IsNaN(s.Budget) || s.Budget < 0 || s.Budget >= 1:
		return fmt.Errorf("capacity: a reject budget must be in [0, 1), got %v", s.Budget)
	case len(s.Trace.Requests) == 0:
		return errors.New("capacity: a Sweep needs a trace with requests")
	}
	for i := 1; i < len(s.Values); i++ {
		if s.Values[i] <= s.Values[i-1] {
			return fmt.Errorf("capacity: sweep values must be strictly ascending, from the tightest; %d follows %d", s.Values[i], s.Values[i-1])
		}
	}
	return nil
}

func (s Sweep) parameter() string {
	if s.Parameter == "" {
		return "value"
	}
	return s.Parameter
}

func (s Sweep) format(v int64) string {
	if s.Format != nil {
		return s.Format(v)
	}
	return fmt.Sprint(v)
}

// Range is lo, lo+step, …, up to hi: the values of a sweep. It returns nil
// for a step below 1 or hi below lo, which a Sweep refuses.
func Range(lo, hi, step int64) []int64 {
	if step < 1 || hi < lo {
		return nil
	}
	var vs []int64
	for v := lo; v <= hi; v += step {
		vs = append(vs, v)
		if v > math.MaxInt64-step {
			break
		}
	}
	return vs
}

// Limits is the Setting of a limit sweep: spec with v requests per window
// µs, and a burst of v.
func Limits(spec limiter.Spec, window int64) func(v int64) (limiter.Spec, algos.Limit, error) {
	return func(v int64) (limiter.Spec, algos.Limit, error) {
		l, err := algos.NewLimit(v, window, v)
		return spec, l, err
	}
}

// Bursts is the Setting of a burst sweep: spec with rate requests per window
// µs and a burst of v.
func Bursts(spec limiter.Spec, rate, window int64) func(v int64) (limiter.Spec, algos.Limit, error) {
	return func(v int64) (limiter.Spec, algos.Limit, error) {
		l, err := algos.NewLimit(rate, window, v)
		return spec, l, err
	}
}

// TB is the part of testing.TB that RequireFits uses, so that a test can
// hand it a recorder and see it fail.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// RequireFits is the CI gate: it runs s, logs its table, and fails t with
// the table when no value meets the budget (or when the sweep cannot run),
// so that a change to the traffic, or to the limiter, that no setting in
// the range can absorb breaks the build. It returns the tightest row that
// fits; a failing t that does not stop the test gets a zero row.
func RequireFits(t TB, s Sweep) SweepRow {
	t.Helper()
	r, err := s.Run()
	if err != nil {
		t.Fatalf("capacity gate: %v", err)
		return SweepRow{}
	}
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatalf("capacity gate: %v", err)
		return SweepRow{}
	}
	row, ok := r.Tightest()
	if !ok {
		t.Fatalf("capacity gate: no %s in the range keeps rejects within %s of requests:\n%s", s.parameter(), pct(s.Budget), b.String())
		return SweepRow{}
	}
	t.Logf("capacity gate:\n%s", b.String())
	return row
}

// SyncIntervals is the Setting of a sync-interval sweep: a gateway fleet
// of nodes sharing a cached counter (package fleet) that syncs every v µs,
// under l.
func SyncIntervals(nodes int, l algos.Limit) func(v int64) (limiter.Spec, algos.Limit, error) {
	return func(v int64) (limiter.Spec, algos.Limit, error) {
		spec, err := fleet.CachedCounter{Nodes: nodes, Sync: v}.Spec()
		return spec, l, err
	}
}
