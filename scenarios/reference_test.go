package scenarios_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
)

// A limiter's over against its own ideal run hides a defect built into it:
// the ideal carries the defect too. A token bucket that is never capped
// shows a few % over itself behind a store, and nearly twice what the token
// bucket it names as its reference admits on the same requests; the GCRA
// naming itself measures the same over either way.
func TestOverAgainstTheNamedReferenceShowsABuiltInDefect(t *testing.T) {
	t.Parallel()
	uncapped := limiter.FromAlgorithm(planted.UncappedTokenBucket)
	uncapped.Reference = algos.TokenBucket
	gcra := limiter.FromAlgorithm(algos.GCRA)
	gcra.Reference = algos.GCRA
	m, err := scenarios.RunMatrix([]limiter.Spec{uncapped, gcra, limiter.FromAlgorithm(algos.TokenBucket)}, small())
	if err != nil {
		t.Fatal(err)
	}
	cell, _ := m.Cell(uncapped.Name, model.StoreClock)
	t.Logf("%s behind a store: %+.1f%% over its own ideal, %+.1f%% over %s's", uncapped.Name, cell.Over, cell.OverReference, uncapped.Reference.Name)
	if cell.Over > 5 || cell.OverReference < 50 {
		t.Errorf("%s: over %+.1f%% its own ideal and %+.1f%% its reference's; want at most +5%% and at least +50%%", uncapped.Name, cell.Over, cell.OverReference)
	}
	for _, d := range []model.Deployment{model.NodeClock, model.StoreClock, model.LocalSplit} {
		if c, _ := m.Cell(gcra.Name, d); c.Over != c.OverReference {
			t.Errorf("%s, %s: over %+.1f%% its ideal but %+.1f%% its reference, which is itself", gcra.Name, d, c.Over, c.OverReference)
		}
		if c, _ := m.Cell(algos.TokenBucket.Name, d); !math.IsNaN(c.OverReference) {
			t.Errorf("%s names no reference, yet measures %+.1f%% over one", algos.TokenBucket.Name, c.OverReference)
		}
	}
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "token-bucket for "+uncapped.Name) || !strings.Contains(b.String(), "(ref +") {
		t.Errorf("the table does not show the reference's over:\n%s", b.String())
	}
}
