package scenarios

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteVerdicts renders verdicts as an aligned table, one row per suspect.
// A suspect that broke no promise but answered some requests with an error
// is not "clean": its verdict counts the errors, and the first follows.
func WriteVerdicts(w io.Writer, verdicts []Verdict) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "deployment\tverdict\tfirst seed\tseeds caught\tfirst violation")
	fmt.Fprintln(tw, "----------\t-------\t----------\t------------\t---------------")
	for _, v := range verdicts {
		verdict, first, reason := "clean", "-", "-"
		switch {
		case v.Caught:
			verdict, first = "caught", fmt.Sprint(v.FirstSeed)
			reason = v.FirstClient.String() + " client, " + v.FirstBreach.String() + ": " + v.First.Reason
		case v.Errors > 0:
			verdict, reason = fmt.Sprintf("%d errors", v.Errors), fmt.Sprint(v.FirstError)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\n", v.Suspect, verdict, first, v.SeedsCaught, v.Seeds, strings.ReplaceAll(reason, "\t", " "))
	}
	return tw.Flush()
}

// WriteBreaches writes, for every caught suspect, every kind of breach it
// showed: on how many seeds, and its first example (seed, client, why).
func WriteBreaches(w io.Writer, verdicts []Verdict) error {
	width := 0
	for _, b := range Breaches() {
		width = max(width, len(b.String()))
	}
	for _, v := range verdicts {
		if !v.Caught {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n", v.Suspect); err != nil {
			return err
		}
		for _, b := range Breaches() {
			e := v.FirstBy[b]
			if e == nil {
				continue
			}
			seeds := fmt.Sprintf("%d/%d", v.SeedsBy[b], v.Seeds)
			if _, err := fmt.Fprintf(w, "    %-*s  %-7s  seed %d, %s client: %s\n", width, b, seeds, e.Seed, e.Client, e.Violation.Reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteTraces writes, for every caught suspect whose first breach has a
// trace, the suspect, the breach and the requests that show it.
func WriteTraces(w io.Writer, verdicts []Verdict) error {
	for _, v := range verdicts {
		if !v.Caught || len(v.Trace) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n%s, seed %d, %s client, %s:\n", v.Suspect, v.FirstSeed, v.FirstClient, v.FirstBreach); err != nil {
			return err
		}
		for _, line := range v.Trace {
			if _, err := fmt.Fprintf(w, "    %s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}
