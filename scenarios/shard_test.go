package scenarios_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/scenarios"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]scenarios.Shard{"1/1": {Index: 1, Count: 1}, "2/3": {Index: 2, Count: 3}, "3/3": {Index: 3, Count: 3}} {
		got, err := scenarios.ParseShard(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"0/0": "one shard or more", "1/0": "one shard or more", "3/2": "1/2 to 2/2", "0/3": "1/3 to 3/3",
		"x": "not i/n", "": "not i/n", "2": "not i/n", "-1/3": "not i/n", "+1/3": "not i/n", "1/3/4": "not i/n", " 1/3": "not i/n",
	} {
		if _, err := scenarios.ParseShard(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseShard(%q): %v, want an error saying %q", in, err, why)
		}
	}
	seeds := []uint64{11, 12, 13, 14, 15}
	if got := (scenarios.Shard{Index: 2, Count: 3}).Seeds(seeds); !reflect.DeepEqual(got, []uint64{12, 15}) {
		t.Errorf("shard 2/3 of %v is %v, want [12 15]", seeds, got)
	}
}

// shardOptions are quick options for sharding: four seeds of 1 s, so that
// three shards split them unevenly.
func shardOptions() scenarios.Options {
	o := scenarios.DefaultOptions()
	o.Seeds = []uint64{1, 2, 3, 4}
	o.Duration = algos.Second
	o.WipeAt = algos.Second / 2
	return o
}

// shardSpecs are a limiter that names a reference, one that panics (errors,
// and no state as a value for GET, decide, SET: a column not played), and
// a bucket.
func shardSpecs() []limiter.Spec {
	counter := limiter.FromAlgorithm(algos.SlidingCounter)
	counter.Reference = algos.SlidingLog
	return []limiter.Spec{counter, panicsOnTheHundredth, limiter.FromAlgorithm(algos.TokenBucket)}
}

// rarelyNegative is the token bucket answering a Reset in the past on the
// requests that come at a multiple of 2503 µs: a breach some seeds show
// and others do not, so that the first seed to show it is not the first.
var rarelyNegative = algos.Algorithm{
	Name: "rarely-negative-reset", Promise: algos.BucketPromise, StateInts: algos.TokenBucket.StateInts,
	Decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		d := algos.TokenBucket.Decide(s, now, l)
		if now%2503 == 0 {
			d.Reset = -1
		}
		return d
	},
}

// shardFiles runs every shard of a split in n with run, in reverse order
// (the merge takes them in any), each into a document of its own.
func shardFiles(t *testing.T, n int, run func(*bytes.Buffer, scenarios.Shard) error) []scenarios.ShardFile {
	t.Helper()
	var files []scenarios.ShardFile
	for i := n; i >= 1; i-- {
		var b bytes.Buffer
		if err := run(&b, scenarios.Shard{Index: i, Count: n}); err != nil {
			t.Fatalf("shard %d/%d: %v", i, n, err)
		}
		files = append(files, scenarios.ShardFile{Name: fmt.Sprintf("shard-%d-of-%d.json", i, n), Data: b.Bytes()})
	}
	return files
}

