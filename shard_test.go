package overshoot_test

// The runs the findings share, split by seed across machines: the table,
// the curves (the skew sweep's and the seven of golden/sweep-*) and the
// mutants' hunt.
// Each is a sharded run, computed once per test binary by the first test
// that reads it. With -overshoot.shard=i/n, TestShardRuns plays shard i of
// n of each (the seed at position j to shard j mod n + 1) and writes its
// shard document to -overshoot.shards. With -overshoot.merge, a test that
// reads one reads it merged from every shard's documents there instead of
// computing it: the goldens are held to the merged runs' bytes
// (TestGoldenTable, TestGoldenSkew, TestGoldenSweeps,
// TestMutantsCaughtAndCorrectDeploymentsClean) and each finding that reads
// one is measured on it, so that the record of that run (make merge) is
// one the badges can be made from. Without either flag TestShardRuns and
// TestShardsMerge skip, and nothing else changes.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/golden"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/scenarios"
)

var (
	shardFlag = flag.String("overshoot.shard", "", "TestShardRuns: run shard `i/n` of the table, the skew sweep, the sweeps' curves and the mutants' hunt, writing their shard documents to -overshoot.shards")
	shardsDir = flag.String("overshoot.shards", ".test-results/shards", "the `dir` TestShardRuns writes the shard documents to, and -overshoot.merge merges them from")
	mergeFlag = flag.Bool("overshoot.merge", false, "read the table, the skew sweep, the sweeps' curves and the mutants' hunt merged from the shard documents in -overshoot.shards, instead of computing them")
)

// shardedRun is one run the shards split: the name of its documents
// (name-i-of-n.json), its seeds, how a shard plays it, and its merge.
type shardedRun struct {
	name   string
	seeds  func() []uint64
	shard  func(w io.Writer, s scenarios.Shard) error
	merged func() (from string, err error) // from: the shards it was merged from
}

// sharded is a sharded run whose result, T, tests share: computed once,
// or merged once from its shards' documents with -overshoot.merge.
type sharded[T any] struct {
	shardedRun
	get func() (T, error)
}

// newSharded is the sharded run name: run computes it, shard plays one
// shard of it, and merge merges the documents of every shard into the
// result run would compute, or says why they are not this run's.
func newSharded[T any](name string, seeds func() []uint64, run func() (T, error),
	shard func(io.Writer, scenarios.Shard) error, merge func([]scenarios.ShardFile) (T, error)) sharded[T] {
	var from string // written once, inside get's sync.Once
	get := sync.OnceValues(func() (T, error) {
		if !*mergeFlag {
			return run()
		}
		files, err := shardFilesOf(name)
		if err != nil {
			var zero T
			return zero, err
		}
		from = fmt.Sprintf("%d shards in %s", len(files), *shardsDir)
		r, err := merge(files)
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		return r, err
	})
	merged := func() (string, error) {
		_, err := get()
		return from, err
	}
	return sharded[T]{shardedRun{name, seeds, shard, merged}, get}
}

// result is the run's result, or t fails. With -overshoot.merge it logs
// the shards it was merged from, so that the test's record says where its
// numbers come from.
func (s sharded[T]) result(t *testing.T) T {
	t.Helper()
	r, err := s.get()
	if err != nil {
		t.Fatal(err)
	}
	if *mergeFlag {
		from, _ := s.merged()
		t.Logf("%s: merged from %s", s.name, from)
	}
	return r
}

// shardedMatrix is RunMatrix(specs, o), sharded.
func shardedMatrix(name string, specs []limiter.Spec, o scenarios.Options) sharded[scenarios.Matrix] {
	return newSharded(name, func() []uint64 { return o.Seeds },
		func() (scenarios.Matrix, error) { return scenarios.RunMatrix(specs, o) },
		func(w io.Writer, s scenarios.Shard) error { return s.RunMatrix(w, specs, o) },
		func(files []scenarios.ShardFile) (scenarios.Matrix, error) {
			m, err := scenarios.MergeMatrix(files)
			if err == nil {
				err = sameRunAs(specs, o, m.Algorithms, m.Options)
			}
			return m, err
		})
}

// shardedCurve is RunCurve(specs, o, c), sharded.
func shardedCurve(name string, specs []limiter.Spec, o scenarios.Options, c scenarios.CurveOf) sharded[scenarios.Curve] {
	return newSharded(name, func() []uint64 { return o.Seeds },
		func() (scenarios.Curve, error) { return scenarios.RunCurve(specs, o, c) },
		func(w io.Writer, s scenarios.Shard) error { return s.RunCurve(w, specs, o, c) },
		func(files []scenarios.ShardFile) (scenarios.Curve, error) {
			r, err := scenarios.MergeCurve(files, c)
			if err == nil {
				err = sameRunAs(specs, o, r.Algorithms, r.Options)
			}
			return r, err
		})
}

// huntResult is a hunt's conditions and its verdicts, one per suspect.
type huntResult struct {
	o        scenarios.Options
	verdicts []scenarios.Verdict
}

