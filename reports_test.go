package overshoot_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/scenarios"
)

// The README's list of each report schema's fields is the schema the code
// writes, field for field, and every field of the golden reports is in it.
func TestReportSchemasAreDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Reports as JSON and CSV\n")
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	documented := map[string][]string{}
	var current string
	for _, field := range strings.FieldsFunc(block, func(r rune) bool { return r == ',' || r == '\n' }) {
		field = strings.TrimSpace(field)
		if schema, first, ok := strings.Cut(field, ": "); ok {
			current, field = schema, first
		}
		if field == "conditions.* (as above)" {
			for _, f := range documented[scenarios.TableSchema] {
				if strings.HasPrefix(f, "conditions.") {
					documented[current] = append(documented[current], f)
				}
			}
			continue
		}
		documented[current] = append(documented[current], field)
	}
	for schema, file := range map[string]string{scenarios.TableSchema: "golden/table.json", scenarios.HuntSchema: "golden/mutants.json"} {
		fields, err := scenarios.SchemaFields(schema)
		if err != nil {
			t.Fatal(err)
		}
		want, got := slices.Sorted(slices.Values(fields)), slices.Sorted(slices.Values(documented[schema]))
		if !slices.Equal(want, got) {
			t.Errorf("%s: the README documents\n%v\nthe code writes\n%v", schema, got, want)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
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
	if _, err := scenarios.SchemaFields("overshoot.table/v0"); err == nil {
		t.Error("an unknown schema gave no error")
	}
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
