package redisrate_test

import (
	"flag"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/adapters/redisrate"
	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/properties"
	"github.com/overshoot-go/overshoot/scenarios"
)

// defaults runs redis_rate through the checks at the sizes a built-in
// algorithm gets: the default hunt, the default matrix, properties.Check's
// default case counts. Each call is a script run on simredis, so together
// they take minutes; `make libraries` runs them.
var defaults = flag.Bool("redisrate.defaults", false, "run redis_rate through the default hunt, matrix and properties (minutes; make libraries)")

func needDefaults(t *testing.T) {
	t.Helper()
	if !*defaults {
		t.Skip("the default-size runs take minutes: go test ./adapters/redisrate -redisrate.defaults (make libraries)")
	}
}

// At the default size, redis_rate's float GCRA breaks the exact promise by
// one admit, where the small runs above see nothing: the default hunt (200
// seeds of 12 s, 100 per second, nine clients) behind one store catches it
// over-admitting on every seed, first 250 admits in 1.5 s where 249 are
// promised, and never by more than one, and it never errs. The docs
// state both: every seed, and 250 where 249 (in 1.499999 s), and the
// hunt's size, 4.2 million calls.
func TestDefaultHuntCatchesOneAdmitTooMany(t *testing.T) {
	needDefaults(t)
	verdicts, err := scenarios.Hunt([]scenarios.Suspect{{Limiter: redisrate.Spec(), Deployment: model.StoreClock}}, scenarios.HuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts[0]
	t.Logf("%s: %d requests, caught on %d of %d seeds (by kind %v), first seed %d (%s client): %v %v",
		v.Suspect, v.Requests, v.SeedsCaught, v.Seeds, v.SeedsBy, v.FirstSeed, v.FirstClient, v.FirstBreach, v.First)
	if v.Errors != 0 {
		t.Errorf("%d errors, the first %v", v.Errors, v.FirstError)
	}
	if v.SeedsBy[breach.OverAdmission] < v.Seeds*9/10 || v.FirstBreach != breach.OverAdmission {
		t.Errorf("over-admission on %d of %d seeds, first breach %v: want nearly every seed", v.SeedsBy[breach.OverAdmission], v.Seeds, v.FirstBreach)
	}
	if v.First == nil || v.First.Admits-v.First.Allowed != 1 {
		t.Errorf("first breach %v: want exactly one admit beyond the promise", v.First)
	}
	if v.SeedsBy[breach.OverAdmission] != v.Seeds {
		t.Errorf("over-admission on %d of %d seeds; the docs state every seed", v.SeedsBy[breach.OverAdmission], v.Seeds)
	}
	if f := v.First; f == nil || f.Admits != 250 || f.Allowed != 249 || f.To-f.From != 1_499_999 {
		t.Errorf("first breach %v; the docs state 250 admits in 1.5 s (1499999µs) where 249 are promised", f)
	}
	// The hunt is simulated: its size is exact (the docs round it).
	if v.Requests != 4_200_504 {
		t.Errorf("the default hunt made %d calls; the docs state 4.2 million (4,200,504)", v.Requests)
	}
}

// The default matrix (seeds 1-10, 100 per second, 20 s, every client) puts
// redis_rate beside the built-in GCRA. In the columns that apply to a
// library reading the store's clock, it breaks its promise in runs where
// GCRA keeps it (ideal and store clock; the wiped store breaks both), yet
// its peak is never more than one admit above GCRA's and its overshoot is
// GCRA's within 0.5 points: the breach is the float's one admit. The
// docs state how often on one node: in 24 of the 80 ideal runs.
func TestDefaultMatrixBesideGCRA(t *testing.T) {
	needDefaults(t)
	m, err := scenarios.RunMatrix(append(limiter.FromAlgorithms(algos.GCRA), redisrate.Spec()), scenarios.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	applies := map[model.Deployment]bool{model.Ideal: true, model.StoreClock: true, model.StoreWiped: true}
	for _, c := range m.Columns {
		g, rr := cell(t, m, "gcra", c.Deployment), cell(t, m, redisrate.Name, c.Deployment)
		if !applies[c.Deployment] {
			if rr.NotApplicable == "" {
				t.Errorf("%s ran redis_rate, which reads the store's clock and has no state to copy", c.Name)
			}
			continue
		}
		if rr.Errors != 0 {
			t.Errorf("%s: %d errors, the first %v", c.Name, rr.Errors, rr.FirstError)
		}
		if rr.Peak < g.Peak || rr.Peak > g.Peak+1 || rr.Over-g.Over > 0.5 || g.Over-rr.Over > 0.5 {
			t.Errorf("%s: redis_rate peak %d (%.2fx) over %.1f%%; gcra %d (%.2fx) over %.1f%%: want the peak at most one above, the over within 0.5",
				c.Name, rr.Peak, rr.PeakX, rr.Over, g.Peak, g.PeakX, g.Over)
		}
		if c.Deployment != model.StoreWiped && (g.Violations != 0 || rr.Violations == 0) {
			t.Errorf("%s: promise broken in %d runs of redis_rate, %d of gcra: want some, and none", c.Name, rr.Violations, g.Violations)
		}
		if c.Deployment == model.Ideal && (rr.Violations != 24 || rr.Runs != 80) {
			t.Errorf("%s: redis_rate broke its promise in %d of %d runs; the docs state 24 of 80", c.Name, rr.Violations, rr.Runs)
		}
	}
}

func cell(t *testing.T, m scenarios.Matrix, name string, d model.Deployment) scenarios.Cell {
	t.Helper()
	c, ok := m.Cell(name, d)
	if !ok {
		t.Fatalf("the matrix has no cell for %s, %s", name, d)
	}
	return c
}

// properties.Check's contract at the default limit (100 per second, burst
// 100) with every property's default number of cases: redis_rate keeps its
// Retry-After, its non-negative answers and its Reset, and breaks five
// clauses by the float's one step: a Remaining one short, a deadline one µs
// later, and its promise by one admit, the hunt's over-admission above.
//
// Each property runs on rapid's seeds from 1, so that every run draws the
// same cases: one that holds on seed 1 alone, as properties.Check would; a
// broken one on the seeds in turn until one breaks it, at most
// brokenWithinSeeds. Three are broken on a case rapid draws early on any
// seed; the promise and the retry loop only on cases that put a burst or a
// retry where the float rounds: on seeds 1 to 8, rapid's 5,000 cases broke
// the promise on 4 (1, 2, 4 and 8: 103 admits where 102 are promised, or
// 200 where 199), and its 2,000 broke the retry loop on seed 2 but not on
// seed 1 (measured on 2026-12-05).
func TestDefaultPropertiesAtTheDefaultLimit(t *testing.T) {
	needDefaults(t)
	const brokenWithinSeeds = 4
	broken := map[string]bool{"burst-from-idle": true, "retry-loop-never-extends": true, "remaining-is-exact": true,
		"refill-capped-after-idle": true, "promise-holds": true}
	for _, p := range properties.Properties(redisrate.Spec(), properties.WithLimit(scenarios.DefaultOptions().Limit)) {
		seeds := uint64(1)
		if broken[p.Name] {
			seeds = brokenWithinSeeds
		}
		failed, report, seed := false, "", uint64(0)
		for seed = 1; seed <= seeds && !failed; seed++ {
			failed, report = properties.FailsWithSeed(p.Prop, p.Checks, seed)
		}
		first, _, _ := strings.Cut(report, "\n")
		t.Logf("%s (%d cases, -rapid.seed=1 to %d): broken %v %s", p.Name, p.Checks, seed-1, failed, first)
		if failed != broken[p.Name] {
			t.Errorf("%s: broken %v on seeds 1 to %d, want %v:\n%s", p.Name, failed, seed-1, broken[p.Name], report)
		}
		if p.Name == "promise-holds" && failed {
			if admits, promised, ok := overAdmission(first); !ok || admits != promised+1 {
				t.Errorf("promise-holds: want an over-admission by one admit, as the hunt's:\n%s", report)
			}
		}
	}
}

// overAdmission reads a broken promise's admits and the most it promised
// from the first line of the property's report ("… 103 admits from … = 102
// are promised").
func overAdmission(line string) (admits, promised int, ok bool) {
	m := overAdmissionText.FindStringSubmatch(line)
	if m == nil {
		return 0, 0, false
	}
	admits, _ = strconv.Atoi(m[1])
	promised, _ = strconv.Atoi(m[2])
	return admits, promised, true
}

var overAdmissionText = regexp.MustCompile(`: (\d+) admits from .* = (\d+) are promised`)
