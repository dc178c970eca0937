package algos_test

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
)

// Each rule of a good answer, broken alone, is named; answers inside every
// bound pass.
func TestAnswerBoundsNameTheRuleBroken(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 150) // idle within W·⌈B/L⌉ + 2W = 4 s
	b := l.Answers(0)
	if b.MostRemaining != 150 || b.LongestWait != 40*algos.Second {
		t.Fatalf("bounds %+v, want Remaining ≤ 150 and waits ≤ 40s", b)
	}
	if skewed := l.Answers(3 * algos.Second); skewed.LongestWait != 43*algos.Second {
		t.Errorf("3 s of spread: longest wait %s, want 43s: a caller behind is told to wait the gap too", algos.FormatMicros(skewed.LongestWait))
	}
	for _, tc := range []struct {
		name string
		d    algos.Decision
		why  string // "" for a good answer
	}{
		{"an admit", algos.Decision{Allowed: true, Remaining: 150, Reset: 40 * algos.Second}, ""},
		{"a denial", algos.Decision{RetryAfter: 10, Reset: 10}, ""},
		{"negative remaining", algos.Decision{Allowed: true, Remaining: -1}, "negative Remaining (-1)"},
		{"negative retry-after", algos.Decision{RetryAfter: -5, Reset: 10}, "negative Retry-After (-5µs)"},
		{"negative reset", algos.Decision{Allowed: true, Reset: -545}, "admitted with a negative Reset (-545µs)"},
		{"retry-after on an admit", algos.Decision{Allowed: true, RetryAfter: 1, Reset: 1}, "admitted with a Retry-After (1µs)"},
		{"remaining above the limit", algos.Decision{Allowed: true, Remaining: 151}, "Remaining 151, more than the limit ever holds (150)"},
		{"an epoch for a reset", algos.Decision{Allowed: true, Reset: 1_700_000_000 * algos.Second}, "longer than any limit of this size needs (at most 40s)"},
		{"retry-after past the reset", algos.Decision{RetryAfter: 11, Reset: 10}, "refused with Retry-After 11µs, after its Reset (10µs)"},
	} {
		d := tc.d
		if bad := b.Bad(&d); bad != (tc.why != "") {
			t.Errorf("%s: Bad = %v", tc.name, bad)
		}
		if why := b.Why(d); (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%s: Why = %q, want %q in it", tc.name, why, tc.why)
		}
	}
}

// None of the six ever answers what the bounds forbid, whatever the limit,
// however its callers' clocks disagree (each call is told a time up to
// spread µs behind the latest it was told).
func TestNoAlgorithmGivesABadAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := algos.MustLimit(rapid.Int64Range(1, 50).Draw(t, "rate"), rapid.Int64Range(1, 3*algos.Second).Draw(t, "window"),
			rapid.Int64Range(1, 120).Draw(t, "burst"))
		spread := rapid.Int64Range(0, 2*algos.Second).Draw(t, "spread")
		steps := rapid.SliceOfN(rapid.Int64Range(-spread, l.Window), 1, 300).Draw(t, "steps")
		for _, a := range algos.All() {
			if why := firstBadAnswer(a, l, spread, steps); why != "" {
				t.Fatal(why)
			}
		}
	})
}

// The same check sees a planted Reset taken from a whole-second Unix time:
// a key that gets back to idle within its second is told a reset in the
// past.
func TestBadAnswerCheckSeesAResetInThePast(t *testing.T) {
	l := algos.MustLimit(100, algos.Second, 100)
	steps := []int64{545, 1000, 1000, 30_000, 400_000}
	if why := firstBadAnswer(algos.GCRA, l, 0, steps); why != "" {
		t.Fatalf("GCRA: %s", why)
	}
	why := firstBadAnswer(planted.GCRAResetWholeSeconds, l, 0, steps)
	if !strings.Contains(why, "call 0 at 0.000545s") || !strings.Contains(why, "negative Reset (-545µs)") {
		t.Errorf("the planted reset: %q, want the first call's negative Reset", why)
	}
}

// firstBadAnswer decides, on one key of a, a call after each step (a step
// back of up to spread is a caller whose clock is behind the latest), and
// says where the first answer the bounds forbid came, or "" for none.
func firstBadAnswer(a algos.Algorithm, l algos.Limit, spread int64, steps []int64) string {
	b := l.Answers(spread)
	var s algos.State
	latest := int64(0)
	for i, step := range steps {
		now := max(0, latest+step)
		if step >= 0 {
			latest = now
		}
		d := a.Decide(&s, now, l)
		if b.Bad(&d) {
			return fmt.Sprintf("%s under %v, call %d at %s (spread %s): %s", a.Name, l, i, algos.FormatTime(now), algos.FormatMicros(spread), b.Why(d))
		}
	}
	return ""
}