// render is every report of v, as bytes.
func render(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch r := v.(type) {
	case scenarios.Matrix:
		_, err = r.WriteTo(&b)
		err = errors.Join(err, r.WriteJSON(&b), r.WriteCSV(&b))
	case scenarios.Curve:
		_, err = r.WriteTo(&b)
		_, err2 := r.WriteSVG(&b)
		err = errors.Join(err, err2, r.WriteJSON(&b), r.WriteCSV(&b))
		if r.Deployment == model.NodeClock && r.Param == scenarios.ParamSkew {
			s := scenarios.SkewSweep{Curve: r}
			_, err3 := s.WriteTo(&b)
			_, err4 := s.WriteSVG(&b)
			err = errors.Join(err, err3, err4, s.WriteJSON(&b), s.WriteCSV(&b))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// plainErrors is v with every error replaced by one that only has its
// text, as a merged result's are.
func plainErrors(v reflect.Value) {
	errType := reflect.TypeFor[error]()
	switch v.Kind() {
	case reflect.Interface:
		if v.Type() == errType && !v.IsNil() && v.CanSet() {
			v.Set(reflect.ValueOf(errors.New(v.Interface().(error).Error())))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			plainErrors(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			plainErrors(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			plainErrors(v.Index(i))
		}
	}
}

// sameValue fails t unless merged is whole, every number and string, with
// errors compared by their text.
func sameValue(t *testing.T, what string, whole, merged any) {
	t.Helper()
	w := reflect.New(reflect.TypeOf(whole)).Elem()
	w.Set(reflect.ValueOf(whole))
	plainErrors(w)
	if !reflect.DeepEqual(w.Interface(), merged) {
		t.Errorf("%s: the merged result differs from the whole run's", what)
	}
}

// A matrix, a curve (the skew sweep's, without the ideal run, and one
// with it) and a hunt split in one, two and three shards by seed and
// merged are the whole run on one machine: the same value, and the same
// bytes in every report, text, JSON, CSV and SVG.
func TestShardsMergeIntoTheWholeRun(t *testing.T) {
	o, specs := shardOptions(), shardSpecs()
	skew := scenarios.SkewCurve([]int64{0, 50_000})
	curve := scenarios.CurveOf{Deployment: model.LocalSplit, Param: scenarios.ParamNodes, Values: []int64{2, 4}}
	ho := scenarios.HuntOptions()
	ho.Seeds, ho.Duration, ho.WipeAt = o.Seeds, o.Duration, o.WipeAt
	suspects := []scenarios.Suspect{
		{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Deployment: model.LocalFull},
		{Limiter: limiter.FromAlgorithm(planted.UncappedTokenBucket), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(negativeRetryAfter), Deployment: model.StoreClock},
		{Limiter: limiter.FromAlgorithm(rarelyNegative), Deployment: model.StoreClock},
		{Limiter: panicsOnTheHundredth, Deployment: model.StoreClock},
	}

	matrix, err := scenarios.RunMatrix(specs, o)
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := scenarios.RunCurve(specs, o, skew)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := scenarios.RunCurve(specs, o, curve)
	if err != nil {
		t.Fatal(err)
	}
	verdicts, err := scenarios.Hunt(suspects, ho)
	if err != nil {
		t.Fatal(err)
	}
	var hunt bytes.Buffer
	err = errors.Join(scenarios.WriteVerdicts(&hunt, verdicts), scenarios.WriteBreaches(&hunt, verdicts),
		scenarios.WriteTraces(&hunt, verdicts), scenarios.WriteVerdictsJSON(&hunt, ho, verdicts))
	if err != nil {
		t.Fatal(err)
	}
	// What the comparison must see: errors, a reference's runs, runs not
	// played, breaches of several kinds with their traces, and a breach
	// first seen past the first seed.
	if matrix.ReferenceRuns[0] == nil {
		t.Fatal("the matrix ran no reference")
	}
	if c, _ := matrix.Cell(panicsOnTheHundredth.Name, model.StoreClock); c.Errors == 0 || c.FirstError == nil {
		t.Fatalf("the panicking limiter's matrix cell shows no error: %+v", c)
	}
	if c, _ := matrix.Cell(panicsOnTheHundredth.Name, model.GetSet); c.NotApplicable == "" {
		t.Fatalf("the panicking limiter's GET-then-SET cell was played: %+v", c)
	}
	kinds := 0
	for _, n := range verdicts[2].SeedsBy {
		kinds += min(n, 1)
	}
	rare := verdicts[4]
	if verdicts[0].Caught || len(verdicts[1].Trace) == 0 || kinds < 3 || rare.SeedsCaught == 0 || rare.SeedsCaught == rare.Seeds ||
		rare.FirstSeed == ho.Seeds[0] || verdicts[5].Errors == 0 {
		t.Fatalf("the hunt does not show a clean verdict, a trace, three kinds of breach, a breach first seen past the first seed, and errors: %+v", verdicts)
	}

	for n := 1; n <= 3; n++ {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			m, err := scenarios.MergeMatrix(shardFiles(t, n, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunMatrix(b, specs, o) }))
			if err != nil {
				t.Fatal(err)
			}
			sameValue(t, "matrix", matrix, m)
			if !bytes.Equal(render(t, m), render(t, matrix)) {
				t.Error("the merged matrix renders other bytes than the whole run")
			}

			sw, err := scenarios.MergeCurve(shardFiles(t, n, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunCurve(b, specs, o, skew) }), skew)
			if err != nil {
				t.Fatal(err)
			}
			sameValue(t, "sweep", sweep, sw)
			if !bytes.Equal(render(t, sw), render(t, sweep)) {
				t.Error("the merged sweep renders other bytes than the whole run")
			}

			c, err := scenarios.MergeCurve(shardFiles(t, n, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunCurve(b, specs, o, curve) }), curve)
			if err != nil {
				t.Fatal(err)
			}
			sameValue(t, "curve", cu, c)
			if !bytes.Equal(render(t, c), render(t, cu)) {
				t.Error("the merged curve renders other bytes than the whole run")
			}

			mo, vs, err := scenarios.MergeHunt(shardFiles(t, n, func(b *bytes.Buffer, s scenarios.Shard) error { return s.Hunt(b, suspects, ho) }))
			if err != nil {
				t.Fatal(err)
			}
			sameValue(t, "hunt", verdicts, vs)
			sameValue(t, "hunt's options", ho, mo)
			var got bytes.Buffer
			err = errors.Join(scenarios.WriteVerdicts(&got, vs), scenarios.WriteBreaches(&got, vs),
				scenarios.WriteTraces(&got, vs), scenarios.WriteVerdictsJSON(&got, mo, vs))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), hunt.Bytes()) {
				t.Error("the merged hunt renders other bytes than the whole run")
			}
		})
	}
}

