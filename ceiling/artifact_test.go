package ceiling_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/ceiling"
)

// The environment of the live ceiling artifact (keepArtifact).
const (
	// envArtifactDir is the directory the live run keeps its artifact
	// in, ceiling.json, and compares it with the one there before; by
	// default a fresh temporary directory (nothing to compare).
	envArtifactDir = "OVERSHOOT_CEILING_ARTIFACT"
	// envArtifactRun names the run in its artifact (default "local").
	envArtifactRun = "OVERSHOOT_CEILING_RUN"
)

// artifactTolerance is how far the judged accepted rate of a row may move
// from one live run to the next: the rates are judged on the limiters'
// clocks to about 1e-5, so 5% is a change of the deployment, not noise.
const artifactTolerance = 0.05

// plantedArtifact is a run named run at when with one row per rate, the
// shared script on 3 nodes first.
func plantedArtifact(run string, when time.Time, rates ...float64) ceiling.Artifact {
	a := ceiling.Artifact{Run: run, When: when, Limit: algos.MustLimit(100, algos.Second, 25)}
	names := []string{"shared token bucket (Lua)", "per-instance token bucket"}
	for i, r := range rates {
		a.Rows = append(a.Rows, ceiling.ArtifactRow{
			Deployment: names[i%2], Nodes: 3, Buckets: 1 + 2*(i%2), OfferedPerSecond: 500, Sent: 1000, Accepted: 240,
			Span: 1_998_123 * time.Microsecond, AcceptedPerSecond: r, JudgedAdmits: 190,
			Judged: 1_900_456 * time.Microsecond, Standing: ceiling.StandingAtLimit,
		})
	}
	return a
}

var (
	runA = time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	runB = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
)

// oneWrite counts the Write calls made on it.
type oneWrite struct {
	bytes.Buffer
	writes int
}

func (w *oneWrite) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }

