package metrics

// The formats of the reports, for a package that writes reports of its own
// beside these (package capacity) and wants them to read the same.

// FormatDuration prints µs as every report here does: "0s", "2s", "1.5s",
// "250ms", "1.25ms", "40µs", exact to the µs.
func FormatDuration(us int64) string { return fmtDur(us) }

// FormatPercent prints a ratio as a percentage with one decimal ("28.2%"),
// or "-" for NaN (nothing decided).
func FormatPercent(x float64) string { return fmtPct(x) }

// Sparkline draws points as one character each: a space for 0, else one of
// eight heights, ⌈8·v/top⌉, so that anything at all shows; top is the
// value drawn full height (points above it are drawn full height too).
func Sparkline(points []int64, top int64) string { return sparkline(points, top) }