// Shards that are not every shard of one run, each once, are not merged:
// the error names the file at fault.
func TestMergeRefusesShardsThatAreNotOneRun(t *testing.T) {
	o := shardOptions()
	o.Seeds = o.Seeds[:3]
	specs := limiter.FromAlgorithms(algos.TokenBucket)
	three := shardFiles(t, 3, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunMatrix(b, specs, o) })
	s3, s2, s1 := three[0], three[1], three[2]
	two := shardFiles(t, 2, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunMatrix(b, specs, o) })
	other := o
	other.Nodes = 3
	otherRun := shardFiles(t, 3, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunMatrix(b, specs, other) })[0]
	otherRun.Name = "other-run.json"
	skew := scenarios.SkewCurve([]int64{0})
	sweep := shardFiles(t, 1, func(b *bytes.Buffer, s scenarios.Shard) error { return s.RunCurve(b, specs, o, skew) })[0]
	renamed := func(f scenarios.ShardFile, name string, edit func(string) string) scenarios.ShardFile {
		return scenarios.ShardFile{Name: name, Data: []byte(edit(string(f.Data)))}
	}
	for _, c := range []struct {
		name  string
		files []scenarios.ShardFile
		want  string
	}{
		{"none", nil, "no shard documents"},
		{"overlapping", []scenarios.ShardFile{s1, s2, s3, {Name: "again.json", Data: s2.Data}}, "shard-2-of-3.json and again.json are both shard 2/3"},
		{"missing", []scenarios.ShardFile{s1, s3}, "shard 2/3 of the run of shard-1-of-3.json is missing"},
		{"all but one missing", []scenarios.ShardFile{s2}, "shard 1/3, 3/3 of the run of shard-2-of-3.json is missing"},
		{"another split", []scenarios.ShardFile{s1, two[0]}, "shard-2-of-2.json is shard 2/2, and shard-1-of-3.json one of 3"},
		{"another run", []scenarios.ShardFile{s1, s2, otherRun}, "other-run.json is not of the run of shard-1-of-3.json: its conditions differ"},
		{"another kind", []scenarios.ShardFile{sweep}, "shard-1-of-1.json is a shard of a curve, not of a matrix"},
		{"not JSON", []scenarios.ShardFile{{Name: "table.txt", Data: []byte("overshoot table")}}, "table.txt is not a shard document"},
		{"a table", []scenarios.ShardFile{{Name: "table.json", Data: []byte(`{"schema": "overshoot.table/v1"}`)}}, `table.json is of schema "overshoot.table/v1"`},
		{"a seed moved", []scenarios.ShardFile{s1, s2, renamed(s3, "moved.json", func(s string) string {
			return strings.Replace(s, `"shard_seeds": [`+"\n    3", `"shard_seeds": [`+"\n    4", 1)
		})}, "moved.json: shard 3/3 holds seeds [4], where the run's seeds give it [3]"},
		{"a run lost", []scenarios.ShardFile{s1, s2, renamed(s3, "cut.json", func(s string) string {
			i := strings.Index(s, `    {`+"\n"+`      "algorithm"`)
			j := strings.Index(s[i+1:], `    {`+"\n"+`      "algorithm"`) + i + 1
			return s[:i] + s[j:]
		})}, "cut.json holds 6 runs, want 7"},
		{"an unknown field", []scenarios.ShardFile{s1, s2, renamed(s3, "new.json", func(s string) string {
			return strings.Replace(s, `"kind"`, `"colour": "red", "kind"`, 1)
		})}, `new.json: json: unknown field "colour"`},
		{"a bad shard", []scenarios.ShardFile{renamed(s1, "zero.json", func(s string) string {
			return strings.Replace(s, `"shard": "1/3"`, `"shard": "0/0"`, 1)
		})}, "zero.json: scenarios: shard 0/0"},
	} {
		_, err := scenarios.MergeMatrix(c.files)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := scenarios.MergeMatrix([]scenarios.ShardFile{s3, s1, s2}); err != nil {
		t.Errorf("the three shards in another order: %v", err)
	}
	// A curve's shards merge as that curve alone, not as the same curve
	// with the ideal run, whose runs they do not hold.
	withIdeal := skew
	withIdeal.NoIdeal = false
	if _, err := scenarios.MergeCurve([]scenarios.ShardFile{sweep}, withIdeal); err == nil || !strings.Contains(err.Error(), "no ideal run), not of the node-clock") {
		t.Errorf("the skew sweep's shard merged as a curve with the ideal run: %v", err)
	}
	if _, err := scenarios.MergeCurve([]scenarios.ShardFile{sweep}, skew); err != nil {
		t.Errorf("the skew sweep's shard: %v", err)
	}
	var b bytes.Buffer
	if err := (scenarios.Shard{Index: 4, Count: 4}).RunMatrix(&b, specs, o); err == nil || !strings.Contains(err.Error(), "shard 4/4 has no seed: the run has 3") {
		t.Errorf("a shard beyond the seeds: %v", err)
	}
	if err := (scenarios.Shard{Index: 2, Count: 1}).Hunt(&b, nil, o); err == nil || !strings.Contains(err.Error(), "shard 2/1") {
		t.Errorf("an invalid shard: %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("a shard that could not run wrote %d bytes", b.Len())
	}
}
