package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
)

// How the text reports print their numbers.

// seedList prints seeds as "1-10" when they are consecutive.
func seedList(seeds []uint64) string {
	consecutive := true
	for i := 1; i < len(seeds); i++ {
		if seeds[i] != seeds[i-1]+1 {
			consecutive = false
		}
	}
	if consecutive && len(seeds) > 2 {
		return fmt.Sprintf("%d-%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}

// fmtSeconds prints µs as seconds without trailing zeros: 10.5s.
func fmtSeconds(us int64) string {
	return strconv.FormatFloat(float64(us)/float64(algos.Second), 'f', -1, 64) + "s"
}

// fmtMillis prints µs as milliseconds, with decimals only when needed.
func fmtMillis(us int64) string {
	if us%1000 == 0 {
		return fmt.Sprintf("%dms", us/1000)
	}
	return fmt.Sprintf("%.3fms", float64(us)/1000)
}

// fmtPeak prints a peak as a multiple of the limit: 1.99x.
func fmtPeak(x float64) string { return fmt.Sprintf("%.2fx", x) }

// fmtOver prints a signed percentage, "-" for NaN: +12.3%.
func fmtOver(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// fmtShare prints a percentage, "-" for NaN: 12.3%.
func fmtShare(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", p)
}
