package differential

import (
	"fmt"
	"io"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// MaxRows is the most windows Write prints; the rest are counted in a
// "… N more" line (Comparison.Windows holds them all).
const MaxRows = 20

// Write prints rep: a line naming the two limiters, the limit and the
// deployment; a table of the windows that differ, those whose error is not
// 0 or in which a limiter answered an error (key, window, each side's
// admits, the signed error, and each side's errors when there are any), in
// key then time order, at most MaxRows of them; then a summary line (the
// windows, the totals, the worst over and under), a line counting the
// requests admitted by one side only (naming the first) and, when a limiter answered errors, a
// line naming the first. The same Comparison always prints the same bytes.
func (rep Comparison) Write(w io.Writer) error {
	mine, ref := rep.labels()
	var b strings.Builder
	where := rep.Deployment.String()
	if rep.Deployment != model.Ideal {
		where = fmt.Sprintf("%s, %d nodes, seed %d", where, rep.Nodes, rep.Seed)
	}
	fmt.Fprintf(&b, "%s (mine) against %s (ref): %v, %s\n", rep.Mine, rep.Ref, rep.Limit, where)

	errs := rep.MineErrors+rep.RefErrors > 0
	shown := func(r Window) bool { return r.Error != 0 || r.MineErrors+r.RefErrors > 0 }
	listed := 0
	for _, r := range rep.Windows {
		if shown(r) {
			listed++
		}
	}
	if listed == 0 {
		b.WriteString("no window differs\n")
	} else {
		head := []string{"key", "window", mine, ref, "error"}
		if errs {
			head = append(head, "errors "+mine, "errors "+ref)
		}
		var cells [][]string
		for _, r := range rep.Windows {
			if !shown(r) {
				continue
			}
			if len(cells) == MaxRows {
				break
			}
			row := []string{fmt.Sprint(r.Key), window(r), fmt.Sprint(r.Mine), fmt.Sprint(r.Ref), fmt.Sprintf("%+d", r.Error)}
			if errs {
				row = append(row, fmt.Sprint(r.MineErrors), fmt.Sprint(r.RefErrors))
			}
			cells = append(cells, row)
		}
		table(&b, head, cells)
		if more := listed - len(cells); more > 0 {
			fmt.Fprintf(&b, "… %d more windows that differ\n", more)
		}
	}

	fmt.Fprintf(&b, "summary: %d of %d windows differ; admitted %d by %s, %d by %s (%+d); worst over %s; worst under %s\n",
		rep.Differ, len(rep.Windows), rep.MineAdmits, mine, rep.RefAdmits, ref, rep.MineAdmits-rep.RefAdmits,
		worst(rep.WorstOver), worst(rep.WorstUnder))
	fmt.Fprintf(&b, "requests: of %d both answered, %d admitted by %s only, %d by %s only",
		rep.Compared, rep.MineOnly, mine, rep.RefOnly, ref)
	if f := rep.First; f != nil {
		yes, no := mine, ref
		if !f.MineAdmitted {
			yes, no = ref, mine
		}
		fmt.Fprintf(&b, "; the first, request %d (key %d, sent at %s), admitted by %s, denied by %s",
			f.Index, f.Key, algos.FormatTime(f.Sent), yes, no)
	}
	b.WriteString("\n")
	if errs {
		fmt.Fprintf(&b, "errors, counted apart: %d by %s, %d by %s; the first: %v\n",
			rep.MineErrors, mine, rep.RefErrors, ref, firstError(rep))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func window(r Window) string {
	return fmt.Sprintf("[%s, %s)", algos.FormatTime(r.Start), algos.FormatTime(r.End))
}

func worst(r Window) string {
	if r.Error == 0 {
		return "none"
	}
	return fmt.Sprintf("%+d (key %d, %s)", r.Error, r.Key, window(r))
}

func firstError(rep Comparison) error {
	if rep.FirstMineError != nil {
		return rep.FirstMineError
	}
	return rep.FirstRefError
}

// table writes head and cells in columns, the window left-aligned and every
// other column right-aligned, two spaces apart.
func table(b *strings.Builder, head []string, cells [][]string) {
	width := make([]int, len(head))
	for _, row := range append([][]string{head}, cells...) {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range append([][]string{head}, cells...) {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		b.WriteString("\n")
	}
}
