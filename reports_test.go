package overshoot_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/capacity"
	"github.com/overshoot-go/overshoot/ceiling"
	"github.com/overshoot-go/overshoot/httpcheck"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/scenarios"
)

// docs/reports.md's list of each report schema's fields is the schema the
// code writes, field for field, and every field of the golden reports, and
// of a shard document of each kind, is in it.
func TestReportSchemasAreDocumented(t *testing.T) {
	blocks, _ := fences(readDoc(t, "docs/reports.md"))
	var block string
	for _, b := range blocks {
		if len(b.body) > 0 && strings.HasPrefix(b.body[0], scenarios.TableSchema+": ") {
			block = strings.Join(b.body, "\n")
		}
	}
	if block == "" {
		t.Fatalf("docs/reports.md has no block listing the schemas' fields, starting %q", scenarios.TableSchema+": ")
	}
	documented := map[string][]string{}
	// lines are the "p.* (as overshoot.s/v1)" fields: a line of schema s
	// under p, resolved once every schema is read (s may come later).
	type line struct{ in, prefix, of string }
	var lines []line
	var current string
	for _, field := range strings.FieldsFunc(block, func(r rune) bool { return r == ',' || r == '\n' }) {
		field = strings.TrimSpace(field)
		if schema, first, ok := strings.Cut(field, ": "); ok {
			current, field = schema, first
		}
		// "p.* (as q)" is every field under q again under p: q's under the
		// table's schema for "as above", under this schema otherwise, and
		// for a schema's name, its fields but the "schema" that names it.
		if prefix, as, ok := strings.Cut(field, ".* (as "); ok {
			as = strings.TrimSuffix(as, ")")
			if strings.HasPrefix(as, "overshoot.") {
				lines = append(lines, line{current, prefix, as})
				continue
			}
			from := documented[current]
			if as == "above" {
				as, from = prefix, documented[scenarios.TableSchema]
			} else if q, ok := strings.CutSuffix(as, " above"); ok {
				as, from = q, documented[scenarios.TableSchema]
			}
			for _, f := range from {
				if rest, ok := strings.CutPrefix(f, as+"."); ok {
					documented[current] = append(documented[current], prefix+"."+rest)
				}
			}
			continue
		}
		documented[current] = append(documented[current], field)
	}
	for _, l := range lines {
		of, ok := documented[l.of]
		if !ok {
			t.Errorf("%s: %s.* is as %s, which docs/reports.md does not list", l.in, l.prefix, l.of)
		}
		for _, f := range of {
			if f != "schema" {
				documented[l.in] = append(documented[l.in], l.prefix+"."+f)
			}
		}
	}
	reports := map[string][]string{
		scenarios.TableSchema:  {"golden/table.json"},
		scenarios.HuntSchema:   {"golden/mutants.json"},
		scenarios.ShardSchema:  {"matrix", "skew", "curve", "hunt"},
		scenarios.CurveSchema:  nil,
		capacity.Schema:        nil,
		httpcheck.Schema:       nil,
		judge.Schema:           nil,
		record.Schema:          nil,
		ceiling.ArtifactSchema: nil,
	}
	// The other packages' schemas, each read from the types that write it.
	others := map[string][]string{
		capacity.Schema: capacity.SchemaFields(), httpcheck.Schema: httpcheck.SchemaFields(), judge.Schema: judge.SchemaFields(),
		record.Schema: record.SchemaFields(), ceiling.ArtifactSchema: ceiling.SchemaFields(),
	}
	if len(documented) != len(reports) {
		t.Errorf("docs/reports.md documents %d schemas, %v; the code writes %d", len(documented), slices.Sorted(maps.Keys(documented)), len(reports))
	}
	shards := tinyShards(t)
	for _, schema := range slices.Sorted(maps.Keys(reports)) {
		fields, ok := others[schema]
		if !ok {
			var err error
			if fields, err = scenarios.SchemaFields(schema); err != nil {
				t.Fatal(err)
			}
		}
		want, got := slices.Sorted(slices.Values(fields)), slices.Sorted(slices.Values(documented[schema]))
		if !slices.Equal(want, got) {
			t.Errorf("%s: docs/reports.md documents\n%v\nthe code writes\n%v", schema, got, want)
		}
		for _, file := range reports[schema] {
			raw, ok := shards[file]
			if !ok {
				var err error
				if raw, err = os.ReadFile(file); err != nil {
					t.Fatal(err)
				}
			}
			var doc any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if s, _ := doc.(map[string]any)["schema"].(string); s != schema {
				t.Errorf("%s names schema %q, want %q", file, s, schema)
			}
			for _, p := range jsonPaths(doc, "") {
				if !slices.Contains(fields, p) {
					t.Errorf("%s has field %s, which %s does not document", file, p, schema)
				}
			}
		}
	}
	if _, err := scenarios.SchemaFields("overshoot.table/v0"); err == nil {
		t.Error("an unknown schema gave no error")
	}
}

// tinyShards are a shard document of each kind, of runs of one seed of
// 1 s: a matrix whose limiter names a reference, a curve with the ideal run
// and the skew sweep's without it, and a hunt of a deployment mistake that
// is caught (a breach with a trace).
func tinyShards(t *testing.T) map[string][]byte {
	t.Helper()
	o := scenarios.DefaultOptions()
	o.Seeds, o.Duration, o.WipeAt = []uint64{1}, algos.Second, algos.Second/2
	counter := limiter.FromAlgorithm(algos.SlidingCounter)
	counter.Reference = algos.SlidingLog
	specs := []limiter.Spec{counter}
	ho := scenarios.HuntOptions()
	ho.Seeds, ho.Duration, ho.WipeAt = o.Seeds, o.Duration, o.WipeAt
	one := scenarios.Shard{Index: 1, Count: 1}
	out := map[string][]byte{}
	for kind, run := range map[string]func(io.Writer) error{
		"matrix": func(w io.Writer) error { return one.RunMatrix(w, specs, o) },
		"skew":   func(w io.Writer) error { return one.RunCurve(w, specs, o, scenarios.SkewCurve([]int64{0})) },
		"curve": func(w io.Writer) error {
			return one.RunCurve(w, specs, o, scenarios.CurveOf{Deployment: model.GetSet, Param: scenarios.ParamRTT, Values: []int64{1000}})
		},
		"hunt": func(w io.Writer) error {
			return one.Hunt(w, []scenarios.Suspect{{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Deployment: model.LocalFull}}, ho)
		},
	} {
		var b bytes.Buffer
		if err := run(&b); err != nil {
			t.Fatalf("a shard of a %s: %v", kind, err)
		}
		out[kind] = b.Bytes()
	}
	return out
}

// jsonPaths lists the paths of v's fields as SchemaFields writes them.
func jsonPaths(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			child := k
			if path != "" {
				child = path + "." + k
			}
			out = append(out, jsonPaths(e, child)...)
		}
	case []any:
		out = append(out, path)
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				out = append(out, jsonPaths(m, path+"[]")...)
			}
		}
	default:
		out = append(out, path)
	}
	return out
}
