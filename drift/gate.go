package drift

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"text/tabwriter"
)

// Tolerance is how far two numbers of one operation may differ and still
// agree.
type Tolerance struct {
	// Rate is the relative difference allowed between two policies' rates
	// (Quota/Window): 0.05 lets 100/1m agree with 104/1m. 0 asks for the
	// same rate.
	Rate float64
	// Burst is the difference, in requests, allowed between two policies'
	// bursts, and between a measured burst and a policy's beyond the
	// refill the probe allows for (Measurement.Allowance). 0 asks for the
	// same burst.
	Burst int64
}

// ErrDrift is what Gate's error wraps when some operation's numbers
// disagree.
var ErrDrift = errors.New("the documented, configured and measured limits disagree")

// Gate writes the three limits of every operation as a table to w, one
// row per operation (sorted by path, then method): the documented policy,
// the configured one, the measured burst, and the verdict. It fails, with
// an error wrapping ErrDrift, when any operation's numbers disagree beyond
// tol:
//
//   - documented and configured: their rates differ by more than tol.Rate
//     (relative), or their bursts by more than tol.Burst requests;
//   - measured and each stated policy P: a limiter that enforces P admits
//     a fresh key at least P.Burst requests before its first denial and
//     at most P.Burst plus what it refilled during the probe
//     (Measurement.Allowance), so the measured admits must fall in
//     [P.Burst − tol.Burst, P.Burst + Allowance(P) + tol.Burst]; a probe
//     that was never denied disagrees with every policy. A slow machine
//     only widens the allowance: it can hide a small drift, never invent
//     one;
//   - an answer that advertised a quota (X-RateLimit-Limit) other than the
//     configured burst, beyond tol.Burst;
//   - an operation documented but not configured, configured but not
//     documented, or (when measured is not nil) not measured.
//
// A nil measured map leaves the measured column out of the check: the
// documentation against the code alone, for a CI step with no service.
func Gate(w io.Writer, documented, configured map[Operation]Policy, measured map[Operation]Measurement, tol Tolerance) error {
	if tol.Rate < 0 || tol.Burst < 0 {
		return fmt.Errorf("drift: a negative tolerance %+v", tol)
	}
	seen := map[Operation]bool{}
	for o := range documented {
		seen[o] = true
	}
	for o := range configured {
		seen[o] = true
	}
	for o := range measured {
		seen[o] = true
	}
	ops := make([]Operation, 0, len(seen))
	for o := range seen {
		ops = append(ops, o)
	}
	slices.SortFunc(ops, func(a, b Operation) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method))
	})

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\tdocumented\tconfigured\tmeasured\tverdict")
	drifted := 0
	for _, o := range ops {
		d, hasD := documented[o]
		c, hasC := configured[o]
		m, hasM := measured[o]
		var problems []string
		if !hasD {
			problems = append(problems, "not documented")
		}
		if !hasC {
			problems = append(problems, "not configured")
		}
		if measured != nil && !hasM {
			problems = append(problems, "not measured")
		}
		if hasD && hasC && !agree(d, c, tol) {
			problems = append(problems, fmt.Sprintf("configured %s ≠ documented %s", c, d))
		}
		if hasM {
			for _, s := range []struct {
				name string
				p    Policy
				ok   bool
			}{{"documented", d, hasD}, {"configured", c, hasC}} {
				if !s.ok {
					continue
				}
				if !m.Limited {
					problems = append(problems, fmt.Sprintf("measured unlimited ≠ %s burst %d", s.name, s.p.Burst))
					continue
				}
				lo, hi := s.p.Burst-tol.Burst, s.p.Burst+m.Allowance(s.p)+tol.Burst
				if m.Admitted < lo || m.Admitted > hi {
					problems = append(problems, fmt.Sprintf("measured %d ≠ %s burst %s", m.Admitted, s.name, within(s.p.Burst, tol.Burst)))
				}
			}
			if hasC && m.Advertised > 0 && (m.Advertised < c.Burst-tol.Burst || m.Advertised > c.Burst+tol.Burst) {
				problems = append(problems, fmt.Sprintf("advertises a limit of %d ≠ configured burst %d", m.Advertised, c.Burst))
			}
		}
		verdict := "ok"
		if len(problems) > 0 {
			verdict = "DRIFT: " + strings.Join(problems, "; ")
			drifted++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", o, cell(d, hasD), cell(c, hasC), mcell(m, hasM, measured != nil), verdict)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("drift: writing the table: %w", err)
	}
	if drifted > 0 {
		return fmt.Errorf("drift: %d of %d operations: %w", drifted, len(ops), ErrDrift)
	}
	return nil
}

// agree reports whether a and b are the same policy within tol.
func agree(a, b Policy, tol Tolerance) bool {
	if d := a.Burst - b.Burst; d > tol.Burst || -d > tol.Burst {
		return false
	}
	// Rates a.Quota/a.Window and b.Quota/b.Window, compared exactly.
	x := new(big.Int).Mul(big.NewInt(a.Quota), big.NewInt(b.Window))
	y := new(big.Int).Mul(big.NewInt(b.Quota), big.NewInt(a.Window))
	if tol.Rate == 0 {
		return x.Cmp(y) == 0
	}
	fx, _ := new(big.Float).SetInt(x).Float64()
	fy, _ := new(big.Float).SetInt(y).Float64()
	diff := fx - fy
	if diff < 0 {
		diff = -diff
	}
	return diff <= tol.Rate*max(fx, fy)
}

// within is n, and ±tol when there is one.
func within(n, tol int64) string {
	if tol == 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d±%d", n, tol)
}

func cell(p Policy, ok bool) string {
	if !ok {
		return "-"
	}
	return p.String()
}

func mcell(m Measurement, ok, asked bool) string {
	switch {
	case !asked:
		return "(not run)"
	case !ok:
		return "-"
	}
	return m.String()
}
