package drift_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/drift"
)

const (
	minute = 60 * algos.Second
	hour   = 60 * minute
)

func op(method, path string) drift.Operation { return drift.Operation{Method: method, Path: path} }

// The real description: one operation in each form.
func TestDocumentedReadsTheCatalog(t *testing.T) {
	got, err := drift.DocumentedFile("testdata/api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[drift.Operation]drift.Policy{
		op("GET", "/v1/search"):     {Quota: 100, Window: minute, Burst: 100}, // x-ratelimit
		op("GET", "/v1/items/{id}"): {Quota: 600, Window: hour, Burst: 600},   // RateLimit-Policy example
		op("PUT", "/v1/items/{id}"): {Quota: 5, Window: minute, Burst: 10},    // x-ratelimit-limit, -window, -burst
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// doc is a one-operation description: GET /r with the given lines under
// the operation (indented 6) and a 200 response whose headers are hdr
// (indented 12).
func doc(opLines, hdr string) string {
	s := "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /r:\n    get:\n" + opLines +
		"      responses:\n        '200':\n          description: ok\n"
	if hdr != "" {
		s += "          headers:\n            RateLimit-Policy:\n" + hdr
	}
	return s
}

func TestDocumentedForms(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		want       drift.Policy
	}{
		{"object with burst", doc("      x-ratelimit: {limit: 10, window: 1s, burst: 20}\n", ""), drift.Policy{Quota: 10, Window: algos.Second, Burst: 20}},
		{"object, window in seconds", doc("      x-ratelimit: {limit: 10, window: 60}\n", ""), drift.Policy{Quota: 10, Window: minute, Burst: 10}},
		{"flat", doc("      x-ratelimit-limit: 3\n      x-ratelimit-window: 90s\n", ""), drift.Policy{Quota: 3, Window: 90 * algos.Second, Burst: 3}},
		{"header example, draft 7", doc("", "              schema: {type: string}\n              example: 100;w=60\n"), drift.Policy{Quota: 100, Window: minute, Burst: 100}},
		{"header example, draft 8", doc("", "              schema: {type: string}\n              example: '\"default\";q=50;w=1'\n"), drift.Policy{Quota: 50, Window: algos.Second, Burst: 50}},
		{"header examples", doc("", "              schema: {type: string}\n              examples:\n                a: {value: 7;w=10}\n"), drift.Policy{Quota: 7, Window: 10 * algos.Second, Burst: 7}},
		{"schema example", doc("", "              schema: {type: string, example: 9;w=3600}\n"), drift.Policy{Quota: 9, Window: hour, Burst: 9}},
		{"both forms agreeing", doc("      x-ratelimit: {limit: 100, window: 1m, burst: 150}\n", "              schema: {type: string}\n              example: 100;w=60\n"), drift.Policy{Quota: 100, Window: minute, Burst: 150}},
		{"JSON", `{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{"/r":{"get":{"x-ratelimit":{"limit":10,"window":"1s"},"responses":{"200":{"description":"ok"}}}}}}`, drift.Policy{Quota: 10, Window: algos.Second, Burst: 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := drift.Documented("api.yaml", []byte(c.spec))
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := got[op("GET", "/r")]; !ok || p != c.want || len(got) != 1 {
				t.Errorf("got %v, want GET /r: %v", got, c.want)
			}
		})
	}
	got, err := drift.Documented("api.yaml", []byte(doc("", "")))
	if err != nil || len(got) != 0 {
		t.Errorf("an operation that documents no limit: got %v, %v; want it left out", got, err)
	}
}

// Every malformed description and limit is an error naming its file, its
// line and, for a limit, its JSON pointer.
func TestMalformedDescriptionsAreLocated(t *testing.T) {
	for _, c := range []struct {
		name, file, spec string // spec "" reads testdata/file
		line             int
		pointer, says    string
	}{
		{"a window that is not a duration", "bad_window.yaml", "", 8, "/paths/~1v1~1search/get/x-ratelimit/window", `"a minute" is not a duration`},
		{"a policy example without w", "bad_policy.yaml", "", 21, "/paths/~1v1~1items~1{id}/get/responses/200/headers/RateLimit-Policy/example", "no window"},
		{"not OpenAPI: no info.version", "not_openapi.yaml", "", 2, "", "version must be a non-empty string"},
		{"not YAML", "bad_yaml.yaml", "", 9, "", "did not find expected"},
		{"a zero limit", "api.yaml", doc("      x-ratelimit: {limit: 0, window: 1s}\n", ""), 6, "/paths/~1r/get/x-ratelimit/limit", "must be positive"},
		{"an unknown field", "api.yaml", doc("      x-ratelimit: {limit: 1, window: 1s, brust: 2}\n", ""), 6, "/paths/~1r/get/x-ratelimit/brust", "unknown field"},
		{"no window", "api.yaml", doc("      x-ratelimit-limit: 5\n", ""), 6, "/paths/~1r/get/x-ratelimit-window", "no window"},
		{"a fractional flat burst", "api.yaml", doc("      x-ratelimit-limit: 5\n      x-ratelimit-window: 1s\n      x-ratelimit-burst: 2.5\n", ""), 8, "/paths/~1r/get/x-ratelimit-burst", "not a whole number"},
		{"both extension forms", "api.yaml", doc("      x-ratelimit: {limit: 1, window: 1s}\n      x-ratelimit-limit: 1\n", ""), 7, "/paths/~1r/get", "state the limit one way"},
		{"extension and header disagree", "api.yaml", doc("      x-ratelimit: {limit: 100, window: 1m}\n", "              schema: {type: string}\n              example: 120;w=60\n"), 13, "/paths/~1r/get/responses/200/headers/RateLimit-Policy/example", "says 120/1m but the operation's x-ratelimit says 100/1m"},
		{"two policies", "api.yaml", doc("", "              schema: {type: string}\n              example: 100;w=60, 1000;w=3600\n"), 12, "/paths/~1r/get/responses/200/headers/RateLimit-Policy/example", "more than one policy"},
		{"a policy example that is a number", "api.yaml", doc("", "              schema: {type: string}\n              example: 100\n"), 12, "/paths/~1r/get/responses/200/headers/RateLimit-Policy/example", "must be a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.spec == "" {
				_, err = drift.DocumentedFile("testdata/" + c.file)
				c.file = "testdata/" + c.file
			} else {
				_, err = drift.Documented(c.file, []byte(c.spec))
			}
			var le *drift.LocationError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a *drift.LocationError", err)
			}
			if le.File != c.file || le.Line != c.line || le.Pointer != c.pointer || !strings.Contains(le.Error(), c.says) {
				t.Errorf("got %q (file %q, line %d, pointer %q), want file %q, line %d, pointer %q, saying %q",
					le, le.File, le.Line, le.Pointer, c.file, c.line, c.pointer, c.says)
			}
		})
	}
}