// An artifact is written in one Write as a document that names its schema
// first, with integer µs and null for a rate not judged, and reads back as
// what was written, byte for byte when written again.
func TestArtifactRoundTrip(t *testing.T) {
	a := plantedArtifact("A", runA.Add(123456789*time.Nanosecond), 100.00042, math.NaN())
	a.Rows[1].Standing = ceiling.StandingUnjudged
	var w oneWrite
	if err := ceiling.WriteArtifact(&w, a); err != nil {
		t.Fatal(err)
	}
	text := w.String()
	if w.writes != 1 {
		t.Errorf("WriteArtifact made %d writes, want 1", w.writes)
	}
	for _, want := range []string{"{\n  \"schema\": \"overshoot.ceiling/v1\",\n", `"when": "2026-09-01T10:00:00.123456789Z"`,
		`"window_us": 1000000`, `"span_us": 1998123`, `"judged_us": 1900456`, `"accepted_per_second": 100.00042`,
		`"accepted_per_second": null`, `"verdict": "unjudged"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the artifact lacks %q:\n%s", want, text)
		}
	}
	if !strings.HasPrefix(text, "{\n  \"schema\"") {
		t.Errorf("the schema is not the first field:\n%s", text)
	}
	got, err := ceiling.ReadArtifact(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got.Run != a.Run || !got.When.Equal(a.When) || got.Limit != a.Limit || len(got.Rows) != 2 {
		t.Fatalf("read back %+v, want %+v", got, a)
	}
	if got.Rows[0] != a.Rows[0] || !math.IsNaN(got.Rows[1].AcceptedPerSecond) {
		t.Errorf("rows read back %+v, want %+v", got.Rows, a.Rows)
	}
	var again bytes.Buffer
	if err := ceiling.WriteArtifact(&again, got); err != nil || again.String() != text {
		t.Errorf("written again (%v):\n%s\nwant:\n%s", err, again.String(), text)
	}
}

// What cannot name its run, or is not an artifact of this schema, is
// neither written nor read.
func TestArtifactRefusesWhatItCannotName(t *testing.T) {
	noRun := plantedArtifact(" ", runA, 100)
	noTime := plantedArtifact("A", time.Time{}, 100)
	twice := plantedArtifact("A", runA, 100, 300)
	twice.Rows[1] = twice.Rows[0]
	for name, a := range map[string]ceiling.Artifact{"no run": noRun, "no time": noTime, "a row twice": twice, "no limit": {Run: "A", When: runA}} {
		var w bytes.Buffer
		if err := ceiling.WriteArtifact(&w, a); err == nil || w.Len() > 0 {
			t.Errorf("%s: WriteArtifact = %v, wrote %d bytes; want an error and nothing", name, err, w.Len())
		}
	}
	var ok bytes.Buffer
	if err := ceiling.WriteArtifact(&ok, plantedArtifact("A", runA, 100)); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"another schema": strings.Replace(ok.String(), "overshoot.ceiling/v1", "overshoot.ceiling/v2", 1),
		"a bad time":     strings.Replace(ok.String(), "2026-09-01T10:00:00Z", "1 Sep 2026", 1),
		"a bad limit":    strings.Replace(ok.String(), `"rate": 100`, `"rate": 0`, 1),
		"not JSON":       ok.String()[:40],
	} {
		if _, err := ceiling.ReadArtifact(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

// SaveArtifact replaces the file whole, leaves no temporary file, and on a
// path it cannot write says so and leaves what was there.
func TestSaveArtifactIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ceiling.json")
	first, second := plantedArtifact("A", runA, 100), plantedArtifact("B", runB, 101)
	for _, a := range []ceiling.Artifact{first, second} {
		if err := ceiling.SaveArtifact(path, a); err != nil {
			t.Fatal(err)
		}
		got, err := ceiling.LoadArtifact(path)
		if err != nil || got.Run != a.Run {
			t.Fatalf("loaded %+v, %v; want run %s", got, err, a.Run)
		}
	}
	kept, _ := os.ReadFile(path)
	// A failed save: an artifact that cannot be written, and a path that
	// is a directory, leave the file as it was and nothing else.
	if err := ceiling.SaveArtifact(path, ceiling.Artifact{}); err == nil {
		t.Error("an empty artifact was saved")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ceiling.SaveArtifact(filepath.Join(dir, "sub"), second); err == nil || !strings.Contains(err.Error(), "sub") {
		t.Errorf("saving over a directory: %v, want an error naming it", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, kept) {
		t.Error("a failed save changed the artifact saved before")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "ceiling.json sub" {
		t.Errorf("the directory holds %v, want ceiling.json and sub only", names)
	}
	missing := filepath.Join(dir, "no such dir", "ceiling.json")
	err := ceiling.SaveArtifact(missing, first)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), `run "A"`) {
		t.Errorf("saving into a missing directory: %v, want an error naming the path and the run", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing directory was made: %v", err)
	}
}

// The gate: a rate within the tolerance passes; 100/s → 143/s fails,
// naming both runs and their times; a row in one run only, or judged in
// one only, fails; and no previous artifact is a first run, not an error.
func TestCompareArtifactsFindsTheDrift(t *testing.T) {
	prev := plantedArtifact("A", runA, 100, 300)
	if err := ceiling.CompareArtifacts(prev, plantedArtifact("B", runB, 104.9, 286), 0.05); err != nil {
		t.Errorf("within 5%%: %v", err)
	}
	err := ceiling.CompareArtifacts(prev, plantedArtifact("B", runB, 143, 300), 0.05)
	want := "ceiling drift: shared token bucket (Lua), 3 nodes: 100.0/s in run A (2026-09-01T10:00:00Z) → 143.0/s in run B (2026-12-02T10:00:00Z), +43.0%, beyond ±5%"
	if err == nil || err.Error() != want {
		t.Errorf("100 → 143 gave:\n%v\nwant:\n%s", err, want)
	} else {
		t.Logf("the planted drift:\n%v", err)
	}

	cur := plantedArtifact("B", runB, 100)
	cur.Rows = append(cur.Rows, ceiling.ArtifactRow{Deployment: "shared token bucket (Lua)", Nodes: 5, AcceptedPerSecond: math.NaN(), Standing: ceiling.StandingUnjudged})
	cur.Limit = algos.MustLimit(100, algos.Second, 50)
	err = ceiling.CompareArtifacts(prev, cur, 0.05)
	if err == nil {
		t.Fatal("rows missing on both sides passed")
	}
	t.Logf("missing rows:\n%v", err)
	for _, line := range []string{
		"ceiling drift: the limit changed: 100 per 1s (burst 25) in run A (2026-09-01T10:00:00Z) → 100 per 1s (burst 50) in run B (2026-12-02T10:00:00Z)",
		"ceiling drift: shared token bucket (Lua), 5 nodes: in run B (2026-12-02T10:00:00Z) but not in run A (2026-09-01T10:00:00Z)",
		"ceiling drift: per-instance token bucket, 3 nodes: in run A (2026-09-01T10:00:00Z) but not in run B (2026-12-02T10:00:00Z)",
	} {
		if !strings.Contains(err.Error()+"\n", line+"\n") {
			t.Errorf("the comparison lacks the line %q:\n%v", line, err)
		}
	}
	unjudged := plantedArtifact("B", runB, math.NaN(), 300)
	if err := ceiling.CompareArtifacts(prev, unjudged, 0.05); err == nil || !strings.Contains(err.Error(), "100.0/s in run A (2026-09-01T10:00:00Z) → not judged in run B") {
		t.Errorf("a row judged in one run only: %v", err)
	}
	if err := ceiling.CompareArtifacts(prev, prev, -0.05); err == nil {
		t.Error("a negative tolerance was taken")
	}

	path := filepath.Join(t.TempDir(), "ceiling.json")
	note, err := ceiling.CompareWithPrevious(path, prev, 0.05)
	if err != nil || !strings.Contains(note, "no previous ceiling artifact") || !strings.Contains(note, "first run") {
		t.Errorf("no previous artifact: %q, %v; want a first run, no error", note, err)
	}
	if err := ceiling.SaveArtifact(path, prev); err != nil {
		t.Fatal(err)
	}
	if note, err := ceiling.CompareWithPrevious(path, plantedArtifact("B", runB, 101, 299), 0.05); err != nil || !strings.Contains(note, "within ±5% of run A") {
		t.Errorf("against a saved artifact within 5%%: %q, %v", note, err)
	}
	if _, err := ceiling.CompareWithPrevious(path, plantedArtifact("B", runB, 143, 300), 0.05); err == nil {
		t.Error("against a saved artifact, 100 → 143 passed")
	}
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ceiling.CompareWithPrevious(path, prev, 0.05); err == nil {
		t.Error("a previous artifact that cannot be read passed")
	}
}

// keepArtifact is the ceiling over time: the live finding
// (TestFindingAcceptedRateAcrossNodes: 500/s against 100/s with a burst of
// 25, for 2 s) hands it the rows it judged, each rate judged on its
// limiters' clock from their decisions (ceiling.JudgedRow), so that a
// loaded machine leaves less of the run judged rather than moving the
// rate. It writes them as an artifact and compares it with the one the
// previous run kept, failing t on a drift of more than 5% of any row's
// accepted rate.
//
// The artifact is kept in $OVERSHOOT_CEILING_ARTIFACT/ceiling.json (by
// default a temporary directory, so nothing to compare), named
// $OVERSHOOT_CEILING_RUN. A run that fails leaves the previous artifact
// as the baseline and writes its own beside it, as ceiling.rejected.json;
// to accept a drift, move that over ceiling.json.
func keepArtifact(t *testing.T, l algos.Limit, rows []ceiling.ArtifactRow) {
	t.Helper()
	run := os.Getenv(envArtifactRun)
	if run == "" {
		run = "local"
	}
	a := ceiling.Artifact{Run: run, When: time.Now().UTC().Truncate(time.Second), Limit: l, Rows: rows}
	var doc bytes.Buffer
	if err := ceiling.WriteArtifact(&doc, a); err != nil {
		t.Fatal(err)
	}
	t.Logf("the artifact:\n%s", doc.String())
	dir := os.Getenv(envArtifactDir)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ceiling.json")
	note, err := ceiling.CompareWithPrevious(path, a, artifactTolerance)
	if err != nil {
		t.Error(err)
	}
	if t.Failed() {
		rejected := filepath.Join(dir, "ceiling.rejected.json")
		if err := ceiling.SaveArtifact(rejected, a); err != nil {
			t.Fatal(err)
		}
		t.Logf("kept the previous artifact in %s; this run's is %s (move it over the other to accept it)", path, rejected)
		return
	}
	if err := ceiling.SaveArtifact(path, a); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; saved %s", note, path)
}
