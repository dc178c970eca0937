package scenarios

import (
	"bytes"
	"strings"
)

// group is a heading over cols consecutive columns (after the first).
type group struct {
	title string
	cols  int
}

// renderGrid writes a plain-text table: the first column left-aligned, the
// others right-aligned, groups separated by " | " under their titles.
func renderGrid(b *bytes.Buffer, groups []group, heads []string, rows [][]string) {
	width := make([]int, len(heads))
	for i, h := range heads {
		width[i] = runeLen(h)
	}
	for _, row := range rows {
		for i, s := range row {
			width[i] = max(width[i], runeLen(s))
		}
	}
	// Which columns start a group (after column 0), and widen the last
	// column of a group whose title is longer than the group.
	starts := make([]bool, len(heads))
	col := 1
	for _, g := range groups {
		starts[col] = true
		if extra := runeLen(g.title) - span(width, col, g.cols); extra > 0 {
			width[col+g.cols-1] += extra
		}
		col += g.cols
	}
	sep := func(i int) string {
		if i == 0 {
			return ""
		}
		if starts[i] {
			return " | "
		}
		return "  "
	}
	line := func(cells []string, left func(i int) bool) {
		var s strings.Builder
		for i, c := range cells {
			s.WriteString(sep(i))
			pad := strings.Repeat(" ", width[i]-runeLen(c))
			if left(i) {
				s.WriteString(c + pad)
			} else {
				s.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(s.String(), " ") + "\n")
	}
	if len(groups) > 0 {
		titles := make([]string, 0, len(groups)+1)
		titles = append(titles, strings.Repeat(" ", width[0]))
		col = 1
		for _, g := range groups {
			titles = append(titles, g.title+strings.Repeat(" ", span(width, col, g.cols)-runeLen(g.title)))
			col += g.cols
		}
		var s strings.Builder
		for gi, t := range titles {
			if gi > 0 {
				s.WriteString(" | ")
			}
			s.WriteString(t)
		}
		b.WriteString(strings.TrimRight(s.String(), " ") + "\n")
	}
	line(heads, func(i int) bool { return i == 0 })
	dashes := make([]string, len(heads))
	for i := range heads {
		dashes[i] = strings.Repeat("-", width[i])
	}
	line(dashes, func(int) bool { return true })
	for _, row := range rows {
		line(row, func(i int) bool { return i == 0 })
	}
}

// span is the width of the n columns from col on, with the two spaces
// between each two of them.
func span(width []int, col, n int) int {
	w := 0
	for i := col; i < col+n; i++ {
		w += width[i]
	}
	return w + 2*(n-1)
}

// runeLen is the width of s in a fixed-width font, one column a rune.
func runeLen(s string) int { return len([]rune(s)) }