// shardedHunt is Hunt(suspects(), o()), sharded; both are called only
// when a test runs (o may read testing.Short).
func shardedHunt(name string, suspects func() []scenarios.Suspect, o func() scenarios.Options) sharded[huntResult] {
	return newSharded(name, func() []uint64 { return o().Seeds },
		func() (huntResult, error) {
			ho := o()
			v, err := scenarios.Hunt(suspects(), ho)
			return huntResult{ho, v}, err
		},
		func(w io.Writer, s scenarios.Shard) error { return s.Hunt(w, suspects(), o()) },
		func(files []scenarios.ShardFile) (huntResult, error) {
			ho, v, err := scenarios.MergeHunt(files)
			if diff := differingFields(ho, o()); err == nil && len(diff) > 0 {
				err = fmt.Errorf("the merged hunt's conditions are not this build's (%v differ): play the shards again", diff)
			}
			if n := len(suspects()); err == nil && len(v) != n {
				err = fmt.Errorf("the merged hunt has %d suspects, this build %d: play the shards again", len(v), n)
			}
			return huntResult{ho, v}, err
		})
}

// sameRunAs says how a merged run of limiters names under o is not the
// run of specs under want: the shards were played by another build.
func sameRunAs(specs []limiter.Spec, want scenarios.Options, names []string, o scenarios.Options) error {
	var wantNames []string
	for _, s := range specs {
		wantNames = append(wantNames, s.Name)
	}
	switch {
	case !reflect.DeepEqual(names, wantNames):
		return fmt.Errorf("the merged run's limiters are %v, this build's %v: play the shards again", names, wantNames)
	case len(differingFields(o, want)) > 0:
		return fmt.Errorf("the merged run's conditions are not this build's (%v differ): play the shards again", differingFields(o, want))
	}
	return nil
}

// differingFields names the fields in which a and b differ.
func differingFields(a, b scenarios.Options) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}

// shardFilesOf reads every shard document of the run name in
// -overshoot.shards.
func shardFilesOf(name string) ([]scenarios.ShardFile, error) {
	paths, err := filepath.Glob(filepath.Join(*shardsDir, name+"-[0-9]*-of-[0-9]*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no %s-i-of-n.json in %s: play every shard first (make shard SHARD=i/n)", name, *shardsDir)
	}
	files := make([]scenarios.ShardFile, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		files[i] = scenarios.ShardFile{Name: p, Data: data}
	}
	return files, nil
}

// shardedRuns are every sharded run, each once.
func shardedRuns() []shardedRun {
	runs := []shardedRun{findingsTable.shardedRun, findingsSweep.shardedRun, mutantsHunt.shardedRun}
	for _, s := range allSweeps {
		runs = append(runs, s.shardedRun)
	}
	return runs
}

func TestShardRuns(t *testing.T) {
	if *shardFlag == "" {
		t.Skip("no -overshoot.shard=i/n: nothing to split (make shard SHARD=i/n)")
	}
	s, err := scenarios.ParseShard(*shardFlag)
	if err != nil {
		t.Fatal(err)
	}
	runs := shardedRuns()
	// Every shard must hold a seed of every run: say so before playing any.
	for _, r := range runs {
		if n := len(r.seeds()); s.Count > n {
			t.Fatalf("%s has %d seeds: it splits into %d shards at most, not %d", r.name, n, n, s.Count)
		}
	}
	for _, r := range runs {
		var b bytes.Buffer
		if err := r.shard(&b, s); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		path := filepath.Join(*shardsDir, fmt.Sprintf("%s-%d-of-%d.json", r.name, s.Index, s.Count))
		if err := golden.WriteAtomic(path, b.Bytes()); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: shard %v, %d bytes to %s", r.name, s, b.Len(), path)
	}
}

// With -overshoot.merge every sharded run merges, whichever tests ran:
// each from every shard of one split, each once, of this build's run. The
// goldens and findings that read them check the rest.
func TestShardsMerge(t *testing.T) {
	if !*mergeFlag {
		t.Skip("no -overshoot.merge: nothing to merge (make merge)")
	}
	for _, r := range shardedRuns() {
		from, err := r.merged()
		if err != nil {
			t.Error(err)
			continue
		}
		t.Logf("%s: merged from %s", r.name, from)
	}
}

// Shards another build played (other limiters, other conditions) are not
// read as this build's run: the merge says what differs.
func TestMergedRunOfAnotherBuildIsRefused(t *testing.T) {
	specs, o := limiter.FromAlgorithms(algos.TokenBucket, algos.GCRA), scenarios.DefaultOptions()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if err := sameRunAs(specs, o, names, o); err != nil {
		t.Errorf("this build's run: %v", err)
	}
	other := o
	other.Seeds, other.Nodes = other.Seeds[:3], 5
	if err := sameRunAs(specs, o, names, other); err == nil || !strings.Contains(err.Error(), "[Seeds Nodes] differ") {
		t.Errorf("other conditions: %v, want an error naming Seeds and Nodes", err)
	}
	if err := sameRunAs(specs, o, names[1:], o); err == nil || !strings.Contains(err.Error(), "limiters are") {
		t.Errorf("other limiters: %v, want an error naming them", err)
	}
}
